/**
 * The item mapping, the removals and the typed errors of `PalimpsestSession`, item by item and
 * without a model.
 */
import type { AgentInputItem } from '@openai/agents';
import { describe, expect, it } from 'vitest';
import {
  OpenAIAgentsSessionError,
  PalimpsestSession,
} from '../../../src/adapters/openai-agents/index.js';
import { itemEvent } from '../../../src/adapters/openai-agents/item-events.js';
import { checkInvariants, type JsonObject, Session } from '../../../src/core/index.js';
import { type LiveSession, MemoryStore, openSession } from '../../../src/store/index.js';
import { SAMPLES } from './samples.js';

type ItemType = Exclude<AgentInputItem['type'], 'message' | undefined>;
// Fails to compile when the SDK adds an item type the samples (and the mapping) do not cover.
const COVERED: Record<ItemType, true> = {
  function_call: true,
  function_call_result: true,
  computer_call: true,
  computer_call_result: true,
  shell_call: true,
  shell_call_output: true,
  apply_patch_call: true,
  apply_patch_call_output: true,
  program: true,
  program_output: true,
  hosted_tool_call: true,
  tool_search_call: true,
  tool_search_output: true,
  reasoning: true,
  compaction: true,
  unknown: true,
};

function inMemory(): PalimpsestSession {
  return new PalimpsestSession(Session.create({ id: 'items' }));
}

async function refusal(action: Promise<unknown>): Promise<OpenAIAgentsSessionError> {
  const error: unknown = await action.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  if (!OpenAIAgentsSessionError.isInstance(error)) throw new Error(`expected a refusal: ${error}`);
  return error;
}

describe('the item mapping', () => {
  it('has a sample of every item type of the SDK', () => {
    const sampled = new Set(SAMPLES.map(({ item }) => item.type ?? 'message'));
    for (const type of Object.keys(COVERED)) expect(sampled, type).toContain(type);
  });

  it.each(SAMPLES)(
    'a $name item becomes a $eventType event and comes back as it went in',
    async ({ item, eventType, derives }) => {
      const adapter = inMemory();
      await adapter.addItems([item]);
      const events = adapter.session.events;
      const carrier = events.find((event) => (event.data as { item?: unknown }).item !== undefined);
      expect(carrier?.type).toBe(eventType);
      expect(await adapter.getItems()).toEqual([item]);
      const [message] = adapter.session.deriveMessages();
      expect(message?.role).toBe(derives.role);
      expect(message?.content.map((block) => block.type)).toEqual(derives.blocks);
    },
  );

  it('pairs each tool result with the call its batch requested, so the log lints clean', async () => {
    const adapter = inMemory();
    await adapter.addItems(SAMPLES.map(({ item }) => item));
    expect(await adapter.getItems()).toEqual(SAMPLES.map(({ item }) => item));
    expect(checkInvariants(adapter.session.events, { requireClosed: true })).toEqual([]);
    const results = adapter.session.events.filter((event) => event.type === 'tool/result');
    expect(results).toHaveLength(5);
    for (const result of results) {
      const [cited] = result.sourceEventSeqs ?? [];
      expect(adapter.session.event(cited ?? -1)?.type).toBe('assistant/message');
    }
  });

  it('writes one closed turn per addItems call, user messages before its step', async () => {
    const adapter = inMemory();
    await adapter.addItems([{ role: 'user', content: 'Hi' }, SAMPLES[3]?.item as AgentInputItem]);
    await adapter.addItems([{ role: 'user', content: 'Again' }]);
    expect(adapter.session.events.map((event) => event.type)).toEqual([
      'turn/start',
      'user/message',
      'step/start',
      'assistant/message',
      'step/end',
      'turn/end',
      'turn/start',
      'user/message',
      'turn/end',
    ]);
  });

  it('leaves a turn open while its calls wait for results, and a new run ends it cut short', async () => {
    const adapter = inMemory();
    const call = SAMPLES[5]?.item as AgentInputItem;
    await adapter.addItems([{ role: 'user', content: 'look it up' }, call]);
    expect(adapter.session.events.at(-1)?.type).toBe('assistant/message');
    await adapter.addItems([{ role: 'user', content: 'never mind' }]);
    const ends = adapter.session.events.filter((event) => event.type === 'turn/end');
    expect(ends.map((event) => (event.data as { reason: { kind: string } }).reason.kind)).toEqual([
      'aborted',
      'completed',
    ]);
    const findings = checkInvariants(adapter.session.events, { requireClosed: true });
    expect(findings.map((finding) => finding.code)).toEqual([
      'TOOL_CALL_UNANSWERED',
      'SURFACE_TOOL_PAIRING',
    ]);
  });

  it('reads a type named like an Object member as an unknown item, not as a call', async () => {
    const adapter = inMemory();
    const odd = { type: 'constructor', callId: 'c' } as unknown as AgentInputItem;
    await adapter.addItems([odd]);
    expect(adapter.session.events.map((event) => event.type)).toEqual([
      'turn/start',
      'context/message',
      'turn/end',
    ]);
    expect(await adapter.getItems()).toEqual([odd]);
  });

  it('drops undefined members, as JSON does, and keeps a literal __proto__ key as data', async () => {
    const adapter = inMemory();
    const item = JSON.parse('{"role":"user","content":"x","__proto__":{"polluted":true}}');
    await adapter.addItems([{ role: 'user', content: 'y', providerData: undefined }, item]);
    const [first, second] = await adapter.getItems();
    expect(Object.keys(first ?? {})).toEqual(['role', 'content']);
    expect(Object.hasOwn(second ?? {}, '__proto__')).toBe(true);
    expect(({} as { polluted?: boolean }).polluted).toBeUndefined();
  });

  it('returns copies: changing what getItems gave changes nothing stored', async () => {
    const adapter = inMemory();
    await adapter.addItems([{ role: 'user', content: 'Hi' }]);
    const [item] = (await adapter.getItems()) as { content: string }[];
    (item as { content: string }).content = 'changed';
    expect(await adapter.getItems()).toEqual([{ role: 'user', content: 'Hi' }]);
  });
});

