/**
 * The recording middleware on the HTTP wire: `streamText` drives the real OpenAI-compatible
 * provider against a local server replaying recorded streams. The request rebuilt from the log
 * for every step is byte-equal, on the wire, to the request the SDK sent; and the log is the one
 * palimpsest's own loop writes for the same responses.
 */
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import type { LanguageModelV3 } from '@ai-sdk/provider';
import { stepCountIs, streamText, tool, wrapLanguageModel } from 'ai';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { sessionMiddleware } from '../../../src/adapters/ai-sdk/index.js';
import { defineTool, rebuildRequest, runTurn } from '../../../src/agent/index.js';
import { type Message, Session } from '../../../src/core/index.js';
import { expectValidLog, outline } from '../../agent/helpers.js';
import { startWireServer, type WireServer } from '../../agent/wire-server.js';

let server: WireServer;

beforeEach(async () => {
  server = await startWireServer();
});

afterEach(async () => {
  await server.close();
  expect(server.problems).toEqual([]);
  expect(server.pending).toBe(0);
});

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

async function recordWithSdk(): Promise<Session> {
  const session = Session.create();
  const result = streamText({
    model: wrapLanguageModel({ model: local(), middleware: sessionMiddleware(session) }),
    system,
    prompt: input,
    tools: sdkTools,
    maxOutputTokens: 4096,
    stopWhen: stepCountIs(5),
  });
  await result.consumeStream();
  expect(await result.text).toBe('The log is append-only, so nothing is lost.');
  return session;
}

describe('sessionMiddleware on the wire', () => {
  it('rebuilds from the log, for every step, the request the SDK sent', async () => {
    server.enqueue(...fixtures);
    const session = await recordWithSdk();
    const sent = server.requests.map((request) => request.body);
    expect(sent).toHaveLength(2);

    server.enqueue(...fixtures);
    const model = local();
    for (const step of [1, 2]) {
      const { callOptions } = rebuildRequest(session, 1, step);
      const { stream } = await model.doStream(callOptions);
      await stream.pipeTo(new WritableStream());
    }
    expect(server.requests.slice(2).map((request) => request.body)).toEqual(sent);
    expectValidLog(session);
  });

  it('writes the events, surface and messages palimpsest’s loop writes for the same responses', async () => {
    server.enqueue(...fixtures);
    const session = await recordWithSdk();
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
