/**
 * Partial answers are one policy (issue 12): the text a response had streamed when it was cut
 * stays on the surface, marked interrupted, whether the cut was an abort, a provider failure
 * or a crash that repair closes.
 */
import { describe, expect, it } from 'vitest';
import {
  type AssistantMessageData,
  checkInvariants,
  planRepair,
  Session,
  type SessionEvent,
} from '../../src/core/index.js';

/** The events of a turn whose writer died while the model streamed "Hello wor". */
function crashedMidStream(): SessionEvent[] {
  const session = Session.create({ id: 'crash' });
  session.append('turn/start', { turn: 1 });
  session.append(
    'user/message',
    { id: 'u1', role: 'user', content: [{ type: 'text', text: 'hi' }], source: { kind: 'user' } },
    { surfaceOp: 'append' },
  );
  session.append('step/start', { turn: 1, step: 1 });
  session.append('request/header', { provider: 'acme', model: 'acme-1' });
  const chunk = (c: Record<string, string>) =>
    session.append('assistant/chunk', { turn: 1, step: 1, chunk: { type: 'x', ...c } });
  // A failed first attempt, closed by request/retry: not part of the partial answer.
  chunk({ type: 'text-delta', id: 'a', delta: 'Doomed' });
  session.append('request/retry', {
    turn: 1,
    step: 1,
    attempt: 1,
    delayMs: 10,
    error: { message: 'busy' },
  });
  chunk({ type: 'reasoning-delta', id: 'r', delta: 'Think' });
  chunk({ type: 'text-start', id: 't' });
  chunk({ type: 'text-delta', id: 't', delta: 'Hello' });
  chunk({ type: 'text-delta', id: 't', delta: ' wor' });
  return [...session.events];
}

describe('crash repair keeps a partial answer', () => {
  it('appends an interrupted assistant message built from the open attempt’s chunks, citing them', () => {
    const events = crashedMidStream();
    const closers = planRepair(events);
    expect(closers.map((event) => event.type)).toEqual([
      'assistant/message',
      'step/end',
      'turn/end',
    ]);
    const [message] = closers;
    const data = message?.data as unknown as AssistantMessageData;
    expect(data).toMatchObject({ turn: 1, step: 1, interrupted: true, finishReason: 'unknown' });
    expect(data.message.source).toEqual({ kind: 'model', provider: 'acme', model: 'acme-1' });
    expect(data.message.content.slice(0, 2)).toEqual([
      { type: 'reasoning', text: 'Think' },
      { type: 'text', text: 'Hello wor' },
    ]);
    expect(data.message.content[2]).toMatchObject({
      type: 'text',
      text: expect.stringMatching(/interrupted/),
    });
    expect(message?.sourceEventSeqs).toEqual([6, 7, 8, 9]);
    const repaired = [...events, ...closers];
    expect(checkInvariants(repaired, { requireClosed: true })).toEqual([]);
    expect(planRepair(repaired)).toEqual([]);
    expect(planRepair(events)).toEqual(closers);
  });
});