describe('removals and compaction', () => {
  it('popItem and clearSession on an empty history return nothing and write nothing', async () => {
    const adapter = inMemory();
    expect(await adapter.popItem()).toBeUndefined();
    await adapter.clearSession();
    expect(adapter.session.seq).toBe(0);
  });

  it('a pop after a pop shadows the earlier marker too, so the surface holds one marker', async () => {
    const adapter = inMemory();
    await adapter.addItems([
      { role: 'user', content: 'a' },
      { role: 'user', content: 'b' },
      { role: 'user', content: 'c' },
    ]);
    expect(await adapter.popItem()).toEqual({ role: 'user', content: 'c' });
    expect(await adapter.popItem()).toEqual({ role: 'user', content: 'b' });
    const surface = adapter.session.surface.seqs.map((seq) => adapter.session.event(seq));
    expect(surface.map((event) => event?.type)).toEqual(['user/message', 'assistant/message']);
    expect(surface[1]?.data).toMatchObject({ removed: { by: 'popItem', items: 1 } });
    // The second marker cites the first marker and the item it removed.
    expect(surface[1]?.sourceEventSeqs).toEqual([2, 5]);
    expect(adapter.session.deriveMessages().map((message) => message.content)).toEqual([
      [{ type: 'text', text: 'a' }],
    ]);
  });

  it('replaceHistoryWithCompaction puts the compaction item in place of the whole history', async () => {
    const adapter = inMemory();
    await adapter.addItems([{ role: 'user', content: 'a' }, SAMPLES[3]?.item as AgentInputItem]);
    const compaction: AgentInputItem = { type: 'compaction', encrypted_content: 'gAAAA' };
    const kept: AgentInputItem = { role: 'user', content: 'latest' };
    await adapter.replaceHistoryWithCompaction([compaction, kept]);
    expect(await adapter.getItems()).toEqual([compaction, kept]);
    const replace = adapter.session.events.find((event) => typeof event.surfaceOp === 'object');
    expect(replace?.type).toBe('user/message');
    expect(replace?.sourceEventSeqs).toEqual(expect.arrayContaining([1, 3]));
    expect(adapter.session.events.map((event) => event.type)).toContain('compaction/end');
    expect(checkInvariants(adapter.session.events, { requireClosed: true })).toEqual([]);
  });
});

