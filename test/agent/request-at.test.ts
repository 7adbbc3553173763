/**
 * What the model saw, exactly (issue 35 §1): each call records the digest of its request beside
 * its answer; `requestAt` rebuilds the request at any point of the log; `checkRequestDigests`
 * finds every recorded digest the rebuilt request no longer matches.
 */
import type { LanguageModelV3 } from '@ai-sdk/provider';
import { stepCountIs, streamText, tool, wrapLanguageModel } from 'ai';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { sessionMiddleware, toModelMessages } from '../../src/adapters/ai-sdk/index.js';
import {
  callDigests,
  checkRequestDigests,
  defineTool,
  requestAt,
  requestDigest,
  runTurn,
} from '../../src/agent/index.js';
import { compact, pruneToolResults } from '../../src/compaction/index.js';
import {
  InvalidArgumentError,
  type RequestHeaderData,
  Session,
  type SessionEvent,
  SessionValidationError,
} from '../../src/core/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { lookupSession } from './lookup-session.js';

const recorded = () => lookupSession('digests', { followUp: ['Thanks.', 'You are welcome.'] });

function answers(session: Session): SessionEvent<'assistant/message'>[] {
  return session.events.filter(
    (event): event is SessionEvent<'assistant/message'> => event.type === 'assistant/message',
  );
}

describe('the request digest of a call', () => {
  it('is recorded beside each answer of the loop and equals the digest of the request rebuilt there', async () => {
    const session = await recorded();
    const recordedAnswers = answers(session);
    expect(recordedAnswers).toHaveLength(3);
    for (const answer of recordedAnswers) {
      expect(answer.data.requestDigest).toMatch(/^sha256:[0-9a-f]{64}$/);
      const request = requestAt(session, answer.seq);
      expect(request.answerSeq).toBe(answer.seq);
      expect(request.digest).toBe(answer.data.requestDigest);
    }
    expect(new Set(recordedAnswers.map((answer) => answer.data.requestDigest)).size).toBe(3);
    expect(checkRequestDigests(session)).toEqual([]);
  });

  it('gives the request at any seq inside a step, and the last call without one', async () => {
    const session = await recorded();
    const [first] = answers(session);
    const start = requestAt(session, (first as SessionEvent).seq - 1);
    expect(start).toMatchObject({ turn: 1, step: 1 });
    expect(start.request.options.prompt[0]).toEqual({ role: 'system', content: 'Be exact.' });
    expect(start.request.options.tools?.map((entry) => entry.name)).toEqual(['lookup']);
    const last = requestAt(session);
    expect(last).toMatchObject({ turn: 2, step: 1 });
    expect(last.messages.map((message) => message.role)).toEqual([
      'user',
      'assistant',
      'tool',
      'assistant',
      'user',
    ]);
  });

  it('is refused for a seq outside every step, or past the log, with InvalidArgumentError', async () => {
    const session = await recorded();
    expect(() => requestAt(session, 0)).toThrow(InvalidArgumentError);
    expect(() => requestAt(session, 0)).toThrow(/outside every step/);
    expect(() => requestAt(session, session.seq)).toThrow(/found/);
    expect(() => requestAt(Session.create({ id: 'empty' }))).toThrow(/found none/);
  });

  it('no longer matches once an event the request was built from is altered, and the check names the answers', async () => {
    const session = await recorded();
    const events = session.events.map((event) =>
      event.type === 'user/message' && event.seq === 1
        ? {
            ...event,
            data: {
              ...(event.data as object),
              content: [{ type: 'text', text: 'What is the question?' }],
            },
          }
        : event,
    ) as SessionEvent[];
    const altered = Session.create({ id: 'altered', seed: events });
    const mismatches = checkRequestDigests(altered);
    expect(mismatches.map((mismatch) => mismatch.seq)).toEqual(
      answers(session).map((answer) => answer.seq),
    );
    expect(mismatches[0]?.recorded).not.toBe(mismatches[0]?.rebuilt);
  });

  it('does not depend on the order a header was built in, nor on message ids', () => {
    const header: RequestHeaderData = { provider: 'p', model: 'm', system: 's' };
    const reordered = { system: 's', model: 'm', provider: 'p' } as RequestHeaderData;
    const message = (id: string) => ({
      id,
      role: 'user' as const,
      content: [{ type: 'text' as const, text: 'hi' }],
      source: { kind: 'user' },
    });
    expect(requestDigest(header, [message('a')])).toBe(requestDigest(reordered, [message('b')]));
    expect(requestDigest(header, [message('a')])).not.toBe(
      requestDigest({ ...header, system: 't' }, [message('a')]),
    );
  });

  it('is the digest of what a header holds when it is taken, however often it was taken before', () => {
    const tool = { name: 't', parameters: { type: 'object' }, description: 'one' };
    const header = { provider: 'p', model: 'm', system: 's', tools: [tool] };
    const first = requestDigest(header, []);
    expect(requestDigest(structuredClone(header), [])).toBe(first);
    header.system = 'changed';
    const second = requestDigest(header, []);
    expect(second).not.toBe(first);
    tool.description = 'two';
    expect(requestDigest(header, [])).not.toBe(second);
    expect(requestDigest(header, [])).toBe(requestDigest(structuredClone(header), []));
    header.system = 's';
    tool.description = 'one';
    expect(requestDigest(header, [])).toBe(first);
  });
});

