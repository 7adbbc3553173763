/**
 * Every error code of the core is reachable, carries its code and says what was expected and
 * found. The `Record` types make this file fail to compile when a code is added without a case.
 */
import { describe, expect, it } from 'vitest';
import { elidedChunkData } from '../../src/core/backend.js';
import {
  ForkError,
  type ForkErrorCode,
  forkSession,
  InvalidArgumentError,
  PalimpsestError,
  Session,
  type SessionValidationCode,
  SessionValidationError,
} from '../../src/core/index.js';
import { assistant, event, toolResult, user } from './builders.js';

type LooseAppend = (type: string, data: unknown, intent?: unknown) => unknown;

/** A session with user messages at seqs 0..2 and a tool result at seq 3. */
function fixture(): { session: Session; append: LooseAppend } {
  const session = Session.create({ id: 'codes', onListenerError: () => {} });
  for (let i = 0; i < 3; i++)
    session.append('user/message', user(`u${i}`, 'x'), { surfaceOp: 'append' });
  session.append('tool/result', toolResult('r', 'c', 'long result'), { surfaceOp: 'append' });
  return { session, append: session.append.bind(session) as LooseAppend };
}

const replace = (start: number, end: number, sources?: number[]) => ({
  surfaceOp: { op: 'replace', start, end },
  ...(sources === undefined ? {} : { sourceEventSeqs: sources }),
});

/** A finished step whose one chunk is elided, as a store's fast-path load hands it over. */
function elidedSeed(): unknown[] {
  return [
    event(0, 'turn/start', { turn: 1 }),
    event(1, 'step/start', { turn: 1, step: 1 }),
    event(2, 'assistant/chunk', elidedChunkData(40)),
    event(3, 'assistant/message', assistant('a', 'hi', [], { turn: 1, step: 1 }), {
      surfaceOp: 'append',
      sourceEventSeqs: [2],
    }),
    event(4, 'step/end', { turn: 1, step: 1 }),
    event(5, 'turn/end', { turn: 1, reason: { kind: 'completed' } }),
  ];
}

const triggers: Record<SessionValidationCode, () => unknown> = {
  INVALID_EVENT_TYPE: () => fixture().append('Bad Type', 1),
  INVALID_ENVELOPE: () => Session.create({ seed: [{ seq: 0, time: 0, type: 'app/x' }] }),
  INVALID_TIME: () => Session.create({ seed: [{ seq: 0, time: '0', type: 'app/x', data: 1 }] }),
  SEQ_NOT_CONTIGUOUS: () => Session.create({ seed: [event(1, 'app/x', 1)] }),
  NON_JSON_DATA: () => fixture().append('app/x', { value: Number.NaN }),
  DATA_LIMIT_EXCEEDED: () => Session.create({ limits: { maxChars: 3 } }).append('app/x', 'four'),
  SURFACE_OP_REQUIRED: () => fixture().append('context/message', user('c', 'x')),
  SURFACE_OP_FORBIDDEN: () => fixture().append('app/x', {}, { surfaceOp: 'append' }),
  INVALID_SURFACE_OP: () =>
    fixture().append('user/message', user('u', 'x'), { surfaceOp: 'insert' }),
  REPLACE_ENDPOINT_NOT_ON_SURFACE: () =>
    fixture().append('user/message', user('s', 'x'), replace(0, 7, [0])),
  REPLACE_RANGE_REVERSED: () =>
    fixture().append('user/message', user('s', 'x'), replace(2, 0, [0, 1, 2])),
  INVALID_SOURCE_EVENT_SEQS: () => fixture().append('app/x', 1, { sourceEventSeqs: [1, 1] }),
  EMPTY_SOURCE_EVENT_SEQS: () =>
    fixture().append('tool/result', toolResult('r', 'c', 'x'), {
      surfaceOp: 'append',
      sourceEventSeqs: [],
    }),
  REPLACE_SOURCES_INCOMPLETE: () =>
    fixture().append('user/message', user('s', 'x'), replace(0, 2, [0, 2])),
  TOOL_RESULT_REWRITE_INVALID: () =>
    fixture().append('tool/result', toolResult('r2', 'c', 'x'), replace(3, 3, [3])),
  INVALID_MESSAGE: () => fixture().append('user/message', { id: 'u' }, { surfaceOp: 'append' }),
  INVALID_EVENT_DATA: () => fixture().append('turn/end', { turn: 1, reason: { kind: 'finished' } }),
  INVALID_HEADER: () => Session.create({ header: { version: 1, id: 'x', createdAt: -1 } }),
  REENTRANT_APPEND: () => {
    const { session } = fixture();
    let inner: unknown;
    session.subscribe(() => {
      try {
        session.append('app/inner', 1);
      } catch (error) {
        inner = error;
      }
    });
    session.append('app/outer', 1);
    throw inner;
  },
  ELIDED_CHUNK_OUTSIDE_SEED: () => fixture().append('assistant/chunk', elidedChunkData(12)),
  ELIDED_CHUNK_NOT_FINISHED: () => Session.create({ seed: elidedSeed().slice(0, 3) }),
};

const forkTriggers: Record<ForkErrorCode, () => unknown> = {
  INVALID_BOUNDARY: () => forkSession(fixture().session, 99),
  OPEN_TURN: () => {
    const session = Session.create();
    session.append('turn/start', { turn: 1 });
    return forkSession(session);
  },
  ELIDED_CHUNKS: () => forkSession(Session.create({ seed: elidedSeed() })),
};

describe('error codes', () => {
  for (const [code, trigger] of Object.entries(triggers)) {
    it(`reaches SessionValidationError ${code} with a short message`, () => {
      let caught: unknown;
      try {
        trigger();
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(SessionValidationError);
      expect(PalimpsestError.isInstance(caught)).toBe(true);
      const error = caught as SessionValidationError;
      expect(error.code).toBe(code);
      expect(error.message.length).toBeLessThan(320);
    });
  }

  for (const [code, trigger] of Object.entries(forkTriggers)) {
    it(`reaches ForkError ${code}`, () => {
      expect(trigger).toThrow(ForkError);
      try {
        trigger();
      } catch (error) {
        expect((error as ForkError).code).toBe(code);
      }
    });
  }

  it('reaches InvalidArgumentError INVALID_ARGUMENT', () => {
    expect(() => fixture().session.messagesAt(-1)).toThrow(InvalidArgumentError);
  });

  it('names the seq and type of the rejected event, and what was expected and found', () => {
    expect(() =>
      fixture().append('user/message', user('s', 'x'), replace(2, 0, [0, 1, 2])),
    ).toThrow(
      "event seq 4, type 'user/message': replace start seq 2 (surface position 2) comes after end seq 0 (position 0)",
    );
  });
});