describe('typed errors', () => {
  it('refuses a value that is not an item, naming its index, and writes nothing', async () => {
    const adapter = inMemory();
    for (const bad of [null, 'hello', { content: 'no role or type' }]) {
      const error = await refusal(
        adapter.addItems([{ role: 'user', content: 'ok' }, bad as unknown as AgentInputItem]),
      );
      expect(error.code).toBe('INVALID_ITEM');
      expect(error.index).toBe(1);
    }
    expect(adapter.session.seq).toBe(0);
  });

  it('refuses binary data and other values JSON cannot carry', async () => {
    const adapter = inMemory();
    const image = { type: 'input_image', image: new Uint8Array([1, 2]) };
    const item = { role: 'user', content: [image] } as unknown as AgentInputItem;
    expect((await refusal(adapter.addItems([item]))).code).toBe('NON_JSON_ITEM');
    const nan = { type: 'function_call', callId: 'c', name: 'f', arguments: '{}', n: Number.NaN };
    const error = await refusal(adapter.addItems([nan as unknown as AgentInputItem]));
    expect(error.code).toBe('NON_JSON_ITEM');
    expect(adapter.session.seq).toBe(0);
  });

  it('refuses a limit that is not a non-negative integer, and answers 0 with nothing', async () => {
    const adapter = inMemory();
    await adapter.addItems([{ role: 'user', content: 'a' }]);
    for (const limit of [-1, 1.5, Number.NaN]) {
      expect((await refusal(adapter.getItems(limit))).code).toBe('INVALID_LIMIT');
    }
    expect(await adapter.getItems(0)).toEqual([]);
    expect(await adapter.getItems(5)).toEqual([{ role: 'user', content: 'a' }]);
  });

  it('refuses a compaction replacement that does not start with a compaction item', async () => {
    const adapter = inMemory();
    const error = await refusal(
      adapter.replaceHistoryWithCompaction([{ role: 'user', content: 'not a compaction' }]),
    );
    expect(error.code).toBe('INVALID_COMPACTION');
    expect(adapter.session.seq).toBe(0);
  });

  it('refuses to read a surface holding events it did not write', async () => {
    const session = Session.create({ id: 'mixed' });
    session.append(
      'user/message',
      { id: 'u1', role: 'user', content: [{ type: 'text', text: 'hi' }], source: { kind: 'user' } },
      { surfaceOp: 'append' },
    );
    const error = await refusal(new PalimpsestSession(session).getItems());
    expect(error.code).toBe('FOREIGN_SURFACE_EVENT');
  });
});

describe('durability', () => {
  it('addItems resolves once the store holds the batch', async () => {
    const store = new MemoryStore();
    const adapter = await PalimpsestSession.open(store, 'durable');
    expect(adapter.session.header.metadata).toEqual({ writer: 'palimpsest/openai-agents' });
    await adapter.addItems([{ role: 'user', content: 'a' }]);
    // The group-commit window is 50 ms; without the barrier the store would hold nothing yet.
    expect((await store.load('durable')).events).toHaveLength(adapter.session.seq);
    await adapter.popItem();
    expect((await store.load('durable')).events).toHaveLength(adapter.session.seq);
    await adapter.close();
    await store.close();
  });
});

describe('after a crash', () => {
  it('a turn a crash left open is repaired on open, and its closers are not items', async () => {
    const store = new MemoryStore();
    // What a crash in the middle of a batch written event by event leaves: an open step whose
    // call has no result.
    const crashed = await openSession(store, 'crashed');
    const call = SAMPLES[5]?.item as AgentInputItem;
    const event = itemEvent(call as unknown as JsonObject, { turn: 1, step: 1, fallbackId: 'c' });
    if (event.type !== 'assistant/message') throw new Error('expected an assistant message');
    crashed.append('turn/start', { turn: 1 });
    crashed.append('step/start', { turn: 1, step: 1 });
    crashed.append('assistant/message', event.data, { surfaceOp: 'append' });
    await crashed.close();

    const adapter = await PalimpsestSession.open(store, 'crashed');
    expect((adapter.session as LiveSession).openReport.repairedEvents).toBe(3);
    expect(await adapter.getItems()).toEqual([call]);
    expect(checkInvariants(adapter.session.events, { requireClosed: true })).toEqual([]);
    await adapter.close();
    await store.close();
  });
});
