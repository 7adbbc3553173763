/**
 * A log built event by event under a seed's rules (SeededLog, what the importers build with):
 * it admits what a session appends, refuses what a session refuses with the same code, adds
 * nothing when it refuses, and gives a log a session takes as already admitted.
 */
import { describe, expect, it } from 'vitest';
import { Session, SessionValidationError } from '../../src/core/index.js';
import { SeededLog, type SeedRecord } from '../../src/core/seeded-log.js';

const user = (id: string) => ({
  id,
  role: 'user',
  content: [{ type: 'text', text: `prompt ${id}` }],
  source: { kind: 'user' },
});

/** A turn with a prompt, as records for a SeededLog. */
function turn(): SeedRecord[] {
  return [
    { seq: 0, time: 1, type: 'turn/start', data: { turn: 1 } },
    { seq: 1, time: 2, type: 'user/message', data: user('u1'), surfaceOp: 'append' },
    { seq: 2, time: 3, type: 'turn/end', data: { turn: 1, reason: { kind: 'completed' } } },
  ];
}

function refusal(add: () => unknown): SessionValidationError {
  try {
    add();
  } catch (error) {
    if (SessionValidationError.isInstance(error)) return error;
    throw error;
  }
  throw new Error('expected a SessionValidationError');
}

describe.each(['adopt', 'parsed'] as const)('a SeededLog in %s mode', (mode) => {
  it('admits the events a session appends, frozen, and gives a log a session seeds', () => {
    const log = new SeededLog(mode);
    for (const record of turn()) log.add(record);
    const session = Session.create({ id: 's', clock: () => 0 });
    session.append('turn/start', { turn: 1 });
    session.append('user/message', user('u1') as never, { surfaceOp: 'append' });
    session.append('turn/end', { turn: 1, reason: { kind: 'completed' } });
    expect(log.events.map(({ time: _, ...rest }) => rest)).toEqual(
      session.events.map(({ time: _, ...rest }) => rest),
    );
    expect(Object.isFrozen(log.events[1]?.data)).toBe(true);
    expect(log.surface.seqs).toEqual([1]);
    expect(Session.create({ seed: log.events }).events).toEqual(log.events);
  });

  it.each([
    ['SURFACE_OP_REQUIRED', { seq: 3, time: 4, type: 'user/message', data: user('u2') }],
    [
      'SURFACE_OP_FORBIDDEN',
      { seq: 3, time: 4, type: 'turn/start', data: { turn: 2 }, surfaceOp: 'append' },
    ],
    ['SEQ_NOT_CONTIGUOUS', { seq: 7, time: 4, type: 'turn/start', data: { turn: 2 } }],
    ['INVALID_TIME', { seq: 3, time: 1.5, type: 'turn/start', data: { turn: 2 } }],
    ['NON_JSON_DATA', { seq: 3, time: 4, type: 'turn/start', data: { turn: 2, x: Number.NaN } }],
    ['INVALID_EVENT_DATA', { seq: 3, time: 4, type: 'turn/start', data: { turn: -1 } }],
    [
      'INVALID_MESSAGE',
      { seq: 3, time: 4, type: 'user/message', data: { role: 'user' }, surfaceOp: 'append' },
    ],
    [
      'REPLACE_ENDPOINT_NOT_ON_SURFACE',
      {
        seq: 3,
        time: 4,
        type: 'user/message',
        data: user('u2'),
        surfaceOp: { op: 'replace', start: 0, end: 0 },
        sourceEventSeqs: [0],
      },
    ],
    [
      'ELIDED_CHUNK_OUTSIDE_SEED',
      { seq: 3, time: 4, type: 'assistant/chunk', data: { elided: { bytes: 10 } } },
    ],
  ] as const)('refuses with %s, as a session does, and adds nothing', (code, record) => {
    const log = new SeededLog(mode);
    for (const event of turn()) log.add(event);
    const error = refusal(() => log.add(record as SeedRecord));
    expect(error.code).toBe(code);
    expect([log.seq, log.events.length, log.surface.seqs]).toEqual([3, 3, [1]]);
  });
});

describe('a SeededLog in adopt mode', () => {
  it('refuses data a JSON text cannot hold but an object can (a symbol key)', () => {
    const log = new SeededLog('adopt');
    const data = { turn: 1, [Symbol('hidden')]: 1 };
    expect(refusal(() => log.add({ seq: 0, time: 1, type: 'turn/start', data })).code).toBe(
      'NON_JSON_DATA',
    );
  });
});
