/**
 * Parallel function calls under the real `@openai/agents` runner, against the local Responses
 * API server: a model response holding several `function_call` items becomes one assistant
 * message with a tool-call block per call, followed by the results, so `palimpsest verify`
 * accepts the log, the OpenAI and Anthropic exports pair every call with its result, and the
 * history the session gives back lets the next run go on. The same holds when one of the calls
 * is a handoff, and when a call waits for approval and the run resumes from its serialized state.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  Agent,
  type AgentInputItem,
  MemorySession,
  OpenAIProvider,
  Runner,
  RunState,
  type Session,
  setTracingDisabled,
  tool,
} from '@openai/agents';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { PalimpsestSession } from '../../../src/adapters/openai-agents/index.js';
import {
  checkInvariants,
  endsInsideTurn,
  type Message,
  Session as PalimpsestCore,
} from '../../../src/core/index.js';
import { openStore, type SessionStore } from '../../../src/store/index.js';
import { expectCliAccepts } from './provider-shape.js';
import {
  callOutput,
  type ResponsesServer,
  startResponsesServer,
  textOutput,
  type WireOutputItem,
} from './responses-server.js';

const weather = tool({
  name: 'weather',
  description: 'The weather in a city.',
  parameters: z.object({ city: z.string() }),
  execute: async ({ city }) => `${city}: sunny`,
});
const forecaster = new Agent({
  name: 'forecaster',
  instructions: 'Answer with the weather.',
  tools: [weather],
  model: 'gpt-test',
});

/** Two runs: the first asks for two cities' weather at once, the second just answers. */
const PARALLEL: readonly (readonly WireOutputItem[])[] = [
  [
    callOutput('call_paris', 'weather', { city: 'Paris' }),
    callOutput('call_rome', 'weather', { city: 'Rome' }),
  ],
  [textOutput('msg_1', 'Sunny in both.')],
  [textOutput('msg_2', 'You are welcome.')],
];

let server: ResponsesServer;
let directory: string;
let store: SessionStore;

beforeAll(() => setTracingDisabled(true));
beforeEach(async () => {
  directory = mkdtempSync(join(tmpdir(), 'palimpsest-oai-parallel-'));
  store = await openStore(`jsonl:${directory}`);
});
afterEach(async () => {
  await server?.close();
  await store.close();
  rmSync(directory, { recursive: true, force: true });
});

function runner(): Runner {
  return new Runner({
    modelProvider: new OpenAIProvider({ apiKey: 'sk-test', baseURL: server.baseURL }),
  });
}

/** One run to its end, streamed or not; the run's result. */
async function runOnce(
  agent: Agent,
  input: string | RunState<unknown, Agent>,
  session: Session,
  stream: boolean,
) {
  if (!stream) return runner().run(agent, input, { session });
  const result = await runner().run(agent, input, { session, stream: true });
  for await (const _event of result) {
    // Drained: the run persists once the stream is read to its end.
  }
  await result.completed;
  return result;
}

/** The derived messages that request tool calls, as the ids of their calls. */
function callMessages(messages: readonly Message[]): string[][] {
  return messages.flatMap((message) =>
    message.role === 'assistant' && message.content.some((block) => block.type === 'tool-call')
      ? [message.content.flatMap((block) => (block.type === 'tool-call' ? [block.id] : []))]
      : [],
  );
}

/** The call ids the tool messages right after the message requesting `first` answer. */
function answersAfter(messages: readonly Message[], first: string): string[] {
  const at = messages.findIndex(
    (message) =>
      message.role === 'assistant' &&
      message.content.some((block) => block.type === 'tool-call' && block.id === first),
  );
  const answers: string[] = [];
  for (const message of messages.slice(at + 1)) {
    if (message.role !== 'tool') break;
    answers.push(message.content[0].toolCallId);
  }
  return answers;
}

function types(items: readonly AgentInputItem[]): string[] {
  return items.map((item) => ('role' in item ? `${item.role} message` : item.type));
}

