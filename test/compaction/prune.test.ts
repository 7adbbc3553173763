import { describe, expect, it } from 'vitest';
import { pruneToolResults } from '../../src/compaction/index.js';
import {
  checkInvariants,
  Session,
  type SessionEvent,
  type ToolResultData,
} from '../../src/core/index.js';
import { recordedSession } from './helpers.js';

function results(session: Session): SessionEvent[] {
  return session.surface.seqs
    .map((seq) => session.event(seq))
    .filter((event): event is SessionEvent => event?.type === 'tool/result');
}

function text(event: SessionEvent | undefined): string {
  const data = event?.data as unknown as ToolResultData;
  return data.message.content[0].content
    .map((block) => (block.type === 'text' ? block.text : ''))
    .join('');
}

describe('pruneToolResults', () => {
  it('replaces old large results with a head/tail excerpt naming the original event', async () => {
    const session = await recordedSession(5, 5000);
    const originals = results(session);
    const result = pruneToolResults(session, {
      keepRecentTurns: 2,
      minChars: 2000,
      headChars: 100,
      tailChars: 50,
    });

    expect(result.prunedSeqs).toEqual(originals.slice(0, 3).map((event) => event.seq));
    for (const [index, seq] of result.prunedSeqs.entries()) {
      const replacement = session.event(result.replacementSeqs[index] ?? -1);
      expect(replacement?.surfaceOp).toEqual({ op: 'replace', start: seq, end: seq });
      expect(replacement?.sourceEventSeqs).toEqual([seq]);
      const excerpt = text(replacement);
      const original = text(session.event(seq));
      expect(excerpt.startsWith(original.slice(0, 100))).toBe(true);
      expect(excerpt.endsWith(original.slice(-50))).toBe(true);
      expect(excerpt).toContain(`4,850 of 5,000 characters pruned`);
      expect(excerpt).toContain(`event #${seq}`);
    }
    expect(result.tokensAfter).toBeLessThan(result.tokensBefore);
    expect(checkInvariants(session.events, { requireClosed: true })).toEqual([]);
  });

  it('keeps every data field of the result but its content', async () => {
    const session = await recordedSession(4, 5000);
    const [first] = pruneToolResults(session, { keepRecentTurns: 1 }).prunedSeqs;
    const original = session.event(first ?? -1)?.data as unknown as ToolResultData;
    const replacement = session.event(
      session.surface.seqs.find((seq) => session.event(seq)?.sourceEventSeqs?.[0] === first) ?? -1,
    )?.data as unknown as ToolResultData;
    expect({ ...replacement, message: { ...replacement.message, content: [] } }).toEqual({
      ...original,
      message: { ...original.message, content: [] },
    });
    expect(replacement.message.content[0].toolCallId).toBe(original.message.content[0].toolCallId);
  });

  it('brackets the prunes in one compaction/start … compaction/end with the counts', async () => {
    const session = await recordedSession(4, 5000);
    const start = session.seq;
    const result = pruneToolResults(session, { keepRecentTurns: 1 });
    const types = session.events.slice(start).map((event) => event.type);
    expect(types).toEqual([
      'compaction/start',
      'tool/result',
      'tool/result',
      'tool/result',
      'compaction/end',
    ]);
    expect(session.event(session.seq - 1)?.data).toMatchObject({
      id: result.id,
      kind: 'prune',
      pruned: 3,
      charsBefore: 15000,
      charsAfter: result.charsAfter,
    });
  });

  it('leaves the recent turns and small results alone', async () => {
    const session = await recordedSession(3, 500);
    const length = session.seq;
    expect(pruneToolResults(session, { keepRecentTurns: 0, minChars: 1000 }).prunedSeqs).toEqual(
      [],
    );
    expect(pruneToolResults(session, { keepRecentTurns: 3, minChars: 10 }).prunedSeqs).toEqual([]);
    expect(session.seq).toBe(length);
  });

  it('is idempotent: a pruned result is never pruned again, and a second run appends nothing', async () => {
    const session = await recordedSession(4, 5000);
    expect(pruneToolResults(session, { keepRecentTurns: 1 }).prunedSeqs).toHaveLength(3);
    const length = session.seq;
    const newest = results(session).at(-1)?.seq;
    expect(
      pruneToolResults(session, { keepRecentTurns: 0, minChars: 10, headChars: 1, tailChars: 1 })
        .prunedSeqs,
    ).toEqual([newest]);
    const after = session.seq;
    expect(after).toBeGreaterThan(length);
    expect(pruneToolResults(session, { keepRecentTurns: 0, minChars: 10 }).prunedSeqs).toEqual([]);
    expect(session.seq).toBe(after);
  });

  it('cuts by code points, never inside a surrogate pair, and keeps images in order', () => {
    const session = Session.create();
    session.append('turn/start', { turn: 1 });
    session.append(
      'user/message',
      { id: 'u', role: 'user', content: [{ type: 'text', text: 'go' }], source: { kind: 'user' } },
      { surfaceOp: 'append' },
    );
    session.append('step/start', { turn: 1, step: 1 });
    session.append(
      'assistant/message',
      {
        turn: 1,
        step: 1,
        finishReason: 'tool-calls',
        message: {
          id: 'a',
          role: 'assistant',
          content: [{ type: 'tool-call', id: 'c', name: 'shot', arguments: '{}' }],
          source: { kind: 'model', provider: 'p', model: 'm' },
        },
      },
      { surfaceOp: 'append' },
    );
    const call = session.append('tool/call', {
      turn: 1,
      step: 1,
      callId: 'c',
      name: 'shot',
      arguments: '{}',
    });
    const original = session.append(
      'tool/result',
      {
        turn: 1,
        step: 1,
        message: {
          id: 't',
          role: 'tool',
          content: [
            {
              type: 'tool-result',
              toolCallId: 'c',
              content: [
                { type: 'text', text: '😀'.repeat(3000) },
                { type: 'image', mediaType: 'image/png', data: 'iVBO' },
              ],
            },
          ],
        },
      },
      { surfaceOp: 'append', sourceEventSeqs: [call.seq] },
    );
    session.append('step/end', { turn: 1, step: 1 });
    session.append('turn/end', { turn: 1, reason: { kind: 'completed' } });
    session.append('turn/start', { turn: 2 });
    session.append('turn/end', { turn: 2, reason: { kind: 'completed' } });

    const result = pruneToolResults(session, {
      keepRecentTurns: 1,
      minChars: 100,
      headChars: 5,
      tailChars: 5,
    });
    expect(result.prunedSeqs).toEqual([original.seq]);
    const replaced = session.event(result.replacementSeqs[0] ?? -1)
      ?.data as unknown as ToolResultData;
    const blocks = replaced.message.content[0].content;
    expect(blocks.map((block) => block.type)).toEqual(['text', 'image']);
    const excerpt = blocks[0]?.type === 'text' ? blocks[0].text : '';
    expect(excerpt.startsWith('😀'.repeat(5))).toBe(true);
    expect(excerpt.endsWith('😀'.repeat(5))).toBe(true);
    expect(excerpt).toContain('2,990 of 3,000 characters');
    const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
    expect(loneSurrogate.test(excerpt)).toBe(false);
  });

  it('refuses a negative option', async () => {
    const session = await recordedSession(1);
    expect(() => pruneToolResults(session, { minChars: -5 })).toThrow(/minChars/);
  });
});
