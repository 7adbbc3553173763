/**
 * Held deltas (`src/core/held-deltas.ts`): an `ElidedLog` keeps a run of text deltas as strings
 * and builds their chunks when read. A session seeded from it must be the session seeded from the
 * same chunks in full: the same events, the same errors, the same repair.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type DeltaRun, ElidedLog } from '../../src/core/backend.js';
import {
  InvalidArgumentError,
  type JsonLimits,
  planRepair,
  Session,
  type SessionEvent,
  SessionValidationError,
} from '../../src/core/index.js';
import { fuzzRuns } from '../fuzz-runs.js';
import { event } from './builders.js';

const T0 = 1_700_000_000_000;

/** The chunks a held run stands for, built as a store without held deltas builds them. */
function chunksOf(seq: number, run: DeltaRun): SessionEvent[] {
  return run.deltas.map((delta, i) =>
    event(
      seq + i,
      'assistant/chunk',
      { turn: run.turn, step: run.step, chunk: { type: run.type, id: run.id, delta } },
      { time: run.times[i] },
    ),
  );
}

/** A log of `before`, the run, then `after`, both as a held run and in full. */
function logs(
  before: readonly SessionEvent[],
  run: DeltaRun,
  after: readonly SessionEvent[],
): { held: ElidedLog; full: unknown[] } {
  const held = new ElidedLog();
  for (const event of before) held.push(event);
  held.pushDeltaRun(run);
  for (const event of after) held.push(event);
  return { held, full: [...before, ...chunksOf(before.length, run), ...after] };
}

type Outcome =
  | { readonly ok: true; readonly json: string }
  | {
      readonly ok: false;
      readonly code: string;
      readonly message: string;
      readonly details: unknown;
    };

function seeded(
  seed: ElidedLog | unknown[],
  mode: 'copy' | 'parsed',
  limits?: Partial<JsonLimits>,
): Outcome {
  try {
    const session = Session.create({ id: 'held', seed, seedMode: mode, limits: limits ?? {} });
    return { ok: true, json: JSON.stringify(session.events) };
  } catch (error) {
    if (!(error instanceof SessionValidationError)) throw error;
    const { index, seq, eventType, path } = error;
    return {
      ok: false,
      code: error.code,
      message: error.message,
      details: { index, seq, eventType, path },
    };
  }
}

const opening = [
  event(0, 'turn/start', { turn: 1 }, { time: T0 }),
  event(1, 'step/start', { turn: 1, step: 1 }, { time: T0 }),
];

