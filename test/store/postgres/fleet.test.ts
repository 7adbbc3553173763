/**
 * A fleet: 8 worker processes append to 50 sessions of one PostgreSQL store for a minute, while
 * workers are SIGKILLed at random and the server is restarted once with `pg_ctl restart -m
 * immediate` (every backend killed, as a crash would). Afterwards every acknowledged batch is in
 * the log exactly once, at the seqs it was acknowledged at, every session folds and passes
 * `checkInvariants`, and no two workers ever appended under one session's lease at once. Each
 * worker also runs prompts with request ids through the agent loop; afterwards every prompt is
 * resent, and each is found in its session exactly once (resumed once if its worker died in it).
 * `PALIMPSEST_FLEET_SECONDS` sets the duration (default 60).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agent } from '../../../src/agent/index.js';
import { checkInvariants, type UserMessage } from '../../../src/core/index.js';
import { inspectSession, openSession } from '../../../src/store/index.js';
import { openPostgresStore } from '../../../src/store/postgres/index.js';
import { scriptedModel } from '../../../src/testing/index.js';
import { type PostgresServer, postgresBinaries, startPostgres } from '../../postgres/server.js';

const SECONDS = Number(process.env.PALIMPSEST_FLEET_SECONDS ?? 60);
const WORKERS = 8;
const SESSIONS = 50;
const binaries = postgresBinaries() !== undefined || process.env.PALIMPSEST_REQUIRE_PG === '1';

interface Ack {
  readonly worker: string;
  readonly id: string;
  readonly token: string;
  readonly first: number;
  readonly last: number;
  readonly mark: string;
}

interface Sent {
  readonly id: string;
  readonly sent: string;
}

interface Answered {
  readonly answered: string;
  readonly turn: number;
  readonly text: string;
}

/** Resends every prompt, one session at a time, and checks each is in its session's log once. */
async function resendAll(
  url: string,
  schema: string,
  sent: readonly Sent[],
  answered: ReadonlyMap<string, Answered>,
): Promise<{ resumed: number; fresh: number }> {
  const store = await openPostgresStore({ connectionString: url, schema });
  let resumed = 0;
  let fresh = 0;
  try {
    const bySession = new Map<string, string[]>();
    for (const { id, sent: requestId } of sent) {
      bySession.set(id, [...(bySession.get(id) ?? []), requestId]);
    }
    for (const [id, requests] of bySession) {
      const session = await openSession(store, id);
      for (const requestId of requests) {
        const before = session.seq;
        const agent = new Agent({ session, model: scriptedModel([{ text: 'resumed' }]) });
        const result = await agent.run(requestId, { requestId });
        const first = answered.get(requestId);
        if (first !== undefined) {
          expect(result).toMatchObject({ repeated: true, turn: first.turn, text: first.text });
          expect(session.seq).toBe(before);
        } else if (result.repeated === true) {
          if (session.seq > before) resumed++;
        } else fresh++;
        expect(result.reason.kind).toBe('completed');
        const admitted = session.events.filter(
          (event) =>
            (event.data as { source?: { requestId?: string } } | null)?.source?.requestId ===
            requestId,
        );
        expect(admitted, `request ${requestId} of ${id}`).toHaveLength(1);
      }
      expect(checkInvariants(session.events)).toEqual([]);
      await session.close();
    }
  } finally {
    await store.close();
  }
  return { resumed, fresh };
}

