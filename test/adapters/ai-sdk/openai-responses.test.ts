/**
 * The recording middleware on the AI SDK's default OpenAI model, `openai(id)` (the Responses
 * API), replaying the SDK's own recording of a real four-step calculator run (encrypted
 * reasoning, three function calls with item ids, then the answer): in the provider's default
 * configuration (`store: true`, where earlier items go back as references) and stateless
 * (`store: false`, where they go back whole, encrypted reasoning included).
 */
import { createOpenAI } from '@ai-sdk/openai';
import type { LanguageModelV3 } from '@ai-sdk/provider';
import { type ModelMessage, stepCountIs, streamText, tool, wrapLanguageModel } from 'ai';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { sessionMiddleware, toModelMessages } from '../../../src/adapters/ai-sdk/index.js';
import { rebuildRequest } from '../../../src/agent/index.js';
import { Session } from '../../../src/core/index.js';
import { sdkRecording } from '../../agent/ai-sdk-recordings.js';
import { expectValidLog } from '../../agent/helpers.js';
import { useWireServer } from '../../agent/wire-server.js';

const server = useWireServer();
const recording = sdkRecording('openai/openai-reasoning-encrypted-content.1.chunks.txt');
const answer = recording.at(-1);
if (answer === undefined) throw new Error('the recording holds no response');
const prompt = 'Compute (12 + 7) * 3 * 10 with the calculator.';

const calculator = tool({
  description: 'Adds or multiplies two numbers.',
  inputSchema: z.object({ a: z.number(), b: z.number(), op: z.enum(['add', 'multiply']) }),
  execute: async ({ a, b, op }) => (op === 'add' ? a + b : a * b),
});

const model = (): LanguageModelV3 =>
  createOpenAI({ baseURL: server.baseURL, apiKey: 'test-key' })('gpt-5.1-codex-max');

/** The request bodies the server received from `from` on. */
const bodies = (from: number) => server.requests.slice(from).map((request) => request.body);

describe.each([
  { setup: 'the default (store: true)', providerOptions: undefined },
  {
    setup: 'stateless (store: false, encrypted reasoning)',
    providerOptions: { openai: { store: false, include: ['reasoning.encrypted_content'] } },
  },
])('sessionMiddleware on openai(id), $setup', ({ providerOptions }) => {
  /** The recorded run through `streamText` on `model`; its text and response messages. */
  async function run(on: LanguageModelV3, messages?: ModelMessage[]) {
    const result = streamText({
      model: on,
      ...(messages === undefined ? { prompt } : { messages }),
      tools: { calculator },
      ...(providerOptions === undefined ? {} : { providerOptions }),
      stopWhen: stepCountIs(6),
    });
    await result.consumeStream();
    return { text: await result.text, messages: (await result.response).messages };
  }

  it('records the four-step run, sending what the SDK sends alone, and rebuilds every request', async () => {
    server.enqueue(...recording.map((fixture) => ({ fixture })));
    const bare = await run(model());
    const session = Session.create();
    server.enqueue(...recording.map((fixture) => ({ fixture })));
    const recorded = await run(
      wrapLanguageModel({ model: model(), middleware: sessionMiddleware(session) }),
    );
    expect(recorded.text).toBe('The final result is **570**.');
    expect(recorded.text).toBe(bare.text);
    const [alone, sent] = [bodies(0).slice(0, 4), bodies(4)];
    expect(sent).toHaveLength(4);
    expect(sent).toEqual(alone);
    expectValidLog(session);

    server.enqueue(...recording.map((fixture) => ({ fixture })));
    const again = model();
    for (const step of [1, 2, 3, 4]) {
      const { stream } = await again.doStream(rebuildRequest(session, 1, step).callOptions);
      await stream.pipeTo(new WritableStream());
    }
    expect(bodies(8)).toEqual(sent);
  });

  it('continues the session through toModelMessages with the item ids and reasoning intact', async () => {
    server.enqueue(...recording.map((fixture) => ({ fixture })));
    const session = Session.create();
    const first = await run(
      wrapLanguageModel({ model: model(), middleware: sessionMiddleware(session) }),
    );
    const next: ModelMessage = { role: 'user', content: 'And divided by 5?' };
    // What the SDK sends when the application keeps the history itself...
    server.enqueue({ fixture: answer });
    await run(model(), [{ role: 'user', content: prompt }, ...first.messages, next]);
    // ...and when the history comes from the session.
    server.enqueue({ fixture: answer });
    await run(wrapLanguageModel({ model: model(), middleware: sessionMiddleware(session) }), [
      ...toModelMessages(session),
      next,
    ]);
    const [own, fromSession] = bodies(4);
    expect(fromSession).toEqual(own);
    // The earlier items went back as the provider knows them: by reference, or whole.
    const input = JSON.stringify((fromSession as { input: unknown }).input);
    if (providerOptions === undefined) expect(input).toContain('"type":"item_reference"');
    else expect(input).toContain('"encrypted_content":"gAAAAA');
    expectValidLog(session);
  });
});
