/**
 * The conversation view's pure parts: which events become entries (a turn's separator, a
 * message, a rewrite where it happened, the end of a cut turn), which results fold into their
 * call's card, and what a separator, a cut turn, a tool card's arguments and an image say.
 */
import { describe, expect, it } from 'vitest';
import { Session } from '../../src/core/index.js';
import {
  argumentsText,
  ConversationIndex,
  callKey,
  cutText,
  durationText,
  imageSource,
  separatorText,
  speaker,
} from '../../src/viewer/page/conversation-model.js';

import {
  assistant,
  context,
  recordToolTurn,
  tickingClock,
  toolResult,
  user,
} from '../core/builders.js';

const kinds = (index: ConversationIndex): string[] =>
  index.entries.map((entry) =>
    entry.kind === 'turn' ? `turn ${entry.info.turn}` : `${entry.kind} #${entry.seq}`,
  );

describe('the conversation index', () => {
  it('draws a tool result inside its call’s card, not as a message of its own', () => {
    const session = Session.create({ clock: tickingClock() });
    const seqs = recordToolTurn(session, 1);
    const index = ConversationIndex.of(session.events);
    expect(kinds(index)).toEqual([
      'turn 1',
      `message #${seqs.user}`,
      `message #${seqs.user + 3}`,
      `message #${seqs.answer}`,
    ]);
    expect(index.calls.get(callKey(seqs.user + 3, 'c1'))).toEqual({
      callSeq: seqs.call,
      resultSeq: seqs.result,
    });
  });

  it('gives a call id that comes again in a later turn its own result', () => {
    const session = Session.create({ clock: tickingClock() });
    const first = recordToolTurn(session, 1);
    // The second turn asks again with the first turn's call id.
    session.append('turn/start', { turn: 2 });
    const ask = session.append(
      'assistant/message',
      assistant('a2', '', [{ id: 'c1', name: 'ls' }], { turn: 2, step: 1 }),
      {
        surfaceOp: 'append',
      },
    );
    const again = session.append(
      'tool/result',
      toolResult('r2', 'c1', 'second', { turn: 2, step: 1 }),
      {
        surfaceOp: 'append',
      },
    );
    const index = ConversationIndex.of(session.events);
    expect(index.calls.get(callKey(first.user + 3, 'c1'))?.resultSeq).toBe(first.result);
    expect(index.calls.get(callKey(ask.seq, 'c1'))).toEqual({ resultSeq: again.seq });
    expect(index.latestKey('c1')).toBe(callKey(ask.seq, 'c1'));
  });

  it('keeps a result whose call no message asked for as a message of its own', () => {
    const session = Session.create();
    session.append('turn/start', { turn: 1 });
    const orphan = session.append('tool/result', toolResult('r', 'nobody', 'out'), {
      surfaceOp: 'append',
    });
    expect(kinds(ConversationIndex.of(session.events))).toEqual([
      'turn 1',
      `message #${orphan.seq}`,
    ]);
  });

  it('puts a compaction where it happened and ends a cut turn with a note', () => {
    const session = Session.create({ clock: tickingClock() });
    session.append('turn/start', { turn: 1 });
    session.append('user/message', user('u1', 'one'), { surfaceOp: 'append' });
    session.append('user/message', user('u2', 'two'), { surfaceOp: 'append' });
    const summary = session.append(
      'context/message',
      { ...context('s', 'summary'), source: { kind: 'compaction', id: 's' } },
      {
        surfaceOp: { op: 'replace', start: 1, end: 2 },
        sourceEventSeqs: [1, 2],
      },
    );
    const end = session.append('turn/end', { turn: 1, reason: { kind: 'aborted', cause: 'user' } });
    const index = ConversationIndex.of(session.events);
    expect(kinds(index)).toEqual([
      'turn 1',
      'message #1',
      'message #2',
      `rewrite #${summary.seq}`,
      `cut #${end.seq}`,
    ]);
    expect(index.openTurn).toBeUndefined();
  });

  it('says what is new in a live batch, and closes the open turn when its end arrives', () => {
    const session = Session.create({ clock: tickingClock(1_000) });
    const index = new ConversationIndex();
    const start = session.append('turn/start', { turn: 4 });
    expect(index.add(start)).toHaveLength(1);
    expect(separatorText(index.openTurn ?? fail())).toBe(
      'turn 4 · no model call · 1970-01-01 00:00:01 · still open',
    );
    const end = session.append('turn/end', { turn: 4, reason: { kind: 'completed' } });
    expect(index.add(end)).toEqual([]);
    const [entry] = index.entries;
    expect(entry?.kind === 'turn' && separatorText(entry.info)).toBe(
      'turn 4 · no model call · 1970-01-01 00:00:01 · 1 ms',
    );
  });
});