(binaries ? describe : describe.skip)('a fleet of workers on one PostgreSQL store', () => {
  let server: PostgresServer;
  const dir = mkdtempSync(join(tmpdir(), 'palimpsest-fleet-'));
  const schema = 'fleet';
  beforeAll(async () => {
    server = await startPostgres();
  });
  afterAll(() => {
    server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it(
    'loses no acknowledged batch, duplicates none, never lets two workers write one session at once, and admits every resent prompt once',
    async () => {
      // Create the schema once, so the workers only open it.
      await (await openPostgresStore({ connectionString: server.url, schema })).close();
      const children = new Map<string, ChildProcess>();
      let spawned = 0;
      let killed = 0;
      const start = (): void => {
        const worker = `w${spawned++}`;
        const child = spawn(
          process.execPath,
          [
            '--import',
            'tsx',
            join(import.meta.dirname, 'fleet-worker.ts'),
            server.url,
            schema,
            worker,
            String(SESSIONS),
            join(dir, `${worker}.log`),
          ],
          { stdio: ['ignore', 'ignore', 'inherit'] },
        );
        children.set(worker, child);
        child.once('exit', () => children.delete(worker));
      };
      for (let i = 0; i < WORKERS; i++) start();
      const ends = Date.now() + SECONDS * 1000;
      let restarted = false;
      while (Date.now() < ends) {
        await new Promise((resolve) => setTimeout(resolve, 1000 + Math.random() * 2000));
        const victims = [...children.values()];
        const victim = victims[Math.floor(Math.random() * victims.length)];
        if (victim !== undefined) {
          victim.kill('SIGKILL');
          killed++;
        }
        while (children.size < WORKERS) start();
        if (!restarted && Date.now() > ends - (SECONDS * 1000) / 2) {
          server.restartImmediate();
          restarted = true;
        }
      }
      for (const child of children.values()) child.kill('SIGKILL');
      await new Promise((resolve) => setTimeout(resolve, 500));

      const acks: Ack[] = [];
      const sent: Sent[] = [];
      const answered = new Map<string, Answered>();
      let writeErrors = 0;
      for (let i = 0; i < spawned; i++) {
        let text = '';
        try {
          text = readFileSync(join(dir, `w${i}.log`), 'utf8');
        } catch {
          continue;
        }
        for (const line of text.split('\n')) {
          if (line === '') continue;
          // A worker killed mid-line leaves a partial last line; it was never acknowledged.
          let entry: Record<string, unknown>;
          try {
            entry = JSON.parse(line) as Record<string, unknown>;
          } catch {
            continue;
          }
          if ('mark' in entry) acks.push(entry as unknown as Ack);
          else if ('writeError' in entry) writeErrors++;
          else if ('sent' in entry) sent.push(entry as unknown as Sent);
          else if ('answered' in entry)
            answered.set(String(entry.answered), entry as unknown as Answered);
        }
      }
      expect(restarted).toBe(true);
      // Not vacuous: workers were killed and batches acknowledged. How many per second is a
      // figure of the machine, not of the store; the log line below reports it.
      expect(killed).toBeGreaterThan(0);
      expect(acks.length).toBeGreaterThan(0);

      const store = await openPostgresStore({ connectionString: server.url, schema });
      try {
        const bySession = new Map<string, Ack[]>();
        for (const ack of acks) bySession.set(ack.id, [...(bySession.get(ack.id) ?? []), ack]);
        for (const [id, list] of bySession) {
          // Loaded with repair in memory: a session a killed worker left open still folds.
          const session = await inspectSession(store, id);
          const events = session.events;
          expect(checkInvariants(events)).toEqual([]);

          const marks = events
            .filter((event) => event.type === 'user/message')
            .map((event) => (event.data as unknown as UserMessage).id);
          expect(new Set(marks).size).toBe(marks.length);
          for (const ack of list) {
            const chunks = events
              .slice(ack.first, ack.last + 1)
              .filter((event) => event.type === 'assistant/chunk');
            expect(
              chunks.map(
                (chunk) => (chunk.data as unknown as { chunk: { delta: string } }).chunk.delta,
              ),
            ).toEqual([0, 1, 2].map((c) => `${ack.mark}.${c} `));
            const message = events[ack.first + 1];
            expect(message?.type).toBe('user/message');
            expect((message?.data as unknown as UserMessage | undefined)?.id).toBe(ack.mark);
          }
          // Batches in seq order: a token, once replaced by another, never comes back.
          const order = [...list].sort((a, b) => a.first - b.first);
          const seen = new Set<string>();
          let current = '';
          for (const ack of order) {
            if (ack.token === current) continue;
            expect(
              seen.has(ack.token),
              `lease ${ack.token} of ${id} resumed after another writer`,
            ).toBe(false);
            seen.add(ack.token);
            current = ack.token;
          }
        }
        // Every acknowledged turn's answer made one run (a turn that landed unacknowledged may
        // have made one more).
        const client = new pg.Client({ connectionString: server.url });
        await client.connect();
        try {
          const { rows } = await client.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM "${schema}".chunk_runs`,
          );
          expect(rows[0]?.n).toBeGreaterThanOrEqual(acks.length);
        } finally {
          await client.end();
        }
      } finally {
        await store.close();
      }
      // The clients resend every prompt, answered or not, to the session it was sent to: each
      // is admitted once, an answered one is answered again with the same turn, and one whose
      // worker died before answering is resumed (or run, if it never landed) once.
      const resent = await resendAll(server.url, schema, sent, answered);
      console.log(
        `fleet: ${sent.length} prompts with request ids, ${answered.size} answered before a kill, ${resent.resumed} resumed and ${resent.fresh} first admitted on resend`,
      );
      console.log(
        `fleet: ${spawned} workers (${killed} SIGKILLed), ${acks.length} acknowledged batches in ${SECONDS} s over ${new Set(acks.map((ack) => ack.id)).size} sessions checked, ${writeErrors} writes refused, 1 immediate server restart`,
      );
    },
    (SECONDS + 120) * 1000,
  );
});
