/**
 * Compile-time contract of the event types: what the log holds is JSON by type, so it goes where
 * a `JsonValue` is expected without a cast. Checked by `npm run typecheck`.
 */
import { describe, expectTypeOf, it } from 'vitest';
import type {
  JsonValue,
  Message,
  SessionEventMap,
  SessionHeader,
  TokenUsage,
} from '../../src/core/index.js';

describe('event types', () => {
  it('types the data of every core event type as JSON', () => {
    expectTypeOf<SessionEventMap[keyof SessionEventMap]>().toExtend<JsonValue>();
    expectTypeOf<Message>().toExtend<JsonValue>();
    expectTypeOf<TokenUsage>().toExtend<JsonValue>();
  });

  it('types a session header as JSON', () => {
    expectTypeOf<SessionHeader>().toExtend<JsonValue>();
  });
});
