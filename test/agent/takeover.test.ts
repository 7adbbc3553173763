/**
 * Another worker takes over a session whose worker was killed (issue 34), on every store: the
 * killed worker is a real process running the agent loop, SIGKILLed inside a tool or between
 * committing a turn and replying; the taker opens the session (repair), and the client's resend
 * of the prompt, with the request id it was first sent with, is admitted once: it resumes the
 * interrupted turn, or answers with the committed one. One API, the same on JSONL, SQLite and
 * PostgreSQL.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Agent, defineTool, type TurnResult } from '../../src/agent/index.js';
import { checkInvariants, type SessionEvent } from '../../src/core/index.js';
import { openSession, openStore } from '../../src/store/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { untilOutput } from '../store/child-output.js';
import { everyBackend } from '../store/store-urls.js';

const stores = everyBackend('takeover');

/** Runs the worker on session `id` and SIGKILLs it once it prints `marker`. */
async function killWorkerAt(url: string, id: string, mode: string, marker: string): Promise<void> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', join(import.meta.dirname, 'takeover-child.ts'), url, id, 'req-1', mode],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  await untilOutput(child, marker);
  child.kill('SIGKILL');
  await new Promise((resolve) => child.once('exit', resolve));
}

const deploy = defineTool({
  name: 'deploy',
  description: 'Deploys the site.',
  parameters: { type: 'object', properties: { target: { type: 'string' } } },
  execute: async () => 'deployed',
});

function admissions(events: readonly SessionEvent[]): number {
  return events.filter(
    (event) =>
      (event.data as { source?: { requestId?: string } } | null)?.source?.requestId === 'req-1',
  ).length;
}

/** The client's resend, made by a worker that takes the session over; then a second resend. */
async function resend(
  url: string,
  id: string,
  answers: readonly string[],
): Promise<{
  result: TurnResult;
  again: TurnResult;
  events: readonly SessionEvent[];
  prompts: string[];
}> {
  const store = await openStore(url);
  try {
    const session = await openSession(store, id);
    const model = scriptedModel(answers.map((text) => ({ text })));
    const result = await new Agent({ session, model, tools: [deploy] }).run('ship it', {
      requestId: 'req-1',
    });
    await session.close();
    // Another worker again: the resend is answered from the log alone.
    const reopened = await openSession(store, id);
    const length = reopened.seq;
    const again = await new Agent({ session: reopened, model: scriptedModel([]) }).run('ship it', {
      requestId: 'req-1',
    });
    expect(reopened.seq).toBe(length);
    const events = reopened.events;
    expect(checkInvariants(events)).toEqual([]);
    await reopened.close();
    return {
      result,
      again,
      events,
      prompts: model.calls.map((call) => JSON.stringify(call.prompt)),
    };
  } finally {
    await store.close();
  }
}

describe.each(stores)('a session taken over from a killed worker, on %s', (_, makeUrl) => {
  it('resumes the turn the worker died in when the client resends the prompt, once', async () => {
    const url = makeUrl();
    await killWorkerAt(url, 'job', 'in-tool', 'TOOL_STARTED');
    const { result, again, events, prompts } = await resend(url, 'job', [
      'The deploy may have run; I checked and it did.',
    ]);

    expect(result).toMatchObject({
      repeated: true,
      turn: 2,
      reason: { kind: 'completed' },
      text: 'The deploy may have run; I checked and it did.',
    });
    expect(prompts[0]).toContain('TOOL_OUTCOME_UNKNOWN');
    expect(again).toMatchObject({
      repeated: true,
      turn: 2,
      startSeq: result.startSeq,
      endSeq: result.endSeq,
      text: result.text,
    });
    expect(admissions(events)).toBe(1);
    const turnEnds = events.filter((event) => event.type === 'turn/end');
    expect(
      turnEnds.map((event) => (event.data as { reason: { kind: string } }).reason.kind),
    ).toEqual(['interrupted', 'completed']);
  }, 60_000);

  it('answers with the committed turn when the worker died between committing it and replying', async () => {
    const url = makeUrl();
    await killWorkerAt(url, 'job', 'answered', 'COMMITTED');
    const { result, again, events, prompts } = await resend(url, 'job', ['never asked for']);

    expect(prompts).toEqual([]);
    expect(result).toMatchObject({
      repeated: true,
      turn: 1,
      reason: { kind: 'completed' },
      text: 'Shipped.',
    });
    expect(again).toEqual(result);
    expect(admissions(events)).toBe(1);
    expect(events.filter((event) => event.type === 'turn/start')).toHaveLength(1);
  }, 60_000);
});
