/**
 * Crash repair (DESIGN §5): the closers planned for a log whose last turn is still open.
 */
import { describe, expect, it } from 'vitest';
import {
  checkInvariants,
  planOpenTurnRepair,
  planRepair,
  Session,
  type SessionEvent,
  TOOL_NOT_STARTED,
  TOOL_OUTCOME_UNKNOWN,
  type ToolResultData,
} from '../../src/core/index.js';
import { assistant, event, recordToolTurn, tickingClock, toolResult, user } from './builders.js';

function openSession(): Session {
  const session = Session.create({ clock: tickingClock(5_000) });
  recordToolTurn(session, 1);
  session.append('turn/start', { turn: 2 });
  session.append('user/message', user('u2', 'do two things'), { surfaceOp: 'append' });
  return session;
}

function repaired(events: readonly SessionEvent[]): Session {
  return Session.create({ seed: [...events, ...planRepair(events)] });
}

describe('planRepair', () => {
  it('plans nothing for an empty log or a log whose turns are all closed', () => {
    expect(planRepair([])).toEqual([]);
    const session = Session.create();
    recordToolTurn(session, 1);
    expect(planRepair(session.events)).toEqual([]);
  });

  it('closes an open turn without a step with turn/end interrupted only', () => {
    const session = openSession();
    const closers = planRepair(session.events);
    expect(closers).toEqual([
      event(
        session.seq,
        'turn/end',
        { turn: 2, reason: { kind: 'interrupted' } },
        { time: session.events.at(-1)?.time },
      ),
    ]);
  });

  it('closes an open step with step/end then turn/end, with contiguous seqs and the last event time', () => {
    const session = openSession();
    session.append('step/start', { turn: 2, step: 1 });
    const closers = planRepair(session.events);
    expect(closers.map((event) => [event.seq, event.type])).toEqual([
      [session.seq, 'step/end'],
      [session.seq + 1, 'turn/end'],
    ]);
    const lastTime = session.events.at(-1)?.time;
    expect(closers.every((event) => event.time === lastTime)).toBe(true);
  });

  it('answers a started call with TOOL_OUTCOME_UNKNOWN citing its tool/call, and an unstarted one with TOOL_NOT_STARTED', () => {
    const session = openSession();
    session.append('step/start', { turn: 2, step: 1 });
    const request = session.append(
      'assistant/message',
      assistant(
        'a',
        '',
        [
          { id: 'w1', name: 'write_file' },
          { id: 'w2', name: 'delete_file' },
        ],
        { turn: 2, step: 1 },
      ),
      { surfaceOp: 'append', sourceEventSeqs: [] },
    );
    const call = session.append('tool/call', {
      turn: 2,
      step: 1,
      callId: 'w1',
      name: 'write_file',
      arguments: '{}',
    });
    const closers = planRepair(session.events);
    expect(closers.map((event) => event.type)).toEqual([
      'tool/result',
      'tool/result',
      'step/end',
      'turn/end',
    ]);
    const [unknown, notStarted] = closers as [SessionEvent, SessionEvent];
    const unknownData = unknown.data as unknown as ToolResultData;
    expect(unknownData.error?.code).toBe(TOOL_OUTCOME_UNKNOWN);
    expect(unknown.sourceEventSeqs).toEqual([call.seq]);
    expect(unknown.surfaceOp).toBe('append');
    expect(unknownData.message.content[0].toolCallId).toBe('w1');
    expect(unknownData.message.content[0].isError).toBe(true);
    const text = JSON.stringify(unknownData.message.content[0].content);
    expect(text).toContain('read-only or idempotent');
    expect(text).toContain('Do not retry blindly');
    const notStartedData = notStarted.data as unknown as ToolResultData;
    expect(notStartedData.error?.code).toBe(TOOL_NOT_STARTED);
    expect(notStarted.sourceEventSeqs).toEqual([request.seq]);
    expect(JSON.stringify(notStartedData.message)).toContain('never ran');
  });

  it('names the child session of an interrupted subagent call on its TOOL_OUTCOME_UNKNOWN closer', () => {
    const session = openSession();
    session.append('step/start', { turn: 2, step: 1 });
    session.append(
      'assistant/message',
      assistant('a', '', [{ id: 'r1', name: 'researcher' }], { turn: 2, step: 1 }),
      { surfaceOp: 'append', sourceEventSeqs: [] },
    );
    session.append('tool/call', {
      turn: 2,
      step: 1,
      callId: 'r1',
      name: 'researcher',
      child: { session: 'chat/subagents/r1' },
      arguments: '{"task":"x"}',
    });
    const [closer] = planRepair(session.events) as [SessionEvent];
    const data = closer.data as ToolResultData;
    expect(data.child).toEqual({ session: 'chat/subagents/r1' });
    expect(data.error?.message).toContain("in child session 'chat/subagents/r1'");
    expect(checkInvariants(repaired(session.events).events)).toEqual([]);
  });

  it('does not answer calls that already have a result, nor calls of a step that already ended', () => {
    const session = openSession();
    session.append('step/start', { turn: 2, step: 1 });
    session.append(
      'assistant/message',
      assistant('a', '', [{ id: 'x', name: 'ls' }], { turn: 2, step: 1 }),
      { surfaceOp: 'append' },
    );
    session.append('tool/call', { turn: 2, step: 1, callId: 'x', name: 'ls', arguments: '{}' });
    session.append('tool/result', toolResult('r', 'x', 'ok', { turn: 2, step: 1 }), {
      surfaceOp: 'append',
      sourceEventSeqs: [session.seq - 1],
    });
    expect(planRepair(session.events).map((event) => event.type)).toEqual(['step/end', 'turn/end']);
    session.append('step/end', { turn: 2, step: 1 });
    expect(planRepair(session.events).map((event) => event.type)).toEqual(['turn/end']);
  });

  it('plans from the last turn alone what it plans from the whole log, after every event', () => {
    // The header is logged in turn 1 only: the open turn's partial answer must still name it.
    const full = Session.create({ clock: tickingClock(5_000) });
    full.append('request/header', { provider: 'acme', model: 'acme-1' });
    recordToolTurn(full, 1);
    full.append('turn/start', { turn: 2 });
    full.append('user/message', user('u2', 'go on'), { surfaceOp: 'append' });
    full.append('step/start', { turn: 2, step: 1 });
    full.append('assistant/chunk', {
      turn: 2,
      step: 1,
      chunk: { type: 'text-delta', id: 't', delta: 'Half an ans' },
    });
    full.append(
      'assistant/message',
      assistant('a2', '', [{ id: 'k', name: 'ls' }], { turn: 2, step: 1 }),
      { surfaceOp: 'append', sourceEventSeqs: [full.seq - 1] },
    );
    full.append('tool/call', { turn: 2, step: 1, callId: 'k', name: 'ls', arguments: '{}' });
    for (let length = 0; length <= full.seq; length++) {
      const prefix = Session.create({ seed: full.events.slice(0, length) });
      expect(planOpenTurnRepair(prefix), `after ${length} events`).toEqual(
        planRepair(prefix.events),
      );
    }
    const midStream = Session.create({ seed: full.events.slice(0, full.seq - 2) });
    const [message] = planOpenTurnRepair(midStream);
    expect(message?.data).toMatchObject({
      message: { source: { kind: 'model', provider: 'acme', model: 'acme-1' } },
    });
  });

  it('is idempotent: a repaired log plans nothing more', () => {
    const session = openSession();
    session.append('step/start', { turn: 2, step: 1 });
    session.append(
      'assistant/message',
      assistant('a', '', [{ id: 'x', name: 'ls' }], { turn: 2, step: 1 }),
      { surfaceOp: 'append' },
    );
    const fixed = repaired(session.events);
    expect(planRepair(fixed.events)).toEqual([]);
  });

  it('produces a log that validates, passes the invariant checker and derives paired messages', () => {
    const session = openSession();
    session.append('step/start', { turn: 2, step: 1 });
    session.append(
      'assistant/message',
      assistant(
        'a',
        'working',
        [
          { id: 'x', name: 'ls' },
          { id: 'y', name: 'cat' },
        ],
        { turn: 2, step: 1 },
      ),
      { surfaceOp: 'append' },
    );
    session.append('tool/call', { turn: 2, step: 1, callId: 'x', name: 'ls', arguments: '{}' });
    const fixed = repaired(session.events);
    expect(checkInvariants(fixed.events, { requireClosed: true })).toEqual([]);
    const roles = fixed
      .deriveMessages()
      .slice(-3)
      .map((message) => message.role);
    expect(roles).toEqual(['assistant', 'tool', 'tool']);
  });

  it('is deterministic: the same log always plans the same closers', () => {
    const session = openSession();
    session.append('step/start', { turn: 2, step: 1 });
    session.append(
      'assistant/message',
      assistant('a', '', [{ id: 'x', name: 'ls' }], { turn: 2, step: 1 }),
      { surfaceOp: 'append' },
    );
    expect(planRepair(session.events)).toEqual(
      planRepair(JSON.parse(JSON.stringify(session.events))),
    );
  });
});