function fail(): never {
  throw new Error('expected an open turn');
}

describe('the words of the conversation', () => {
  it('names the models of a turn and its outcome when it did not complete', () => {
    expect(
      separatorText({
        turn: 2,
        startSeq: 9,
        startTime: Date.UTC(2026, 4, 1, 10),
        models: ['openai:gpt-4o', 'anthropic:claude'],
        endTime: Date.UTC(2026, 4, 1, 10) + 4_200,
        outcome: 'error',
      }),
    ).toBe('turn 2 · openai:gpt-4o, anthropic:claude · 2026-05-01 10:00:00 · 4.2 s · error');
  });

  it('says durations as a person would', () => {
    expect([850, 4_200, 725_000, 12_000_000, -1].map(durationText)).toEqual([
      '850 ms',
      '4.2 s',
      '12 min 5 s',
      '3 h 20 min',
      '-',
    ]);
  });

  it('says why a turn was cut', () => {
    expect(cutText({ kind: 'aborted', cause: 'user' })).toBe('The turn was cut: aborted (user).');
    expect(cutText({ kind: 'interrupted' })).toContain('a repair closed it');
    expect(cutText({ kind: 'max-steps', maxSteps: 8 })).toBe(
      'The turn was cut at its step limit (8).',
    );
  });

  it('shows a call’s arguments as pretty JSON, or as written when they do not parse', () => {
    expect(argumentsText('{"path":"a.ts","line":3}')).toBe('{\n  "path": "a.ts",\n  "line": 3\n}');
    expect(argumentsText('{"path": "a.ts"')).toBe('{"path": "a.ts"');
  });

  it('draws only raster images with base64 data, as data: URLs', () => {
    expect(imageSource({ type: 'image', mediaType: 'image/PNG', data: 'iVBORw0KGgo=' })).toBe(
      'data:image/png;base64,iVBORw0KGgo=',
    );
    expect(
      imageSource({ type: 'image', mediaType: 'image/svg+xml', data: 'PHN2Zz4=' }),
    ).toBeUndefined();
    expect(
      imageSource({ type: 'image', mediaType: 'image/png', data: '"><script>' }),
    ).toBeUndefined();
    expect(
      imageSource({ type: 'image', mediaType: 'image/png', url: 'https://x.test/a.png' }),
    ).toBeUndefined();
  });

  it('names who speaks: a summary, injected context, the user, the assistant, a tool', () => {
    const session = Session.create();
    const ctx = session.append('context/message', context('c', 'x'), { surfaceOp: 'append' });
    const typed = session.append('user/message', user('u', 'x'), { surfaceOp: 'append' });
    expect(speaker(ctx, 'user', 'compaction')).toBe('summary');
    expect(speaker(ctx, 'user', 'context')).toBe('context');
    expect(speaker(typed, 'user', 'user')).toBe('user');
    expect(speaker(typed, 'assistant', 'model')).toBe('assistant');
    expect(speaker(typed, 'tool', undefined)).toBe('tool result');
  });
});
