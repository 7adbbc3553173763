/**
 * Compile-time contract of `Session.append`: surface types require an intent, log-only types
 * refuse a surfaceOp, data is typed by event type. The `@ts-expect-error` lines are checked by
 * `npm run typecheck`; each such call is also run to show the runtime check behind it.
 */
import { describe, expect, expectTypeOf, it } from 'vitest';
import { elidedChunkData } from '../../src/core/backend.js';
import {
  type AssistantChunkData,
  type ElidedChunkData,
  type KnownEventType,
  Session,
  type SessionEvent,
  SessionValidationError,
  type SurfaceEventType,
  type UserMessage,
} from '../../src/core/index.js';
import { toolResult, user } from './builders.js';

describe('append overloads', () => {
  it('types a loaded chunk as possibly elided, but refuses a stub as appended data', () => {
    const session = Session.create();
    session.append('turn/start', { turn: 1 });
    session.append('step/start', { turn: 1, step: 1 });
    const chunk = session.append('assistant/chunk', {
      turn: 1,
      step: 1,
      chunk: { type: 'text-delta', id: 't', delta: 'hi' },
    });
    expectTypeOf(chunk.data).toEqualTypeOf<AssistantChunkData | ElidedChunkData>();
    // @ts-expect-error a stub is never appended, only loaded
    expect(() => session.append('assistant/chunk', elidedChunkData(12))).toThrowError(
      expect.objectContaining({ code: 'ELIDED_CHUNK_OUTSIDE_SEED' }),
    );
  });

  it('requires an intent for surface types at compile time and at run time', () => {
    const session = Session.create();
    // @ts-expect-error a user/message needs a SurfaceIntent
    expect(() => session.append('user/message', user('u', 'x'))).toThrow(SessionValidationError);
    const result = toolResult('r', 'c', 'x');
    // @ts-expect-error a tool/result needs a SurfaceIntent
    expect(() => session.append('tool/result', result)).toThrow(SessionValidationError);
    const event = session.append('user/message', user('u', 'x'), { surfaceOp: 'append' });
    expectTypeOf(event).toEqualTypeOf<SessionEvent<'user/message'>>();
    expectTypeOf(event.data).toEqualTypeOf<UserMessage>();
  });

  it('refuses a surfaceOp on log-only types at compile time and at run time', () => {
    const session = Session.create();
    // @ts-expect-error turn/start cannot carry a surfaceOp
    expect(() => session.append('turn/start', { turn: 1 }, { surfaceOp: 'append' })).toThrow(
      SessionValidationError,
    );
    expect(session.append('turn/start', { turn: 1 }).seq).toBe(0);
    expect(
      session.append(
        'turn/end',
        { turn: 1, reason: { kind: 'completed' } },
        { sourceEventSeqs: [0] },
      ).seq,
    ).toBe(1);
  });

  it('types the data of known events', () => {
    const session = Session.create();
    // @ts-expect-error turn must be a number
    expect(() => session.append('turn/start', { turn: 'one' })).toThrow(/data\.turn/);
    // @ts-expect-error a step/start needs a step
    expect(() => session.append('step/start', { turn: 1 })).toThrow(/data\.step/);
    expect(session.seq).toBe(0);
  });

  it('accepts any JSON for application types', () => {
    const session = Session.create();
    const event = session.append('my-app/note', { text: 'hi', tags: ['a'] });
    expectTypeOf(event).toEqualTypeOf<SessionEvent>();
    // @ts-expect-error application data must be JSON
    expect(() => session.append('my-app/note', { when: new Date() })).toThrow(
      SessionValidationError,
    );
  });

  it('compiles widened unions and checks them at run time', () => {
    const session = Session.create();
    const replay = (type: SurfaceEventType | 'turn/start', data: SessionEvent['data']): void => {
      const known = type as KnownEventType;
      void known;
      // A widened string compiles (the marker cannot be checked statically) and is checked at run time.
      session.append(type as string, data);
    };
    expect(() => replay('user/message', user('u', 'x') as never)).toThrow(/surfaceOp/);
    const union: 'user/message' | 'context/message' =
      Math.random() > 2 ? 'user/message' : 'context/message';
    expect(() => session.append(union, user('u', 'x'))).toThrow(SessionValidationError);
    expect(session.append(union, user('u', 'x'), { surfaceOp: 'append' }).seq).toBe(0);
  });
});
