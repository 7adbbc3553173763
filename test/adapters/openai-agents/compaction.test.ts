/**
 * Compaction through the real SDK: a model response that carries a compaction item makes the
 * runner call `replaceHistoryWithCompaction`, which becomes one surface replace; and the SDK's
 * `OpenAIResponsesCompactionSession` decorator (`responses.compact`) runs over a
 * `PalimpsestSession`, whose log keeps every layer under the compacted history.
 */
import {
  Agent,
  type AgentInputItem,
  OpenAIProvider,
  OpenAIResponsesCompactionSession,
  Runner,
  setTracingDisabled,
} from '@openai/agents';
import OpenAI from 'openai';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { PalimpsestSession } from '../../../src/adapters/openai-agents/index.js';
import { checkInvariants } from '../../../src/core/index.js';
import { MemoryStore } from '../../../src/store/index.js';
import {
  compactionOutput,
  type ResponsesServer,
  startResponsesServer,
  textOutput,
} from './responses-server.js';

const agent = new Agent({ name: 'chat', instructions: 'Chat.', model: 'gpt-test' });
let server: ResponsesServer;
const store = new MemoryStore();

beforeAll(() => setTracingDisabled(true));
afterEach(async () => server.close());

function runner(): Runner {
  return new Runner({
    modelProvider: new OpenAIProvider({ apiKey: 'sk-test', baseURL: server.baseURL }),
  });
}

function itemTypes(items: readonly AgentInputItem[]): string[] {
  return items.map((item) => item.type ?? 'message');
}

describe('compaction', () => {
  it('a response carrying a compaction item replaces the whole surface with it', async () => {
    server = await startResponsesServer([
      [textOutput('msg_1', 'First answer.')],
      [compactionOutput('cmp_auto'), textOutput('msg_2', 'Second answer.')],
      [textOutput('msg_3', 'Third answer.')],
    ]);
    const session = await PalimpsestSession.open(store, 'server-side');
    for (const input of ['One', 'Two', 'Three']) await runner().run(agent, input, { session });

    // The SDK keeps the history from the latest compaction on; so does the surface.
    expect(itemTypes(await session.getItems())).toEqual([
      'compaction',
      'message',
      'message',
      'message',
    ]);
    const replace = session.session.events.find((event) => typeof event.surfaceOp === 'object');
    expect(replace?.data).toMatchObject({ source: { kind: 'compaction' } });
    // The first run's two items are shadowed, not gone.
    const first = session.session.events.filter(
      (event) =>
        (event.data as { item?: unknown }).item !== undefined && event.seq < (replace?.seq ?? 0),
    );
    expect(
      first.map((event) => event.seq).every((seq) => replace?.sourceEventSeqs?.includes(seq)),
    ).toBe(true);
    expect(first).toHaveLength(2);
    // The third request sent the compacted history.
    const input = server.requests[2]?.input as { type?: string }[];
    expect(input.map((item) => item.type ?? 'message')).toEqual([
      'compaction',
      'message',
      'message',
    ]);
    expect(checkInvariants(session.session.events, { requireClosed: true })).toEqual([]);
    await session.close();
  });

  it('the SDK’s responses.compact decorator runs over it, and the log keeps what it replaced', async () => {
    server = await startResponsesServer(
      [[textOutput('msg_1', 'First answer.')], [textOutput('msg_2', 'Second answer.')]],
      [compactionOutput('cmp_1')],
    );
    const underlying = await PalimpsestSession.open(store, 'decorated');
    const session = new OpenAIResponsesCompactionSession({
      client: new OpenAI({ apiKey: 'sk-test', baseURL: server.baseURL }),
      underlyingSession: underlying,
      model: 'gpt-test',
      compactionMode: 'input',
      shouldTriggerCompaction: ({ compactionCandidateItems }) =>
        compactionCandidateItems.length > 0,
    });
    await runner().run(agent, 'One', { session });
    // The decorator compacted after the turn: the history is its output alone.
    expect(server.compactRequests).toHaveLength(1);
    expect(itemTypes(await underlying.getItems())).toEqual(['compaction']);
    await runner().run(agent, 'Two', { session });
    expect(server.requests[1]?.input).toMatchObject([{ type: 'compaction' }, { role: 'user' }]);
    const logged = underlying.session.events.filter(
      (event) => (event.data as { item?: unknown }).item !== undefined,
    );
    // Everything ever added is in the log, under the replaces that shadow it.
    expect(logged.length).toBeGreaterThan((await underlying.getItems()).length);
    expect(checkInvariants(underlying.session.events, { requireClosed: true })).toEqual([]);
    await underlying.close();
  });
});
