/**
 * `palimpsest ls` reads summaries, never whole logs: it lists a session whose events would not
 * fit in the CLI's heap (before, `ls` loaded every session in full and ran out of memory), and
 * its columns are the session's stored counts.
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { SessionEvent } from '../../src/core/index.js';
import { openStore } from '../../src/store/index.js';
import { cli, tempStores } from './helpers.js';

const stores = tempStores();
afterAll(() => stores.remove());

/** A streamed turn of `chunks` text deltas of `size` characters each, with its message. */
function bigTurn(chunks: number, size: number): SessionEvent[] {
  const events: Record<string, unknown>[] = [
    { type: 'turn/start', data: { turn: 1 } },
    { type: 'step/start', data: { turn: 1, step: 1 } },
  ];
  for (let i = 0; i < chunks; i++) {
    const delta = `${i}`.padEnd(size, 'x');
    events.push({
      type: 'assistant/chunk',
      data: { turn: 1, step: 1, chunk: { type: 'text-delta', id: 't', delta } },
    });
  }
  events.push({
    type: 'assistant/message',
    data: {
      turn: 1,
      step: 1,
      finishReason: 'stop',
      usage: { inputTokens: 42, outputTokens: 7 },
      message: {
        id: 'a1',
        role: 'assistant',
        content: [{ type: 'text', text: 'short' }],
        source: { kind: 'model', provider: 'test', model: 'big' },
      },
    },
    surfaceOp: 'append',
    sourceEventSeqs: [2],
  });
  return events.map((event, seq) => ({ seq, time: 1_000 + seq, ...event }) as SessionEvent);
}

describe.each(['jsonl', 'sqlite'] as const)('palimpsest ls on a %s store', (backend) => {
  it('lists a session bigger than its heap, from its summary', async () => {
    const url = stores.urls[backend];
    const store = await openStore(url);
    await store.create({ version: 1, id: 'big', createdAt: 1_700_000_000_000 });
    const events = bigTurn(6_000, 16_000); // ~96 MB of chunk text
    for (let from = 0; from < events.length; from += 500) {
      await store.append('big', events.slice(from, from + 500), { expectedSeq: from });
    }
    await store.close();
    const listed = cli(['ls', '--json', '--store', url], {
      cwd: stores.dir,
      env: { NODE_OPTIONS: '--max-old-space-size=48' },
    });
    expect(listed.stderr).toBe('');
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.stdout)).toEqual([
      {
        id: 'big',
        createdAt: 1_700_000_000_000,
        turns: 1,
        events: events.length,
        usage: { calls: 1, tokens: { inputTokens: 42, outputTokens: 7 } },
        cost: { amount: 0, currency: 'USD', unpricedModels: ['test:big'] },
        lastActivity: 1_000 + events.length - 1,
        durationMs: 0,
        parent: null,
      },
    ]);
  }, 120_000);
});
