/**
 * The log linter: turn/step nesting, tool call/result pairing and provenance kinds.
 */
import { describe, expect, it } from 'vitest';
import {
  checkInvariants,
  type InvariantCode,
  Session,
  type SessionEvent,
} from '../../src/core/index.js';
import { assistant, event, recordToolTurn, tickingClock, toolResult, user } from './builders.js';

function codes(events: readonly SessionEvent[]): InvariantCode[] {
  return checkInvariants(events).map((violation) => violation.code);
}

function raw(events: readonly Omit<SessionEvent, 'seq' | 'time'>[]): SessionEvent[] {
  return events.map((event, seq) => ({ ...event, seq, time: 0 }) as SessionEvent);
}

describe('checkInvariants', () => {
  it('finds nothing wrong in well-formed turns with tool round trips', () => {
    const session = Session.create({ clock: tickingClock() });
    recordToolTurn(session, 1);
    session.append('user/message', user('between', 'between turns is fine'), {
      surfaceOp: 'append',
    });
    recordToolTurn(session, 2);
    expect(checkInvariants(session.events, { requireClosed: true })).toEqual([]);
  });

  it('reports turns that overlap, end without starting or skip numbers', () => {
    expect(
      codes(
        raw([
          { type: 'turn/start', data: { turn: 1 } },
          { type: 'turn/start', data: { turn: 2 } },
        ]),
      ),
    ).toEqual(['TURN_ALREADY_OPEN']);
    expect(
      codes(raw([{ type: 'turn/end', data: { turn: 1, reason: { kind: 'completed' } } }])),
    ).toEqual(['TURN_NOT_OPEN']);
    expect(codes(raw([{ type: 'turn/start', data: { turn: 3 } }]))).toEqual(['TURN_NUMBER']);
  });

  it('reports steps outside turns, overlapping steps, misnumbered steps and turns ending inside a step', () => {
    expect(codes(raw([{ type: 'step/start', data: { turn: 1, step: 1 } }]))).toEqual([
      'TURN_NOT_OPEN',
    ]);
    expect(
      codes(
        raw([
          { type: 'turn/start', data: { turn: 1 } },
          { type: 'step/start', data: { turn: 1, step: 2 } },
          { type: 'step/start', data: { turn: 1, step: 3 } },
          { type: 'turn/end', data: { turn: 1, reason: { kind: 'completed' } } },
        ]),
      ),
    ).toEqual(['STEP_NUMBER', 'STEP_ALREADY_OPEN', 'STEP_ALREADY_OPEN']);
    expect(
      codes(
        raw([
          { type: 'turn/start', data: { turn: 1 } },
          { type: 'step/end', data: { turn: 1, step: 1 } },
        ]),
      ),
    ).toEqual(['STEP_NOT_OPEN']);
  });

  it('reports model and tool events outside the step they name, and request headers outside turns', () => {
    expect(
      codes(
        raw([
          { type: 'request/header', data: { provider: 'p', model: 'm' } },
          { type: 'turn/start', data: { turn: 1 } },
          { type: 'assistant/chunk', data: { turn: 1, step: 1, chunk: { type: 'text-delta' } } },
          { type: 'step/start', data: { turn: 1, step: 1 } },
          {
            type: 'tool/call',
            data: { turn: 1, step: 2, callId: 'c', name: 'n', arguments: '{}' },
          },
        ]),
      ),
    ).toEqual(['OUTSIDE_TURN', 'OUTSIDE_STEP', 'OUTSIDE_STEP']);
  });

  it('reports unanswered calls, unrequested calls and duplicate results', () => {
    const at = { turn: 1, step: 1 };
    const log = raw([
      { type: 'turn/start', data: { turn: 1 } },
      { type: 'step/start', data: at },
      {
        type: 'assistant/message',
        data: assistant('a', '', [
          { id: 'c1', name: 'ls' },
          { id: 'c2', name: 'ls' },
        ]),
        surfaceOp: 'append',
      },
      { type: 'tool/call', data: { ...at, callId: 'zz', name: 'ls', arguments: '{}' } },
      { type: 'tool/result', data: toolResult('r1', 'c1', 'ok'), surfaceOp: 'append' },
      { type: 'tool/result', data: toolResult('r1b', 'c1', 'again'), surfaceOp: 'append' },
      { type: 'step/end', data: at },
    ] as never);
    expect(codes(log)).toEqual([
      'TOOL_CALL_NOT_REQUESTED',
      'DUPLICATE_TOOL_EVENT',
      'TOOL_CALL_UNANSWERED',
      'SURFACE_TOOL_PAIRING',
    ]);
  });

  it('reports provenance of the wrong kind', () => {
    const at = { turn: 1, step: 1 };
    const log = raw([
      { type: 'turn/start', data: { turn: 1 } },
      { type: 'user/message', data: user('u', 'q'), surfaceOp: 'append' },
      { type: 'step/start', data: at },
      { type: 'assistant/chunk', data: { ...at, chunk: { type: 'text-delta' } } },
      {
        type: 'assistant/message',
        data: assistant('a', 'x', [{ id: 'c1', name: 'ls' }]),
        surfaceOp: 'append',
        sourceEventSeqs: [1, 3],
      },
      { type: 'tool/call', data: { ...at, callId: 'c1', name: 'ls', arguments: '{}' } },
      {
        type: 'tool/result',
        data: toolResult('r', 'c1', 'ok'),
        surfaceOp: 'append',
        sourceEventSeqs: [4],
      },
      { type: 'step/end', data: at },
      { type: 'turn/end', data: { turn: 1, reason: { kind: 'completed' } } },
    ] as never);
    const violations = checkInvariants(log);
    expect(violations.map((violation) => [violation.code, violation.seq])).toEqual([
      ['PROVENANCE_KIND', 4],
      ['PROVENANCE_KIND', 6],
    ]);
    expect(violations[0]?.message).toContain('seq 1 (user/message)');
  });

  it('reports a log that ends inside a turn only when asked to require closed turns', () => {
    const log = raw([{ type: 'turn/start', data: { turn: 1 } }]);
    expect(codes(log)).toEqual([]);
    expect(
      checkInvariants(log, { requireClosed: true }).map((violation) => violation.code),
    ).toEqual(['OPEN_AT_END']);
  });

  it('reports malformed data instead of throwing', () => {
    const log = raw([
      { type: 'turn/start', data: 'one' },
      { type: 'turn/start', data: { turn: 1 } },
      { type: 'step/start', data: null },
      { type: 'assistant/chunk', data: [] },
      { type: 'tool/call', data: { turn: 1 } },
    ] as never);
    expect(codes(log)).toEqual([
      'MALFORMED_DATA',
      'MALFORMED_DATA',
      'MALFORMED_DATA',
      'MALFORMED_DATA',
      'INVALID_LOG',
    ]);
  });

  it('reports a surface on which a replace separated a tool call from its result', () => {
    const session = Session.create({ clock: tickingClock() });
    const turn = recordToolTurn(session, 1);
    session.append('user/message', user('s', 'summary of the request only'), {
      surfaceOp: { op: 'replace', start: turn.user, end: 4 },
      sourceEventSeqs: [turn.user, 4],
    });
    const violations = checkInvariants(session.events);
    expect(violations.map((violation) => [violation.code, violation.seq])).toEqual([
      ['SURFACE_TOOL_PAIRING', turn.result],
    ]);
  });

  it('reports a call left unanswered before the next message on the surface', () => {
    const log = raw([
      {
        type: 'assistant/message',
        data: assistant('a', '', [{ id: 'c1', name: 'ls' }]),
        surfaceOp: 'append',
      },
      { type: 'user/message', data: user('u', 'interrupting'), surfaceOp: 'append' },
    ] as never);
    expect(codes(log)).toEqual(['OUTSIDE_STEP', 'SURFACE_TOOL_PAIRING']);
  });

  it('reports malformed turn endings, tool calls and request headers', () => {
    const log = raw([
      { type: 'turn/start', data: { turn: 1 } },
      { type: 'request/header', data: { provider: 'p' } },
      { type: 'step/start', data: { turn: 1, step: 1 } },
      {
        type: 'assistant/message',
        data: assistant('a', '', [{ id: 'c1', name: 'ls' }]),
        surfaceOp: 'append',
      },
      { type: 'tool/call', data: { turn: 1, step: 1, callId: 'c1', name: 'ls', arguments: {} } },
      { type: 'tool/result', data: toolResult('r', 'c1', 'ok'), surfaceOp: 'append' },
      { type: 'step/end', data: { turn: 1, step: 1 } },
      { type: 'turn/end', data: { turn: 1, reason: { kind: 'finished' } } },
    ] as never);
    expect(checkInvariants(log).map((violation) => [violation.code, violation.seq])).toEqual([
      ['MALFORMED_DATA', 1],
      ['MALFORMED_DATA', 4],
      ['MALFORMED_DATA', 7],
      ['INVALID_LOG', 1],
    ]);
  });

  it('reports a log that a session would refuse instead of throwing', () => {
    const log = raw([
      { type: 'user/message', data: user('u', 'q'), surfaceOp: 'append' },
      {
        type: 'user/message',
        data: user('s', 's'),
        surfaceOp: { op: 'replace', start: 0, end: 0 },
      },
    ] as never);
    const violations = checkInvariants(log);
    expect(violations.map((violation) => [violation.code, violation.seq])).toEqual([
      ['INVALID_LOG', 1],
    ]);
    expect(violations[0]?.message).toContain('missing 0');
  });

  it('locates a refused log at the refused entry, even when entries are not objects', () => {
    const log = [event(0, 'app/x', 1), null, event(2, 'app/x', 1)] as unknown as SessionEvent[];
    const violations = checkInvariants(log);
    expect(violations.map((violation) => [violation.code, violation.seq])).toEqual([
      ['INVALID_LOG', 1],
    ]);
    expect(violations[0]?.message).toContain('(INVALID_ENVELOPE)');
  });

  it('reports a queued message delivered twice, or a delivery that cites no queue event of its kind', () => {
    const queued = {
      id: 'q1',
      role: 'user',
      content: [{ type: 'text', text: 'x' }],
      source: { kind: 'user' },
    };
    const delivered = (kind: string) => ({
      ...queued,
      source: { kind, queued: 0 },
    });
    const log = raw([
      { type: 'queue/steer', data: queued },
      { type: 'user/message', data: delivered('steer'), surfaceOp: 'append', sourceEventSeqs: [0] },
      { type: 'user/message', data: delivered('steer'), surfaceOp: 'append', sourceEventSeqs: [0] },
      {
        type: 'user/message',
        data: delivered('follow-up'),
        surfaceOp: 'append',
        sourceEventSeqs: [0],
      },
      { type: 'user/message', data: delivered('user'), surfaceOp: 'append', sourceEventSeqs: [0] },
    ]);
    expect(checkInvariants(log).map(({ code, seq }) => `${code}@${seq}`)).toEqual([
      'QUEUE_DELIVERY@2',
      'QUEUE_DELIVERY@3',
      'QUEUE_DELIVERY@4',
    ]);
  });

  it('reports a request/overflow outside a turn or inside a step', () => {
    const overflow = {
      type: 'request/overflow',
      data: { turn: 1, step: 1, error: { message: 'too long' } },
    };
    expect(codes(raw([overflow]))).toEqual(['OUTSIDE_TURN']);
    expect(
      codes(
        raw([
          { type: 'turn/start', data: { turn: 1 } },
          { type: 'step/start', data: { turn: 1, step: 1 } },
          overflow,
        ]),
      ),
    ).toEqual(['OUTSIDE_TURN']);
  });
});
