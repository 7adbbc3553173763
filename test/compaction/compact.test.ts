import {
  APICallError,
  type LanguageModelV3,
  type LanguageModelV3StreamPart,
} from '@ai-sdk/provider';
import { describe, expect, it } from 'vitest';
import { compact, pruneToolResults } from '../../src/compaction/index.js';
import {
  type CompactionBracketData,
  checkInvariants,
  type Session,
  type SessionEvent,
  type UserMessage,
} from '../../src/core/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { isSummaryRequest, recordedSession, sessionModel } from './helpers.js';

const summarizer = (summary = 'Goal: read documents 1-4. Decisions: none. Next step: read 5.') =>
  scriptedModel([{ text: summary }], { loop: true });

function bracket(
  session: Session,
  type: 'compaction/start' | 'compaction/end',
): CompactionBracketData[] {
  return session.events
    .filter((event) => event.type === type)
    .map((event) => event.data as CompactionBracketData);
}

function expectValid(session: Session): void {
  expect(checkInvariants(session.events, { requireClosed: true })).toEqual([]);
}

describe('compact', () => {
  it('replaces the head of the surface with a summary that cites every shadowed seq', async () => {
    const session = await recordedSession(5);
    const surfaceBefore = [...session.surface.seqs];
    const eventsBefore = session.events;
    const seenBefore = session.messagesAt(session.seq - 1);

    const result = await compact(session, { model: summarizer(), keepRecentTokens: 0 });

    expect(result.replaced).toBe(true);
    const summary = session.event(result.summarySeq ?? -1) as SessionEvent<'user/message'>;
    expect(summary.surfaceOp).toEqual({
      op: 'replace',
      start: surfaceBefore[0],
      end: result.shadowedSeqs.at(-1),
    });
    expect(summary.sourceEventSeqs).toEqual(result.shadowedSeqs);
    expect(result.shadowedSeqs).toEqual(surfaceBefore.slice(0, result.shadowedSeqs.length));
    expect((summary.data as UserMessage).source).toMatchObject({
      kind: 'compaction',
      id: result.id,
    });
    expect(session.deriveMessages()[0]?.content[0]).toMatchObject({
      text: expect.stringContaining('Goal: read documents 1-4'),
    });
    expect(result.tokensAfter).toBeLessThan(result.tokensBefore);
    // The log keeps every layer: earlier events are untouched and what the model saw then is unchanged.
    expect(session.events.slice(0, eventsBefore.length)).toEqual(eventsBefore);
    expect(session.messagesAt(eventsBefore.length - 1)).toEqual(seenBefore);
    expectValid(session);
  });

  it('brackets the replace with compaction/start and compaction/end carrying the token counts', async () => {
    const session = await recordedSession(4);
    const result = await compact(session, { model: summarizer(), keepRecentTokens: 0 });
    const types = session.events.slice(result.startSeq).map((event) => event.type);
    expect(types).toEqual(['compaction/start', 'user/message', 'compaction/end']);
    expect(bracket(session, 'compaction/end')[0]).toMatchObject({
      id: result.id,
      replaced: true,
      tokensBefore: result.tokensBefore,
      tokensAfter: result.tokensAfter,
      summarySeq: result.summarySeq,
    });
  });

  it('keeps at least the newest complete turn verbatim', async () => {
    const session = await recordedSession(3);
    const lastTurnInput = [...session.events]
      .reverse()
      .find((event) => event.type === 'user/message');
    const result = await compact(session, { model: summarizer(), keepRecentTokens: 0 });
    expect(result.shadowedSeqs).not.toContain(lastTurnInput?.seq);
    expect(session.surface.has(lastTurnInput?.seq ?? -1)).toBe(true);
  });

  it('summarises the earlier summary together with newer history (rolling)', async () => {
    const session = await recordedSession(3);
    const model = sessionModel();
    const first = await compact(session, { model: summarizer(), keepRecentTokens: 0 });
    const { runTurn } = await import('../../src/agent/index.js');
    const { fetchTool } = await import('./helpers.js');
    for (let i = 0; i < 2; i++) {
      await runTurn({
        session,
        model,
        tools: [fetchTool],
        system: 'You read documents.',
        input: `more ${i}`,
      });
    }
    const second = await compact(session, { model: summarizer('Rolled up.'), keepRecentTokens: 0 });
    expect(second.replaced).toBe(true);
    expect(second.shadowedSeqs[0]).toBe(first.summarySeq);
    expect(session.deriveMessages()[0]?.content[0]).toMatchObject({
      text: expect.stringContaining('Rolled up.'),
    });
    expectValid(session);
  });

  it('asks with the session’s system prompt and tool schemas, the range, then the instructions', async () => {
    const session = await recordedSession(3);
    const model = summarizer();
    const result = await compact(session, { model, keepRecentTokens: 0 });
    const request = model.calls[0];
    expect(request?.prompt[0]).toEqual({ role: 'system', content: 'You read documents.' });
    expect(request?.tools?.map((tool) => tool.name)).toEqual(['fetch']);
    expect(request?.toolChoice).toEqual({ type: 'none' });
    expect(request && isSummaryRequest(request)).toBe(true);
    // system + the shadowed messages (the range is a prefix of the last real request) + instructions
    expect(request?.prompt).toHaveLength(1 + result.shadowedSeqs.length + 1);
  });

  it('replaces nothing when the summary is not shorter than the range', async () => {
    const session = await recordedSession(3, 50);
    const surface = [...session.surface.seqs];
    const result = await compact(session, {
      model: summarizer('x '.repeat(5000)),
      keepRecentTokens: 0,
    });
    expect(result).toMatchObject({ replaced: false, skipped: 'not-shorter' });
    expect(session.surface.seqs).toEqual(surface);
    expect(bracket(session, 'compaction/end')[0]).toMatchObject({
      replaced: false,
      reason: 'not-shorter',
    });
    expectValid(session);
  });

  it('replaces nothing when the surface changed while the summary was written', async () => {
    const session = await recordedSession(4);
    const model = scriptedModel([
      () => {
        pruneToolResults(session, { keepRecentTurns: 0, minChars: 10 });
        return { text: 'too late' };
      },
    ]);
    const result = await compact(session, { model, keepRecentTokens: 0 });
    expect(result).toMatchObject({ replaced: false, skipped: 'surface-changed' });
    expect(bracket(session, 'compaction/end').at(-1)).toMatchObject({ reason: 'surface-changed' });
    expect(
      session.deriveMessages().some((message) => JSON.stringify(message).includes('too late')),
    ).toBe(false);
    expectValid(session);
  });

  it('closes the bracket with the error and leaves the surface untouched when the model fails', async () => {
    const session = await recordedSession(3);
    const surface = [...session.surface.seqs];
    const model = scriptedModel([
      { error: { message: 'invalid api key', status: 401, requestId: 'req_x' } },
    ]);
    const result = await compact(session, { model, keepRecentTokens: 0 });
    expect(result).toMatchObject({
      replaced: false,
      skipped: 'failed',
      error: { status: 401, requestId: 'req_x' },
    });
    expect(session.surface.seqs).toEqual(surface);
    expect(bracket(session, 'compaction/end')[0]).toMatchObject({
      replaced: false,
      error: { message: 'invalid api key' },
    });
    expectValid(session);
  });

  it('closes the bracket as aborted when cancelled while the summary streams', async () => {
    const session = await recordedSession(3);
    const surface = [...session.surface.seqs];
    const controller = new AbortController();
    setTimeout(() => controller.abort('user left'), 20);
    const model = scriptedModel([
      { text: 'a long summary that streams slowly '.repeat(10), delayMs: 5 },
    ]);
    const result = await compact(session, {
      model,
      keepRecentTokens: 0,
      signal: controller.signal,
    });
    expect(result).toMatchObject({ replaced: false, skipped: 'aborted' });
    expect(session.surface.seqs).toEqual(surface);
    expectValid(session);
  });

  it('settles as aborted within the bound when the model ignores its abort signal', async () => {
    const session = await recordedSession(3);
    const surface = [...session.surface.seqs];
    // One model never answers the call; the other answers and then never streams a part.
    // Neither looks at the signal.
    const silent = deafModel(() => new Promise(() => {}));
    const stalled = deafModel(async () => ({
      stream: new ReadableStream<LanguageModelV3StreamPart>({ pull: () => new Promise(() => {}) }),
    }));
    for (const model of [silent, stalled]) {
      const controller = new AbortController();
      setTimeout(() => controller.abort('user left'), 20);
      const result = await compact(session, {
        model,
        keepRecentTokens: 0,
        signal: controller.signal,
      });
      // Neither model ever ends on its own: a compaction that ignored the signal would hang.
      expect(result).toMatchObject({ replaced: false, skipped: 'aborted' });
    }
    expect(session.surface.seqs).toEqual(surface);
    expectValid(session);
  });

  it('takes the retry cap from the caller: maxRetryDelayMs bounds a long retry-after', async () => {
    const session = await recordedSession(3);
    const answer = scriptedModel([{ text: 'Short summary.' }]);
    let calls = 0;
    const model = deafModel((options) => {
      calls += 1;
      if (calls > 1) return answer.doStream(options);
      throw new APICallError({
        message: 'slow down',
        url: 'http://provider.invalid',
        requestBodyValues: {},
        statusCode: 429,
        responseHeaders: { 'retry-after': '120' },
        isRetryable: true,
      });
    });
    const result = await compact(session, { model, keepRecentTokens: 0, maxRetryDelayMs: 5 });
    expect(result.replaced).toBe(true);
    expect(calls).toBe(2);
  }, 3000);

  it('refuses malformed retry knobs like the turn does', async () => {
    const session = await recordedSession(3);
    await expect(
      compact(session, { model: summarizer(), maxRetryDelayMs: -1 }),
    ).rejects.toMatchObject({
      code: 'INVALID_OPTIONS',
      message: expect.stringContaining('maxRetryDelayMs'),
    });
  });

  it('retries a retryable summary failure', async () => {
    const session = await recordedSession(3);
    const model = scriptedModel([
      { error: { message: 'busy', status: 503 } },
      { text: 'Short summary.' },
    ]);
    const result = await compact(session, { model, keepRecentTokens: 0, retryDelayMs: 1 });
    expect(result.replaced).toBe(true);
    expect(model.calls).toHaveLength(2);
  });

  it('appends nothing when there is nothing to compact', async () => {
    const session = await recordedSession(1);
    const length = session.seq;
    const result = await compact(session, { model: summarizer(), keepRecentTokens: 0 });
    expect(result).toMatchObject({ replaced: false, skipped: 'nothing-to-compact' });
    expect(session.seq).toBe(length);
  });

  it('keeps recent history within keepRecentTokens and never cuts between a tool call and its result', async () => {
    const session = await recordedSession(6, 2000);
    const result = await compact(session, { model: summarizer(), keepRecentTokens: 1500 });
    expect(result.replaced).toBe(true);
    const messages = session.deriveMessages();
    expect(messages[1]?.role).not.toBe('tool');
    expectValid(session);
  });

  it('compacts an explicit range and refuses ranges that are off the surface, reversed or unbalanced', async () => {
    const session = await recordedSession(4);
    const seqs = session.surface.seqs;
    const length = session.seq;
    // [user, assistant(call), tool, assistant] per turn: positions 1..2 split a call from its result.
    await expect(
      compact(session, { model: summarizer(), range: { start: seqs[1] ?? 0, end: seqs[1] ?? 0 } }),
    ).rejects.toMatchObject({
      code: 'INVALID_RANGE',
    });
    await expect(
      compact(session, { model: summarizer(), range: { start: seqs[4] ?? 0, end: seqs[0] ?? 0 } }),
    ).rejects.toMatchObject({
      code: 'INVALID_RANGE',
      message: expect.stringContaining('at or before'),
    });
    await expect(
      compact(session, { model: summarizer(), range: { start: 0, end: seqs[3] ?? 0 } }),
    ).rejects.toMatchObject({
      code: 'INVALID_RANGE',
    });
    expect(session.seq).toBe(length);
    const result = await compact(session, {
      model: summarizer(),
      range: { start: seqs[4] ?? 0, end: seqs[7] ?? 0 },
    });
    expect(result.replaced).toBe(true);
    expect(result.shadowedSeqs).toEqual(seqs.slice(4, 8));
    expectValid(session);
  });

  it('refuses a second compaction of the same session while one runs', async () => {
    const session = await recordedSession(3);
    const slow = compact(session, {
      model: scriptedModel([{ text: 'slow', delayMs: 10 }]),
      keepRecentTokens: 0,
    });
    await expect(
      compact(session, { model: summarizer(), keepRecentTokens: 0 }),
    ).rejects.toMatchObject({ code: 'BUSY' });
    await slow;
  });

  it('refuses a negative token budget', async () => {
    const session = await recordedSession(1);
    await expect(
      compact(session, { model: summarizer(), keepRecentTokens: -1 }),
    ).rejects.toMatchObject({
      code: 'INVALID_OPTIONS',
    });
  });
});

/** A model that streams through `doStream` and never looks at its abort signal. */
function deafModel(doStream: LanguageModelV3['doStream']): LanguageModelV3 {
  return {
    specificationVersion: 'v3',
    provider: 'deaf',
    modelId: 'deaf-model',
    supportedUrls: {},
    doGenerate: () => Promise.reject(new Error('not used')),
    doStream,
  };
}
