/**
 * `PalimpsestSession` under the real `@openai/agents` runner, which talks to a local server
 * speaking the Responses API (streaming and not): what the runner persists lands in the log, the
 * next turn's request carries it back, a reopened store (and a fresh process) reads the same
 * items, the SDK's own `MemorySession` ends with the same items on the same run, and removals
 * are replaces that `palimpsest verify` and `show` accept.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  Agent,
  type AgentInputItem,
  MemorySession,
  OpenAIProvider,
  Runner,
  type Session,
  setTracingDisabled,
  tool,
} from '@openai/agents';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { PalimpsestSession } from '../../../src/adapters/openai-agents/index.js';
import { checkInvariants, endsInsideTurn } from '../../../src/core/index.js';
import { type LiveSession, openStore, type SessionStore } from '../../../src/store/index.js';
import { cli } from '../../cli/helpers.js';
import {
  callOutput,
  type ResponsesServer,
  startResponsesServer,
  textOutput,
  type WireOutputItem,
} from './responses-server.js';

/** Two runs: the first calls the `add` tool once and answers, the second just answers. */
const SCRIPT: readonly (readonly WireOutputItem[])[] = [
  [callOutput('call_1', 'add', { a: 2, b: 3 })],
  [textOutput('msg_1', 'The sum is 5.')],
  [textOutput('msg_2', 'You are welcome.')],
];
const INPUTS = ['What is 2 + 3?', 'Thanks!'];

const add = tool({
  name: 'add',
  description: 'Adds two numbers.',
  parameters: z.object({ a: z.number(), b: z.number() }),
  execute: async ({ a, b }) => String(a + b),
});
const agent = new Agent({
  name: 'calculator',
  instructions: 'Add.',
  tools: [add],
  model: 'gpt-test',
});

let server: ResponsesServer;
let directory: string;
let store: SessionStore;

beforeAll(() => setTracingDisabled(true));
beforeEach(async () => {
  directory = mkdtempSync(join(tmpdir(), 'palimpsest-oai-'));
  store = await openStore(`jsonl:${directory}`);
});
afterEach(async () => {
  await server?.close();
  await store.close();
  rmSync(directory, { recursive: true, force: true });
});

async function converse(session: Session, stream: boolean): Promise<string[]> {
  server = await startResponsesServer(SCRIPT);
  return runInputs(session, stream, INPUTS);
}

async function runInputs(session: Session, stream: boolean, inputs: readonly string[]) {
  const runner = new Runner({
    modelProvider: new OpenAIProvider({ apiKey: 'sk-test', baseURL: server.baseURL }),
  });
  const answers: string[] = [];
  for (const input of inputs) {
    if (stream) {
      const result = await runner.run(agent, input, { session, stream: true });
      for await (const _event of result) {
        // Drained: the run persists once the stream is read to its end.
      }
      await result.completed;
      answers.push(String(result.finalOutput));
    } else {
      const result = await runner.run(agent, input, { session });
      answers.push(String(result.finalOutput));
    }
  }
  return answers;
}

function types(items: readonly AgentInputItem[]): string[] {
  return items.map((item) => ('role' in item ? `${item.role} message` : item.type));
}

describe.each([
  ['non-streaming', false],
  ['streaming', true],
])('a %s run with a function tool', (_mode, stream) => {
  it('persists every item, and the next request sends them back to the model', async () => {
    const session = await PalimpsestSession.open(store, 'chat');
    expect(await converse(session, stream)).toEqual(['The sum is 5.', 'You are welcome.']);
    const items = await session.getItems();
    expect(types(items)).toEqual([
      'user message',
      'function_call',
      'function_call_result',
      'assistant message',
      'user message',
      'assistant message',
    ]);
    // The third request is the second run's: the whole first run came from the session.
    const input = server.requests[2]?.input as { type?: string; role?: string }[];
    expect(input.map((item) => item.type ?? `${item.role} message`)).toEqual([
      'user message',
      'function_call',
      'function_call_output',
      'message',
      'user message',
    ]);
    // One turn of the log per addItems call, each closed, the tool result citing its call.
    expect(checkInvariants(session.session.events, { requireClosed: true })).toEqual([]);
    const result = session.session.events.find((event) => event.type === 'tool/result');
    const call = session.session.events.find((event) => event.seq === result?.sourceEventSeqs?.[0]);
    expect(call?.type).toBe('assistant/message');
    await session.close();
  });

  it('ends with the same items as the SDK’s MemorySession on the same run', async () => {
    const memory = new MemorySession();
    await converse(memory, stream);
    await server.close();
    const session = await PalimpsestSession.open(store, 'chat');
    await converse(session, stream);
    expect(await session.getItems()).toEqual(await memory.getItems());
    expect(await session.getItems(2)).toEqual(await memory.getItems(2));
    await session.close();
  });
});

