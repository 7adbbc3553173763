/**
 * A worker of the fleet test: forever takes a random session of the PostgreSQL store, records
 * a few turns in it (each with a streamed answer, so that chunk rows move into runs), runs one
 * prompt with a request id through the agent loop (a tool call, then an answer), and lets it go. Every durable batch is logged (one line, fsynced) to LOG
 * with the lease token it was written under, so the test can check what was acknowledged.
 * Usage: fleet-worker.ts URL SCHEMA WORKER SESSIONS LOG
 */
import { appendFileSync, fsyncSync, openSync } from 'node:fs';
import pg from 'pg';
import { Agent, defineTool } from '../../../src/agent/index.js';
import { lastTurnNumber } from '../../../src/core/index.js';
import { LockedError, openSession } from '../../../src/store/index.js';
import { openPostgresStore } from '../../../src/store/postgres/index.js';
import { scriptedModel } from '../../../src/testing/index.js';
import { assistant } from '../../core/builders.js';

const [url, schema, worker, sessions, logFile] = process.argv.slice(2) as [
  string,
  string,
  string,
  string,
  string,
];
const log = openSync(logFile, 'a');
const record = (line: object): void => {
  appendFileSync(log, `${JSON.stringify(line)}\n`);
  fsyncSync(log);
};
const store = await openPostgresStore({
  connectionString: url,
  schema,
  leaseMs: 2_000,
  heartbeatMs: 500,
  retryMs: 15_000,
  maxConnections: 3,
});
const raw = new pg.Pool({ connectionString: url, max: 1 });
raw.on('error', () => {});
/** The token of the lease this worker holds on `id`, read back from the lease row. */
async function leaseToken(id: string): Promise<string> {
  const { rows } = await raw.query(
    `SELECT token, owner FROM "${schema}".leases WHERE session_id = $1`,
    [id],
  );
  const row = rows[0] as { token: string; owner: string } | undefined;
  if (row === undefined || (JSON.parse(row.owner) as { pid: number }).pid !== process.pid) {
    throw new Error(`worker ${worker} holds no lease row of ${id}`);
  }
  return row.token;
}
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const lookup = defineTool({
  name: 'lookup',
  description: 'Looks something up (takes a moment, so kills land inside it too).',
  parameters: { type: 'object', properties: {} },
  execute: async () => {
    await pause(Math.random() * 50);
    return 'found';
  },
});
/** A model that calls the tool, then answers. */
const promptModel = () =>
  scriptedModel([{ toolCalls: [{ name: 'lookup', args: {} }] }, { text: 'done' }]);
let n = 0;
for (;;) {
  const id = `s${String(Math.floor(Math.random() * Number(sessions))).padStart(2, '0')}`;
  let session: Awaited<ReturnType<typeof openSession>>;
  try {
    session = await openSession(store, id);
  } catch (error) {
    if (!LockedError.isInstance(error))
      record({ worker, id, openError: String((error as Error).message).slice(0, 200) });
    await pause(20);
    continue;
  }
  let token = '?';
  try {
    token = await leaseToken(id);
    for (let turns = 1 + Math.floor(Math.random() * 4); turns > 0; turns--) {
      const turn = lastTurnNumber(session) + 1;
      const first = session.seq;
      const mark = `${worker}-${n++}`;
      session.append('turn/start', { turn });
      session.append(
        'user/message',
        {
          id: mark,
          role: 'user',
          content: [{ type: 'text', text: mark }],
          source: { kind: 'user' },
        },
        { surfaceOp: 'append' },
      );
      // A streamed answer whose chunks land as rows in one batch and move into a chunk run with
      // the message's batch: the move runs under kills and the server's restart too.
      session.append('step/start', { turn, step: 1 });
      const chunks = [0, 1, 2].map(
        (c) =>
          session.append('assistant/chunk', {
            turn,
            step: 1,
            chunk: { type: 'text-delta', id: 't0', delta: `${mark}.${c} ` },
          }).seq,
      );
      await session.flush();
      session.append('assistant/message', assistant(`a-${mark}`, mark, [], { turn, step: 1 }), {
        surfaceOp: 'append',
        sourceEventSeqs: chunks,
      });
      session.append('step/end', { turn, step: 1 });
      session.append('turn/end', { turn, reason: { kind: 'completed' } });
      await session.flush();
      record({ worker, id, token, first, last: session.seq - 1, mark });
      await pause(Math.random() * 30);
    }
    // A prompt a client sent with a request id: logged as sent before it runs and as answered
    // after, so the test can resend every prompt whose worker died before answering.
    const requestId = `${worker}-r${n++}`;
    record({ worker, id, sent: requestId });
    const result = await new Agent({ session, model: promptModel(), tools: [lookup] }).run(
      requestId,
      { requestId },
    );
    record({ worker, id, answered: requestId, turn: result.turn, text: result.text });
    await session.close();
  } catch (error) {
    record({ worker, id, token, writeError: String((error as Error).message).slice(0, 200) });
    await session.close().catch(() => {});
  }
}
