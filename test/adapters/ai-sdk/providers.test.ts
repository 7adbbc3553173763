/**
 * The recording middleware on every first-party provider the AI SDK's users start from, each
 * through its real provider package against a loopback server replaying the SDK's own
 * recordings of that provider's streams (`test/fixtures/ai-sdk/`). For each: the multi-step tool
 * loop sends what the SDK sends alone, the log passes `verify`, every step's request rebuilt from
 * the log goes on the wire as the SDK sent it, and `toModelMessages(session)` continues the
 * session with what the provider saw (item ids, encrypted reasoning, thinking signatures)
 * exactly as the SDK's own history would.
 */
import { createAnthropic } from '@ai-sdk/anthropic';
import { createDeepSeek } from '@ai-sdk/deepseek';
import { createGoogleGenerativeAI } from '@ai-sdk/google';
import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import type { LanguageModelV3, SharedV3ProviderOptions } from '@ai-sdk/provider';
import { type ModelMessage, stepCountIs, streamText, tool, wrapLanguageModel } from 'ai';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  replayModel,
  sessionMiddleware,
  toModelMessages,
} from '../../../src/adapters/ai-sdk/index.js';
import { checkRequestDigests, rebuildRequest } from '../../../src/agent/index.js';
import { Session } from '../../../src/core/index.js';
import { sdkRecording } from '../../agent/ai-sdk-recordings.js';
import { expectValidLog } from '../../agent/helpers.js';
import type { WireFixture } from '../../agent/wire-server.js';
import { useWireServer } from '../../agent/wire-server.js';

const server = useWireServer();
const baseURL = () => server.baseURL;
const apiKey = 'test-key';

/** The tools the recorded runs call. */
const tools = {
  calculator: tool({
    description: 'Adds or multiplies two numbers.',
    inputSchema: z.object({ a: z.number(), b: z.number(), op: z.enum(['add', 'multiply']) }),
    execute: async ({ a, b, op }) => (op === 'add' ? a + b : a * b),
  }),
  weather: tool({
    description: 'The weather at a location.',
    inputSchema: z.object({ location: z.string() }),
    execute: async ({ location }) => ({ location, temperature: 18, condition: 'foggy' }),
  }),
  updateIssueList: tool({
    description: 'Refreshes the list of open issues.',
    inputSchema: z.object({}),
    execute: async () => 'The list holds 3 open issues.',
  }),
};

interface ProviderCase {
  readonly name: string;
  readonly model: () => LanguageModelV3;
  /** The responses of the run, one per step. */
  readonly steps: readonly WireFixture[];
  readonly providerOptions?: SharedV3ProviderOptions;
  /** What the continuation's request must carry of the earlier steps, as JSON text. */
  readonly carries?: string;
}

const openaiResponses = sdkRecording('openai/openai-reasoning-encrypted-content.1.chunks.txt');
const chat = (name: string) => sdkRecording(name, { done: true });

const cases: readonly ProviderCase[] = [
  {
    name: 'openai(id), the Responses API, by default (store: true)',
    model: () => createOpenAI({ baseURL: baseURL(), apiKey })('gpt-5.1-codex-max'),
    steps: openaiResponses,
    carries: '"type":"item_reference"',
  },
  {
    name: 'openai(id), the Responses API, stateless with encrypted reasoning',
    model: () => createOpenAI({ baseURL: baseURL(), apiKey })('gpt-5.1-codex-max'),
    steps: openaiResponses,
    providerOptions: { openai: { store: false, include: ['reasoning.encrypted_content'] } },
    carries: '"encrypted_content":"gAAAAA',
  },
  {
    name: 'openai.chat(id), chat completions',
    model: () => createOpenAI({ baseURL: baseURL(), apiKey }).chat('gpt-4o-mini'),
    steps: [
      ...chat('openai-compatible/xai-tool-call.chunks.txt'),
      ...chat('openai/openai-text.chunks.txt'),
    ],
    carries: '"tool_call_id"',
  },
  {
    name: 'anthropic(id), tool use then thinking with a signature',
    model: () => createAnthropic({ baseURL: baseURL(), apiKey })('claude-sonnet-4-5'),
    steps: [
      ...sdkRecording('anthropic/anthropic-tool-no-args.chunks.txt'),
      ...sdkRecording('anthropic/anthropic-clear-thinking.1.chunks.txt'),
    ],
    carries: '"signature":"',
  },
  {
    name: 'deepseek(id), a tool call then reasoning',
    model: () => createDeepSeek({ baseURL: baseURL(), apiKey })('deepseek-reasoner'),
    steps: [
      ...chat('deepseek/deepseek-tool-call.chunks.txt'),
      ...chat('deepseek/deepseek-reasoning.chunks.txt'),
    ],
    carries: '"tool_call_id"',
  },
  {
    name: 'google(id), a function call with its thought signature, then text',
    // Gemini's function calls carry no id: the SDK makes one up, so each run counts from one.
    model: () => {
      let calls = 0;
      const generateId = () => `call-${++calls}`;
      return createGoogleGenerativeAI({ baseURL: baseURL(), apiKey, generateId })(
        'gemini-3-pro-preview',
      );
    },
    steps: [
      ...sdkRecording('google/google-tool-call-gemini3.chunks.txt'),
      ...sdkRecording('google/google-text.chunks.txt'),
    ],
    carries: '"thoughtSignature":"',
  },
  {
    name: 'openai-compatible (xAI), reasoning and a tool call',
    model: () =>
      createOpenAICompatible({ name: 'xai', baseURL: baseURL(), apiKey, includeUsage: true })(
        'grok-3-mini',
      ),
    steps: [
      ...chat('openai-compatible/xai-tool-call.chunks.txt'),
      ...chat('openai-compatible/xai-text.chunks.txt'),
    ],
    carries: '"tool_call_id"',
  },
];