describe.each([
  ['non-streaming', false],
  ['streaming', true],
])('a %s model response with two function calls', (_mode, stream) => {
  it('becomes one assistant message holding both calls, each answered, in a log verify and the provider exports accept', async () => {
    server = await startResponsesServer(PARALLEL);
    const session = await PalimpsestSession.open(store, 'parallel');
    const first = await runOnce(forecaster, 'Weather in Paris and Rome?', session, stream);
    expect(first.finalOutput).toBe('Sunny in both.');

    const messages = session.session.deriveMessages();
    expect(callMessages(messages)).toEqual([['call_paris', 'call_rome']]);
    expect(answersAfter(messages, 'call_paris')).toEqual(['call_paris', 'call_rome']);
    // Both results cite the one assistant message that requested them.
    const events = session.session.events;
    const request = events.find((event) => event.type === 'assistant/message');
    const results = events.filter((event) => event.type === 'tool/result');
    expect(results.map((event) => event.sourceEventSeqs)).toEqual([[request?.seq], [request?.seq]]);
    expect(checkInvariants(events, { requireClosed: true })).toEqual([]);

    // The history given back to the SDK is the items it persisted, and the next run goes on.
    expect(types(await session.getItems())).toEqual([
      'user message',
      'function_call',
      'function_call',
      'function_call_result',
      'function_call_result',
      'assistant message',
    ]);
    const second = await runOnce(forecaster, 'Thanks!', session, stream);
    expect(second.finalOutput).toBe('You are welcome.');
    const sent = server.requests[2]?.input as { type?: string; call_id?: string }[];
    expect(sent.map((item) => item.type ?? 'message')).toEqual([
      'message',
      'function_call',
      'function_call',
      'function_call_output',
      'function_call_output',
      'message',
      'message',
    ]);
    expect(checkInvariants(session.session.events, { requireClosed: true })).toEqual([]);
    await session.close();

    const { openai, anthropic } = expectCliAccepts(directory, 'parallel');
    expect(openai.filter((message) => message.tool_calls !== undefined)).toHaveLength(1);
    expect(openai.find((message) => message.tool_calls !== undefined)?.tool_calls).toHaveLength(2);
    expect(anthropic.map((message) => message.role)).toEqual([
      'user',
      'assistant',
      'user',
      'assistant',
      'user',
      'assistant',
    ]);
  });

  it('ends with the same items as the SDK’s MemorySession on the same run', async () => {
    server = await startResponsesServer(PARALLEL);
    const memory = new MemorySession();
    await runOnce(forecaster, 'Weather in Paris and Rome?', memory, stream);
    await server.close();
    server = await startResponsesServer(PARALLEL);
    const session = await PalimpsestSession.open(store, 'parallel');
    await runOnce(forecaster, 'Weather in Paris and Rome?', session, stream);
    expect(await session.getItems()).toEqual(await memory.getItems());
    await session.close();
    // A reopened session gives the same items back.
    const again = await PalimpsestSession.open(store, 'parallel');
    expect(await again.getItems()).toEqual(await memory.getItems());
    await again.close();
  });
});

describe('a handoff requested beside a tool call', () => {
  const billing = new Agent({
    name: 'billing',
    instructions: 'Handle billing.',
    tools: [weather],
    model: 'gpt-test',
  });
  const triage = new Agent({
    name: 'triage',
    instructions: 'Route the request.',
    tools: [weather],
    handoffs: [billing],
    model: 'gpt-test',
  });

  it('records the tool call and the handoff as one message with both answered, and the next run goes on with the new agent', async () => {
    server = await startResponsesServer([
      [
        callOutput('call_paris', 'weather', { city: 'Paris' }),
        callOutput('call_handoff', 'transfer_to_billing', {}),
      ],
      [textOutput('msg_1', 'Billing here; Paris is sunny.')],
      [textOutput('msg_2', 'Your invoice is paid.')],
    ]);
    const session = await PalimpsestSession.open(store, 'handoff');
    const first = await runOnce(triage, 'Weather, then my invoice.', session, false);
    expect(first.lastAgent?.name).toBe('billing');
    const messages = session.session.deriveMessages();
    expect(callMessages(messages)).toEqual([['call_paris', 'call_handoff']]);
    expect(answersAfter(messages, 'call_paris')).toEqual(['call_paris', 'call_handoff']);
    expect(checkInvariants(session.session.events, { requireClosed: true })).toEqual([]);

    const second = await runOnce(billing, 'Is it paid?', session, false);
    expect(second.finalOutput).toBe('Your invoice is paid.');
    expect(server.requests[2]?.input).toHaveLength(7);
    await session.close();
    expectCliAccepts(directory, 'handoff');
  });
});

