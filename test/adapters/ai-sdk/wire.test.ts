/**
 * The recording middleware on the HTTP wire: `streamText` drives the real OpenAI-compatible,
 * Anthropic and DeepSeek providers against a local server replaying recorded streams. The SDK
 * sends the same requests with the middleware as without it, the request rebuilt from the log
 * for every step is equal to each on the wire, and the log is the one palimpsest's own loop
 * writes for the same responses.
 */
import { createAnthropic } from '@ai-sdk/anthropic';
import { createDeepSeek } from '@ai-sdk/deepseek';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import type { LanguageModelV3 } from '@ai-sdk/provider';
import { stepCountIs, streamText, tool, wrapLanguageModel } from 'ai';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { sessionMiddleware } from '../../../src/adapters/ai-sdk/index.js';
import { defineTool, rebuildRequest, runTurn } from '../../../src/agent/index.js';
import { type Message, Session } from '../../../src/core/index.js';
import { expectValidLog, outline } from '../../agent/helpers.js';
import { useWireServer } from '../../agent/wire-server.js';

const server = useWireServer();

const fixtures = ['openai-compatible/parallel-tool-calls.http', 'openai-compatible/text.http'];
const system = 'You are a careful coding agent.';
const input = 'What does the header module hold?';

const local = (): LanguageModelV3 =>
  createOpenAICompatible({
    name: 'local',
    baseURL: server.baseURL,
    apiKey: 'test-key',
    includeUsage: true,
  })('qwen3-coder') as LanguageModelV3;

const sdkTools = {
  read_file: tool({
    description: 'Reads a file of the project.',
    inputSchema: z.object({ path: z.string() }),
    execute: async ({ path }) => `contents of ${path}`,
  }),
  grep: tool({
    description: 'Searches the project.',
    inputSchema: z.object({ pattern: z.string(), path: z.string().optional() }),
    execute: async ({ pattern }) => `no match for ${pattern}`,
  }),
};

function withoutIds(messages: readonly Message[]): unknown[] {
  return messages.map(({ id: _id, ...rest }) => rest);
}

/** The scenario's tool loop through `streamText` on `model`, read to its end; its text. */
async function runSdk(model: LanguageModelV3): Promise<string> {
  const result = streamText({
    model,
    system,
    prompt: input,
    tools: sdkTools,
    maxOutputTokens: 4096,
    stopWhen: stepCountIs(5),
  });
  await result.consumeStream();
  return result.text;
}

describe.each([
  { provider: 'openai-compatible', fixtures, model: local },
  {
    provider: 'anthropic',
    fixtures: ['anthropic/thinking-tool-use.http', 'anthropic/text.http'],
    model: () =>
      createAnthropic({ baseURL: server.baseURL, apiKey: 'test-key' })(
        'claude-sonnet-4-5',
      ) as LanguageModelV3,
  },
  {
    provider: 'deepseek',
    fixtures: ['deepseek/reasoning-then-tool-call.http', 'deepseek/reasoning-then-text.http'],
    model: () =>
      createDeepSeek({ baseURL: server.baseURL, apiKey: 'test-key' })(
        'deepseek-reasoner',
      ) as LanguageModelV3,
  },
])('sessionMiddleware on the wire of $provider', ({ fixtures: replies, model: make }) => {
  it('rebuilds every step’s request, reasoning and signatures included, as the SDK sent it', async () => {
    const run = (model: LanguageModelV3) => {
      server.enqueue(...replies);
      return runSdk(model);
    };
    // Without the middleware first: what the SDK sends by itself.
    await run(make());
    const session = Session.create();
    await run(wrapLanguageModel({ model: make(), middleware: sessionMiddleware(session) }));
    const [bare, sent] = [server.requests.slice(0, 2), server.requests.slice(2)].map((requests) =>
      requests.map((request) => request.body),
    );
    expect(sent).toHaveLength(2);
    expect(sent).toEqual(bare);
    server.enqueue(...replies);
    const model = make();
    for (const step of [1, 2]) {
      const { stream } = await model.doStream(rebuildRequest(session, 1, step).callOptions);
      await stream.pipeTo(new WritableStream());
    }
    expect(server.requests.slice(4).map((request) => request.body)).toEqual(sent);
    expectValidLog(session);
  });
});

describe('sessionMiddleware on the wire', () => {
  it('writes the events, surface and messages palimpsest’s loop writes for the same responses', async () => {
    server.enqueue(...fixtures);
    const session = Session.create();
    const text = await runSdk(
      wrapLanguageModel({ model: local(), middleware: sessionMiddleware(session) }),
    );
    expect(text).toBe('The log is append-only, so nothing is lost.');
    server.enqueue(...fixtures);
    const loop = Session.create();
    await runTurn({
      session: loop,
      model: local(),
      system,
      input,
      settings: { maxOutputTokens: 4096 },
      tools: [
        defineTool({
          name: 'read_file',
          parameters: z.object({ path: z.string() }),
          execute: ({ path }) => `contents of ${path}`,
        }),
        defineTool({
          name: 'grep',
          parameters: z.object({ pattern: z.string(), path: z.string().optional() }),
          execute: ({ pattern }) => `no match for ${pattern}`,
        }),
      ],
    });
    expect(outline(session.events)).toEqual(outline(loop.events));
    expect(session.surface.seqs).toEqual(loop.surface.seqs);
    expect(withoutIds(session.deriveMessages())).toEqual(withoutIds(loop.deriveMessages()));
  });
});