describe('a log holding text deltas as strings', () => {
  it('seeds the session that the same chunks in full seed, and builds each chunk once', () => {
    const run: DeltaRun = {
      turn: 1,
      step: 1,
      type: 'text-delta',
      id: 't1',
      deltas: ['Hel', 'lo, ', 'world'],
      times: [T0 + 1, T0 + 2, T0 + 4],
    };
    const closing = [
      event(
        5,
        'assistant/message',
        {
          turn: 1,
          step: 1,
          message: {
            id: 'm1',
            role: 'assistant',
            content: [{ type: 'text', text: 'Hello, world' }],
            source: { kind: 'model', provider: 'test', model: 'test' },
          },
          finishReason: 'stop',
        },
        { time: T0 + 5, surfaceOp: 'append', sourceEventSeqs: [2, 3, 4] },
      ),
    ];
    const { held, full } = logs(opening, run, closing);
    expect(held.holeCount).toBe(3);
    expect(held.elidedCount).toBe(0);
    const session = Session.create({ id: 'held', seed: held, seedMode: 'parsed' });
    const reference = Session.create({ id: 'held', seed: full, seedMode: 'parsed' });
    const chunk = session.event(3) as SessionEvent;
    expect(chunk).toEqual(reference.event(3));
    expect(session.event(3)).toBe(chunk);
    expect(Object.isFrozen(chunk) && Object.isFrozen(chunk.data)).toBe(true);
    expect(Object.isFrozen((chunk.data as { chunk: object }).chunk)).toBe(true);
    expect(JSON.stringify(session.events)).toBe(JSON.stringify(reference.events));
    expect(session.deriveMessages()).toEqual(reference.deriveMessages());
    expect(session.elidedChunkCount).toBe(0);
  });

  it('admits every chunk the same way as in full, and refuses with the same error', () => {
    const scalar = fc.constantFrom<unknown>(-1, -0, 1.5, '1', null, Number.NaN);
    const seqLike = fc.oneof({ arbitrary: fc.nat({ max: 9 }), weight: 8 }, scalar);
    const text = fc.oneof(
      { arbitrary: fc.string({ maxLength: 6 }), weight: 8 },
      fc.constantFrom<unknown>(7, null),
    );
    const time = fc.oneof(
      { arbitrary: fc.integer({ min: T0, max: T0 + 10 }), weight: 8 },
      fc.constantFrom(-0, 0.5, Number.NaN, 2 ** 60),
    );
    const limits = fc.record(
      {
        maxChars: fc.integer({ min: 20, max: 60 }),
        maxDepth: fc.integer({ min: 1, max: 3 }),
        maxNodes: fc.integer({ min: 5, max: 9 }),
      },
      { requiredKeys: [] },
    );
    // A bad event after the run: its error must not be reported before the run's.
    const after = fc.constantFrom<readonly SessionEvent[]>(
      [],
      [event(-1, 'step/end', { turn: 1, step: 1 }, { time: T0 })],
      [event(-1, 'step/end', { turn: 1, step: 1 }, { time: -0 })],
    );
    fc.assert(
      fc.property(
        fc.record({ turn: seqLike, step: seqLike, type: text, id: text }),
        fc.array(fc.tuple(text, time), { minLength: 1, maxLength: 5 }),
        limits,
        after,
        fc.constantFrom<'copy' | 'parsed'>('copy', 'parsed'),
        (fields, chunks, chosen, trailing, mode) => {
          const run = {
            ...fields,
            deltas: chunks.map(([delta]) => delta),
            times: chunks.map(([, at]) => at),
          } as unknown as DeltaRun;
          const next = opening.length + chunks.length;
          const tail = trailing.map((event): SessionEvent => ({ ...event, seq: next }));
          const { held, full } = logs(opening, run, tail);
          expect(seeded(held, mode, chosen)).toEqual(seeded(full, mode, chosen));
        },
      ),
      { numRuns: fuzzRuns(2000) },
    );
  });

  it('cuts a held run where the log is truncated, and takes new events after it', () => {
    const run: DeltaRun = {
      turn: 1,
      step: 1,
      type: 'text-delta',
      id: 't',
      deltas: ['a', 'b', 'c', 'd'],
      times: [T0, T0, T0, T0],
    };
    const { held } = logs(opening, run, []);
    held.truncate(4);
    expect(held.length).toBe(4);
    expect(held.holeCount).toBe(2);
    expect(held.at(3)?.data).toEqual({
      turn: 1,
      step: 1,
      chunk: { type: 'text-delta', id: 't', delta: 'b' },
    });
    expect(held.at(4)).toBeUndefined();
    held.pushDeltaRun({ ...run, deltas: ['z'], times: [T0 + 1] });
    expect(
      held.toEvents().map((event) => (event.data as { chunk?: { delta?: string } }).chunk?.delta),
    ).toEqual([undefined, undefined, 'a', 'b', 'z']);
    held.truncate(1);
    expect(held.holeCount).toBe(0);
    expect(held.toEvents()).toHaveLength(1);
  });

  it('cuts a held run with a delta that is not a string as its chunks in full are cut', () => {
    const run = {
      turn: 1,
      step: 1,
      type: 'text-delta',
      id: 't',
      deltas: ['a', 7, 'c'],
      times: [T0, T0, T0],
    } as unknown as DeltaRun;
    const { held } = logs(opening, run, []);
    held.truncate(4);
    const full = [...opening, ...chunksOf(opening.length, run).slice(0, 2)];
    expect(held.holeCount).toBe(2);
    expect(seeded(held, 'parsed')).toEqual(seeded(full, 'parsed'));
    expect(JSON.stringify(held.toEvents())).toBe(JSON.stringify(full));
  });

  it('repairs an open step with the text its held deltas streamed', () => {
    const run: DeltaRun = {
      turn: 1,
      step: 1,
      type: 'text-delta',
      id: 't',
      deltas: ['half ', 'a sentence'],
      times: [T0 + 1, T0 + 2],
    };
    const { held, full } = logs(opening, run, []);
    const fromHeld = planRepair(held);
    expect(fromHeld).toEqual(planRepair(full as SessionEvent[]));
    expect(JSON.stringify(fromHeld)).toContain('half a sentence');
  });

  it('refuses a run with fewer times than deltas, and any run once it seeded a session', () => {
    const log = new ElidedLog();
    const short = {
      turn: 1,
      step: 1,
      type: 'text-delta',
      id: 't',
      deltas: ['a', 'b'],
      times: [T0],
    };
    expect(() => log.pushDeltaRun(short)).toThrow(InvalidArgumentError);
    expect(log.length).toBe(0);
    for (const event of opening) log.push(event as unknown as SessionEvent);
    Session.create({ seed: log });
    expect(() => log.pushDeltaRun({ ...short, times: [T0, T0] })).toThrow(/can no longer change/);
  });

  it('copies the run it is given, so changing the caller’s arrays changes nothing', () => {
    const deltas = ['x', 'y'];
    const times = [T0, T0];
    const log = new ElidedLog();
    for (const event of opening) log.push(event as unknown as SessionEvent);
    log.pushDeltaRun({ turn: 1, step: 1, type: 'text-delta', id: 't', deltas, times });
    deltas[0] = 'changed';
    times[0] = Number.NaN;
    const session = Session.create({ seed: log, seedMode: 'parsed' });
    expect(session.event(2)).toMatchObject({ time: T0, data: { chunk: { delta: 'x' } } });
  });
});