describe('one of two parallel calls waiting for approval', () => {
  const guarded = tool({
    name: 'book',
    description: 'Books a table, once a person approves.',
    parameters: z.object({ city: z.string() }),
    needsApproval: true,
    execute: async ({ city }) => `booked in ${city}`,
  });
  const concierge = new Agent({
    name: 'concierge',
    instructions: 'Check the weather and book.',
    tools: [weather, guarded],
    model: 'gpt-test',
  });
  const script: readonly (readonly WireOutputItem[])[] = [
    [
      callOutput('call_weather', 'weather', { city: 'Rome' }),
      callOutput('call_book', 'book', { city: 'Rome' }),
    ],
    [textOutput('msg_1', 'Done.')],
    [textOutput('msg_2', 'Enjoy Rome.')],
  ];

  describe.each([
    ['approved', true],
    ['rejected', false],
  ])('and %s', (_decision, approve) => {
    it('keeps the calls in one message while the run waits, pairs both once it resumes from its serialized state, and the next run goes on', async () => {
      server = await startResponsesServer(script);
      const session = await PalimpsestSession.open(store, 'approval');
      const waiting = await runOnce(concierge, 'Weather in Rome, and book.', session, false);
      expect(waiting.interruptions.map((item) => item.name)).toEqual(['book']);
      // While the run waits, the log holds both calls in one message and the one result.
      const held = session.session.deriveMessages();
      expect(callMessages(held)).toEqual([['call_weather', 'call_book']]);
      expect(answersAfter(held, 'call_weather')).toEqual(['call_weather']);
      expect(endsInsideTurn(session.session)).toBe(true);

      // The state travels as a string (to a person, a queue, a database) and comes back.
      const state = await RunState.fromString(concierge, waiting.state.toString());
      for (const interruption of state.getInterruptions()) {
        if (approve) state.approve(interruption);
        else state.reject(interruption);
      }
      const resumed = await runOnce(concierge, state, session, false);
      expect(resumed.finalOutput).toBe('Done.');
      const messages = session.session.deriveMessages();
      expect(callMessages(messages)).toEqual([['call_weather', 'call_book']]);
      expect(answersAfter(messages, 'call_weather')).toEqual(['call_weather', 'call_book']);
      expect(checkInvariants(session.session.events, { requireClosed: true })).toEqual([]);

      const next = await runOnce(concierge, 'Thanks!', session, false);
      expect(next.finalOutput).toBe('Enjoy Rome.');
      expect(server.requests[2]?.input).toHaveLength(7);
      await session.close();
      expectCliAccepts(directory, 'approval');
    });
  });
});

describe('parallel calls added by hand', () => {
  const call = (callId: string): AgentInputItem => ({
    type: 'function_call',
    id: `fc_${callId}`,
    callId,
    name: 'weather',
    arguments: '{}',
    status: 'completed',
  });

  it('removes the last call and keeps the others in one message on the surface', async () => {
    const session = new PalimpsestSession(PalimpsestCore.create({ id: 'pop' }));
    const items = [{ role: 'user', content: 'Go' } as const, call('a'), call('b'), call('c')];
    await session.addItems(items);
    expect(await session.popItem()).toEqual(call('c'));
    expect(await session.getItems()).toEqual(items.slice(0, 3));
    expect(callMessages(session.session.deriveMessages())).toEqual([['a', 'b']]);
    expect(await session.popItem()).toEqual(call('b'));
    expect(await session.popItem()).toEqual(call('a'));
    expect(await session.getItems()).toEqual(items.slice(0, 1));
    expect(callMessages(session.session.deriveMessages())).toEqual([]);
  });

  it('joins calls added by later addItems calls to the message of the calls still waiting', async () => {
    const session = new PalimpsestSession(PalimpsestCore.create({ id: 'split' }));
    const result = (callId: string): AgentInputItem => ({
      type: 'function_call_result',
      callId,
      name: 'weather',
      status: 'completed',
      output: `${callId}: sunny`,
    });
    const items = [{ role: 'user', content: 'Go' } as const, call('a'), call('b'), call('c')];
    // A caller persisting a response's calls one by one, then the results.
    await session.addItems(items.slice(0, 2));
    await session.addItems([call('b')]);
    await session.addItems([call('c')]);
    await session.addItems([result('a'), result('b'), result('c')]);
    expect(await session.getItems()).toEqual([...items, result('a'), result('b'), result('c')]);
    const messages = session.session.deriveMessages();
    expect(callMessages(messages)).toEqual([['a', 'b', 'c']]);
    expect(answersAfter(messages, 'a')).toEqual(['a', 'b', 'c']);
    expect(checkInvariants(session.session.events, { requireClosed: true })).toEqual([]);
    // The last of them pops as from a message that held them from the start.
    await session.popItem();
    await session.popItem();
    await session.popItem();
    expect(await session.popItem()).toEqual(call('c'));
    expect(callMessages(session.session.deriveMessages())).toEqual([['a', 'b']]);
  });
});