describe('a run interrupted for tool approval', () => {
  const guarded = tool({
    name: 'add',
    description: 'Adds two numbers, once a person approves.',
    parameters: z.object({ a: z.number(), b: z.number() }),
    needsApproval: true,
    execute: async ({ a, b }) => String(a + b),
  });
  const careful = new Agent({
    name: 'careful',
    instructions: 'Add.',
    tools: [guarded],
    model: 'gpt-test',
  });

  async function approveAndResume(session: Session): Promise<string> {
    const runner = new Runner({
      modelProvider: new OpenAIProvider({ apiKey: 'sk-test', baseURL: server.baseURL }),
    });
    const waiting = await runner.run(careful, INPUTS[0] as string, { session });
    expect(waiting.interruptions).toHaveLength(1);
    for (const interruption of waiting.interruptions) waiting.state.approve(interruption);
    const resumed = await runner.run(careful, waiting.state, { session });
    return String(resumed.finalOutput);
  }

  it('keeps its turn open while the call waits, and pairs the call with its later result', async () => {
    server = await startResponsesServer(SCRIPT);
    const memory = new MemorySession();
    expect(await approveAndResume(memory)).toBe('The sum is 5.');
    await server.close();

    server = await startResponsesServer(SCRIPT);
    const session = await PalimpsestSession.open(store, 'approval');
    let openWhileWaiting: boolean | undefined;
    const addItems = session.addItems.bind(session);
    // The runner persists the call, then (after the approval) its result, then the answer.
    session.addItems = async (items) => {
      if (items[0]?.type === 'function_call_result') {
        openWhileWaiting = endsInsideTurn(session.session);
      }
      return addItems(items);
    };
    expect(await approveAndResume(session)).toBe('The sum is 5.');
    expect(openWhileWaiting).toBe(true);
    expect(await session.getItems()).toEqual(await memory.getItems());
    expect(checkInvariants(session.session.events, { requireClosed: true })).toEqual([]);
    await session.close();
  });
});

describe('persistence', () => {
  it('a reopened store and a fresh process read back the items, and the conversation goes on', async () => {
    const first = await PalimpsestSession.open(store, 'chat');
    server = await startResponsesServer(SCRIPT);
    await runInputs(first, false, INPUTS.slice(0, 1));
    const written = await first.getItems();
    await first.close();
    await store.close();

    const child = execFileSync(
      process.execPath,
      ['--import', 'tsx', join(import.meta.dirname, 'items-child.ts'), directory, 'chat'],
      { encoding: 'utf8' },
    );
    expect(JSON.parse(child)).toEqual(written);

    store = await openStore(`jsonl:${directory}`);
    const again = await PalimpsestSession.open(store, 'chat');
    expect((again.session as LiveSession).openReport).toMatchObject({
      created: false,
      repairedEvents: 0,
    });
    expect(await again.getItems()).toEqual(written);
    expect(await runInputs(again, false, INPUTS.slice(1))).toEqual(['You are welcome.']);
    expect(server.requests[2]?.input).toHaveLength(written.length + 1);
    await again.close();
  });
});

describe('removals', () => {
  it('popItem and clearSession shadow items on the surface, and the raw log keeps all of them', async () => {
    const session = await PalimpsestSession.open(store, 'chat');
    await converse(session, false);
    const before = await session.getItems();
    const eventsBefore = session.session.seq;

    const popped = await session.popItem();
    expect(popped).toEqual(before.at(-1));
    expect(await session.getItems()).toEqual(before.slice(0, -1));
    await session.clearSession();
    expect(await session.getItems()).toEqual([]);
    expect(session.session.deriveMessages()).toEqual([]);
    // Two replaces appended, nothing taken away: every item is still in the log.
    expect(session.session.seq).toBe(eventsBefore + 2);
    const logged = session.session.events.flatMap((event) => {
      const item = (event.data as { item?: unknown }).item;
      return item === undefined ? [] : [item];
    });
    expect(logged).toEqual(before);
    await session.close();

    const raw = readFileSync(join(directory, 'chat.jsonl'), 'utf8');
    for (const item of before) expect(raw).toContain(JSON.stringify(item));

    const verify = cli(['verify', 'chat', '--store', `jsonl:${directory}`]);
    expect(verify.stdout + verify.stderr).toMatch(/chat\s+\d+\s+ok/);
    expect(verify.code).toBe(0);
    const show = cli(['show', 'chat', '--store', `jsonl:${directory}`]);
    expect(show.code).toBe(0);
    expect(show.stdout).toContain('The sum is 5.');

    // A conversation after a clear starts from nothing, and is recorded after the replaces.
    const fresh = await PalimpsestSession.open(store, 'chat');
    await server.close();
    server = await startResponsesServer([[textOutput('msg_3', 'Hello again.')]]);
    await runInputs(fresh, false, ['Hello?']);
    expect(server.requests[0]?.input).toEqual([{ role: 'user', content: 'Hello?' }]);
    expect(types(await fresh.getItems())).toEqual(['user message', 'assistant message']);
    await fresh.close();
  });
});
