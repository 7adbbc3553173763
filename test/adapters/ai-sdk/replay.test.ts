/**
 * A recorded session served back as a model (issue 35 §2): the same agent re-run on
 * `replayModel(session)` gets every recorded chunk of every call, in order, offline; a request
 * the session did not record fails with REPLAY_MISS naming where it first differs.
 */
import { generateText, stepCountIs, streamText, tool, wrapLanguageModel } from 'ai';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  ReplayMissError,
  replayModel,
  sessionMiddleware,
  toModelMessages,
} from '../../../src/adapters/ai-sdk/index.js';
import { checkRequestDigests, defineTool, runTurn, type Tool } from '../../../src/agent/index.js';
import { Session, type SessionEvent } from '../../../src/core/index.js';
import { scriptedModel } from '../../../src/testing/index.js';

const lookup = (value: string): Tool =>
  defineTool({
    name: 'lookup',
    description: 'Looks a key up.',
    parameters: { type: 'object', properties: { key: { type: 'string' } } },
    execute: async () => value,
  });

const INPUTS = ['What is the answer?', 'And doubled?'];

/** Two turns of the loop, the first with a tool call, on `model`. */
async function agentRun(
  session: Session,
  model: Parameters<typeof runTurn>[0]['model'],
  system = 'Be exact.',
  value = 'forty-two',
): Promise<string[]> {
  const texts: string[] = [];
  for (const input of INPUTS) {
    const result = await runTurn({ session, model, tools: [lookup(value)], system, input });
    texts.push(result.text);
  }
  return texts;
}

async function recorded(): Promise<{ session: Session; texts: string[] }> {
  const session = Session.create({ id: 'recorded' });
  const model = scriptedModel([
    { reasoning: 'I should look.', toolCalls: [{ name: 'lookup', args: { key: 'answer' } }] },
    { text: 'It is forty-two.' },
    { text: 'Eighty-four.' },
  ]);
  return { session, texts: await agentRun(session, model) };
}

function chunks(session: Session): unknown[] {
  return session.events
    .filter((event) => event.type === 'assistant/chunk')
    .map((event) => (event.data as { chunk: unknown }).chunk);
}

function digests(session: Session): unknown[] {
  return session.events
    .filter(
      (event): event is SessionEvent<'assistant/message'> => event.type === 'assistant/message',
    )
    .map((event) => event.data.requestDigest);
}

describe('replayModel', () => {
  it('answers the loop re-run on the same inputs from the log: every recorded chunk of every call, in order', async () => {
    const { session, texts } = await recorded();
    const again = Session.create({ id: 'replayed' });
    expect(await agentRun(again, replayModel(session))).toEqual(texts);
    expect(chunks(again)).toEqual(chunks(session));
    expect(digests(again)).toEqual(digests(session));
    expect(checkRequestDigests(again)).toEqual([]);
  });

  it('ends the turn with the miss when the system prompt changed, naming the field (the loop reports provider failures, it does not throw)', async () => {
    const { session } = await recorded();
    const result = await runTurn({
      session: Session.create({ id: 'other-system' }),
      model: replayModel(session),
      tools: [lookup('forty-two')],
      system: 'Be vague.',
      input: INPUTS[0] as string,
    });
    expect(result.reason).toMatchObject({ kind: 'error', error: { code: 'ReplayMissError' } });
    const { message } = (result.reason as { error: { message: string } }).error;
    expect(message).toContain('matches none of its 3 calls');
    expect(message).toContain('differs at system');
  });

  it('misses the call after a tool returned something else, naming the message that differs', async () => {
    const { session } = await recorded();
    const model = replayModel(session);
    const result = await runTurn({
      session: Session.create({ id: 'other-result' }),
      model,
      tools: [lookup('forty-three')],
      system: 'Be exact.',
      input: INPUTS[0] as string,
    });
    expect(result.steps).toBe(2);
    const { message } = (result.reason as { error: { message: string } }).error;
    expect(message).toMatch(
      /the call expected next \(answer #\d+\) differs at messages\[2\]\.content/,
    );
    // Called directly, the miss is a typed error with the difference as a field.
    const stream = model.doStream({
      prompt: [{ role: 'user', content: [{ type: 'text', text: 'something else' }] }],
    });
    await expect(stream).rejects.toBeInstanceOf(ReplayMissError);
    await expect(stream).rejects.toMatchObject({ code: 'REPLAY_MISS' });
  });

  it('answers streamText through the middleware, and generateText, from a session the middleware recorded', async () => {
    const tools = {
      lookup: tool({
        description: 'Looks a key up.',
        inputSchema: z.object({ key: z.string() }),
        execute: async () => 'forty-two',
      }),
    };
    const run = async (
      session: Session,
      model: Parameters<typeof wrapLanguageModel>[0]['model'],
    ) => {
      const middleware = sessionMiddleware(session);
      const result = streamText({
        model: wrapLanguageModel({ model, middleware }),
        system: 'Be exact.',
        messages: [...toModelMessages(session), { role: 'user', content: 'What is the answer?' }],
        tools,
        stopWhen: stepCountIs(3),
      });
      await result.consumeStream();
      await middleware.finish((await result.response).messages);
      return result.text;
    };
    const session = Session.create({ id: 'sdk-recorded' });
    const text = await run(
      session,
      scriptedModel([
        { toolCalls: [{ name: 'lookup', args: { key: 'answer' } }] },
        { text: 'forty-two' },
      ]),
    );
    const again = Session.create({ id: 'sdk-replayed' });
    expect(await run(again, replayModel(session))).toBe(text);
    expect(chunks(again)).toEqual(chunks(session));
    expect(digests(again)).toEqual(digests(session));

    // The SDK's one-shot call on the first request: answered by doGenerate from the same log.
    const generated = await generateText({
      model: replayModel(session),
      system: 'Be exact.',
      prompt: 'What is the answer?',
      tools,
      stopWhen: stepCountIs(3),
    });
    expect(generated.text).toBe(text);
  });
});
