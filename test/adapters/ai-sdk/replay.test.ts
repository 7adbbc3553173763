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
import {
  checkInvariants,
  forkSession,
  Session,
  type SessionEvent,
} from '../../../src/core/index.js';
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

describe('replayModel modes and pace', () => {
  it('tools-live: answers from the recording when only a tool result differs, and reports it once', async () => {
    const { session, texts } = await recorded();
    const model = replayModel(session, { mode: 'tools-live' });
    const again = Session.create({ id: 'tools-live' });
    expect(await agentRun(again, model, 'Be exact.', 'forty-three')).toEqual(texts);
    const report = model.report();
    expect(report.served).toBe(3);
    expect(report.toolDifferences).toEqual([
      {
        messageIndex: 2,
        toolCallId: expect.any(String),
        toolName: 'lookup',
        recorded: '{"type":"text","value":"forty-two"}',
        found: '{"type":"text","value":"forty-three"}',
      },
    ]);
    expect(checkInvariants(again.events)).toEqual([]);
  });

  it('tools-live: still misses a request that differs in more than tool results', async () => {
    const { session } = await recorded();
    const result = await runTurn({
      session: Session.create({ id: 'tools-live-miss' }),
      model: replayModel(session, { mode: 'tools-live' }),
      tools: [lookup('forty-two')],
      system: 'Be vague.',
      input: INPUTS[0] as string,
    });
    expect(result.reason).toMatchObject({ kind: 'error', error: { code: 'ReplayMissError' } });
  });

  it('fork-on-miss: re-runs a turn in a fork of the recording, the live model answering from the first miss on', async () => {
    const { session } = await recorded();
    // Replay the second turn in a fork that ends where the first turn ended.
    const secondTurn = session.events.filter((event) => event.type === 'turn/start')[1];
    const fork = forkSession(session, (secondTurn?.seq ?? 0) - 1, { id: 'fork-on-miss' });
    const live = scriptedModel([{ text: 'One hundred and sixty-eight.' }]);
    const model = replayModel(session, { mode: 'fork-on-miss', live });
    const result = await runTurn({
      session: fork,
      model,
      tools: [lookup('forty-two')],
      system: 'Be exact.',
      input: 'And quadrupled?',
    });
    expect(result.text).toBe('One hundred and sixty-eight.');
    const report = model.report();
    expect(report).toMatchObject({ served: 0, live: 1 });
    expect(report.miss).toBeInstanceOf(ReplayMissError);
    expect(report.miss?.difference).toMatch(/^messages\[\d+\]/);
    expect(fork.header.parentSession).toBe('recorded');
    expect(checkInvariants(fork.events)).toEqual([]);
    expect(checkRequestDigests(fork)).toEqual([]);

    // The same turn as recorded is served from the recording, no live call.
    const same = forkSession(session, (secondTurn?.seq ?? 0) - 1, { id: 'fork-same' });
    const served = replayModel(session, { mode: 'fork-on-miss', live });
    const again = await runTurn({
      session: same,
      model: served,
      tools: [lookup('forty-two')],
      system: 'Be exact.',
      input: INPUTS[1] as string,
    });
    expect(again.text).toBe('Eighty-four.');
    expect(served.report()).toMatchObject({ served: 1, live: 0 });
    expect(() => replayModel(session, { mode: 'fork-on-miss' })).toThrow(/live model/);
    const mistyped = { mode: 'fork' } as unknown as { mode: 'strict' };
    expect(() => replayModel(session, mistyped)).toThrow(/expected mode one of strict/);
  });

  it('keeps the recorded pace when asked: each part after the time it followed the one before', async () => {
    let now = 1_000;
    const clock = () => now;
    const session = Session.create({ id: 'paced', clock });
    const slow = scriptedModel([{ text: 'one two three' }], { chunkSize: 4 });
    const paced: typeof slow = Object.assign(Object.create(slow), {
      doStream: async (options: Parameters<typeof slow.doStream>[0]) => {
        now += 120; // time to the first part
        const { stream } = await slow.doStream(options);
        return {
          stream: stream.pipeThrough(
            new TransformStream({
              transform(part, controller) {
                now += 15;
                controller.enqueue(part);
              },
            }),
          ),
        };
      },
    });
    await runTurn({ session, model: paced, input: 'Count.' });
    const waits: number[] = [];
    const model = replayModel(session, {
      pace: 'recorded',
      sleep: async (ms) => {
        waits.push(ms);
      },
    });
    const again = Session.create({ id: 'paced-again' });
    const result = await runTurn({ session: again, model, input: 'Count.' });
    expect(result.text).toBe('one two three');
    const parts = chunks(session).length;
    expect(waits.length).toBe(parts);
    expect(waits[0]).toBeGreaterThanOrEqual(120);
    expect(waits.slice(1).every((ms) => ms === 15)).toBe(true);
    const fast: number[] = [];
    await runTurn({
      session: Session.create({ id: 'fast' }),
      model: replayModel(session, { sleep: async (ms) => void fast.push(ms) }),
      input: 'Count.',
    });
    expect(fast).toEqual([]);
  });
});