describe('a recorded request digest of the wrong type', () => {
  it('is refused by admission, naming the field', () => {
    const session = Session.create({ id: 'bad-digest' });
    session.append('turn/start', { turn: 1 });
    session.append('step/start', { turn: 1, step: 1 });
    const append = () =>
      session.append(
        'assistant/message',
        {
          turn: 1,
          step: 1,
          finishReason: 'stop',
          message: {
            id: 'a',
            role: 'assistant',
            content: [],
            source: { kind: 'model', provider: 'p', model: 'm' },
          },
          requestDigest: 7 as unknown as string,
        },
        { surfaceOp: 'append', sourceEventSeqs: [] },
      );
    expect(append).toThrow(SessionValidationError);
    expect(append).toThrow(/data\.requestDigest/);
    expect(session.seq).toBe(2);
  });
});

describe('the request digest through the AI SDK middleware', () => {
  it('is recorded beside each answer of streamText and equals the rebuilt request', async () => {
    const session = Session.create({ id: 'middleware-digests' });
    const model: LanguageModelV3 = scriptedModel([
      { toolCalls: [{ name: 'lookup', args: { key: 'answer' } }] },
      { text: 'forty-two' },
    ]);
    const middleware = sessionMiddleware(session);
    const result = streamText({
      model: wrapLanguageModel({ model, middleware }),
      system: 'Be exact.',
      messages: [...toModelMessages(session), { role: 'user', content: 'What is the answer?' }],
      tools: {
        lookup: tool({
          description: 'Looks a key up.',
          inputSchema: z.object({ key: z.string() }),
          execute: async () => 'forty-two',
        }),
      },
      stopWhen: stepCountIs(3),
    });
    await result.consumeStream();
    await middleware.finish((await result.response).messages);
    const recordedAnswers = answers(session);
    expect(recordedAnswers).toHaveLength(2);
    for (const answer of recordedAnswers) {
      expect(requestAt(session, answer.seq).digest).toBe(answer.data.requestDigest);
    }
    expect(checkRequestDigests(session)).toEqual([]);
  });
});

describe('the digests of every call, rebuilt in one pass', () => {
  it('equal the digest of the request rebuilt at each call, through prunes, compactions and header changes', async () => {
    const session = Session.create({ id: 'one-pass' });
    const big = defineTool({
      name: 'lookup',
      description: 'Looks a key up.',
      parameters: { type: 'object', properties: { key: { type: 'string' } } },
      execute: async () => 'row '.repeat(600),
    });
    const script = [];
    for (let turn = 0; turn < 6; turn++) {
      script.push({ toolCalls: [{ name: 'lookup', args: { key: `k${turn}` } }] });
      script.push({ text: `Answer ${turn}.` });
    }
    const model = scriptedModel(script);
    const turn = (input: string, system = 'Be exact.') =>
      runTurn({ session, model, tools: [big], system, input });
    await turn('one');
    await turn('two');
    pruneToolResults(session, { keepRecentTurns: 1, minChars: 100 });
    await turn('three', 'Be brief.');
    await compact(session, {
      model: scriptedModel([{ text: 'Summary of three turns.' }]),
      keepRecentTokens: 0,
    });
    await turn('four');
    pruneToolResults(session, { keepRecentTurns: 0, minChars: 100 });
    await turn('five');
    await turn('six');

    const calls = callDigests(session);
    expect(calls).toHaveLength(12);
    for (const call of calls) {
      const rebuilt = requestAt(session, call.stepStartSeq);
      expect(call.digest, `call at #${call.seq}`).toBe(
        requestDigest(rebuilt.header, rebuilt.messages),
      );
      expect(call.digest).toBe(call.answer.data.requestDigest);
    }
    expect(checkRequestDigests(session)).toEqual([]);
  });
});