const prompt = 'Use the tools to answer.';

/** The request bodies the server received from `from` on. */
const bodies = (from: number) => server.requests.slice(from).map((request) => request.body);

describe.each(cases)('sessionMiddleware on $name', (provider) => {
  const replay = () => server.enqueue(...provider.steps.map((fixture) => ({ fixture })));

  /** The recorded run through `streamText` on `model`; its text and response messages. */
  async function run(on: LanguageModelV3, messages?: ModelMessage[]) {
    const result = streamText({
      model: on,
      ...(messages === undefined ? { prompt } : { messages }),
      tools,
      ...(provider.providerOptions === undefined
        ? {}
        : { providerOptions: provider.providerOptions }),
      stopWhen: stepCountIs(provider.steps.length + 1),
    });
    await result.consumeStream();
    return { text: await result.text, messages: (await result.response).messages };
  }

  const recorded = (session: Session) =>
    wrapLanguageModel({ model: provider.model(), middleware: sessionMiddleware(session) });

  it('records the run, sending what the SDK sends alone, and rebuilds every request', async () => {
    const steps = provider.steps.length;
    replay();
    const bare = await run(provider.model());
    const session = Session.create();
    replay();
    const sdk = await run(recorded(session));
    expect(sdk.text).toBe(bare.text);
    expect(sdk.text).not.toBe('');
    const [alone, sent] = [bodies(0).slice(0, steps), bodies(steps)];
    expect(sent).toHaveLength(steps);
    expect(sent).toEqual(alone);
    expectValidLog(session);

    replay();
    const again = provider.model();
    for (let step = 1; step <= steps; step++) {
      const { stream } = await again.doStream(rebuildRequest(session, 1, step).callOptions);
      await stream.pipeTo(new WritableStream());
    }
    expect(bodies(2 * steps)).toEqual(sent);
  });

  it('continues the session through toModelMessages as the SDK’s own history would', async () => {
    const steps = provider.steps.length;
    const last = provider.steps.at(-1) as WireFixture;
    replay();
    const session = Session.create();
    const first = await run(recorded(session));
    const next: ModelMessage = { role: 'user', content: 'And now?' };
    server.enqueue({ fixture: last });
    await run(provider.model(), [{ role: 'user', content: prompt }, ...first.messages, next]);
    server.enqueue({ fixture: last });
    await run(recorded(session), [...toModelMessages(session), next]);
    const [own, fromSession] = bodies(steps);
    expect(fromSession).toEqual(own);
    if (provider.carries !== undefined) {
      expect(JSON.stringify(fromSession)).toContain(provider.carries);
    }
    expectValidLog(session);
  });

  it('replays the recorded run through streamText offline, chunk for chunk, with the same requests', async () => {
    replay();
    const session = Session.create();
    const first = await run(recorded(session));
    const wire = server.requests.length;
    const again = Session.create();
    const replayed = await run(
      wrapLanguageModel({ model: replayModel(session), middleware: sessionMiddleware(again) }),
    );
    expect(server.requests).toHaveLength(wire);
    expect(replayed.text).toBe(first.text);
    const chunksOf = (of: Session) =>
      of.events.filter((event) => event.type === 'assistant/chunk').map((event) => event.data);
    expect(chunksOf(again)).toEqual(chunksOf(session));
    const digestsOf = (of: Session) =>
      of.events
        .filter((event) => event.type === 'assistant/message')
        .map((event) => (event.data as { requestDigest?: string }).requestDigest);
    expect(digestsOf(again)).toEqual(digestsOf(session));
    expect(checkRequestDigests(again)).toEqual([]);
    expectValidLog(again);
  });
});
