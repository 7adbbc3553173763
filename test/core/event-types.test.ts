/**
 * Compile-time contract of the event types: comparing `event.type` with a declared type narrows
 * `event.data`, an event of any other type is a `ForeignEvent` read through `dataAsJson`, and what
 * the log holds is JSON by type, so it goes where a `JsonValue` is expected without a cast. The
 * `expectTypeOf` lines are checked by `npm run typecheck`.
 */
import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  dataAsJson,
  type ForeignEvent,
  isEventOfType,
  type JsonValue,
  type Message,
  Session,
  type SessionEvent,
  type SessionEventMap,
  type SessionHeader,
  type TokenUsage,
  type ToolResultData,
  type TurnStartData,
} from '../../src/core/index.js';
import { toolResult } from './builders.js';

function session(): Session {
  const session = Session.create();
  session.append('turn/start', { turn: 1 });
  session.append('my-app/note', { text: 'kept verbatim' });
  session.append('tool/result', toolResult('r1', 'c1', 'done'), { surfaceOp: 'append' });
  return session;
}

describe('event types', () => {
  it('narrows the data of a session event by comparing its type', () => {
    const seen: string[] = [];
    for (const event of session().events) {
      switch (event.type) {
        case 'turn/start':
          expectTypeOf(event.data).toEqualTypeOf<TurnStartData>();
          seen.push(`turn ${event.data.turn}`);
          break;
        case 'tool/result':
          expectTypeOf(event.data).toEqualTypeOf<ToolResultData>();
          seen.push(event.data.message.content[0].toolCallId);
          break;
        case 'my-app/note':
          expectTypeOf(event).toEqualTypeOf<ForeignEvent>();
          seen.push(JSON.stringify(dataAsJson(event)));
          break;
        default:
          seen.push(event.type);
      }
    }
    expect(seen).toEqual(['turn 1', '{"text":"kept verbatim"}', 'c1']);
  });

  it('narrows the event itself, not just its data, with isEventOfType', () => {
    const [start] = session().events;
    if (start === undefined || !isEventOfType(start, 'turn/start')) throw new Error('no start');
    expectTypeOf(start).toEqualTypeOf<SessionEvent<'turn/start'>>();
    expect(start.data.turn).toBe(1);
  });

  it('types the data of an undeclared type as never, so it is read as JSON', () => {
    const note = session().append('my-app/note', { text: 'hi' });
    expectTypeOf(note).toEqualTypeOf<SessionEvent>();
    expectTypeOf<SessionEvent<'my-app/note'>>().toEqualTypeOf<ForeignEvent<'my-app/note'>>();
    expectTypeOf<ForeignEvent['data']>().toBeNever();
    expectTypeOf(dataAsJson(note)).toEqualTypeOf<JsonValue>();
    expect(dataAsJson(note)).toEqual({ text: 'hi' });
  });

  it('types the data of every core event type as JSON', () => {
    expectTypeOf<SessionEventMap[keyof SessionEventMap]>().toExtend<JsonValue>();
    expectTypeOf<Message>().toExtend<JsonValue>();
    expectTypeOf<TokenUsage>().toExtend<JsonValue>();
  });

  it('types a session event and a session header as JSON', () => {
    expectTypeOf<SessionEvent>().toExtend<JsonValue>();
    expectTypeOf<SessionHeader>().toExtend<JsonValue>();
  });
});
