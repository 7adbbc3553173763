/**
 * Elided chunks: the stubs a store loads in place of finished `assistant/chunk` events. A seed
 * may hold them when a later `assistant/message` of the same seed cites them; a live append, a
 * fork and a stub nothing cites are refused; everything that reads a log works on stubs.
 */
import { describe, expect, it } from 'vitest';
import { elidedChunkData, isElidedChunkData } from '../../src/core/backend.js';
import {
  checkInvariants,
  type ElidedChunkData,
  ForkError,
  foldSurface,
  forkSession,
  InvalidArgumentError,
  isElidedChunk,
  planRepair,
  Session,
  type SessionEvent,
  SessionValidationError,
} from '../../src/core/index.js';
import {
  assistant,
  crashedMidStream,
  elidedLoad,
  event,
  recordToolTurn,
  tickingClock,
  user,
} from './builders.js';

function validationError(action: () => unknown): SessionValidationError {
  try {
    action();
  } catch (error) {
    if (error instanceof SessionValidationError) return error;
    throw error;
  }
  throw new Error('expected a SessionValidationError');
}

describe('the elided chunk marker', () => {
  it('is a frozen {elided: {bytes}} object, shared between stubs of the same size', () => {
    const marker = elidedChunkData(42);
    expect(marker).toEqual({ elided: { bytes: 42 } });
    expect(Object.isFrozen(marker)).toBe(true);
    expect(Object.isFrozen(marker.elided)).toBe(true);
    expect(elidedChunkData(42)).toBe(marker);
    expect(JSON.stringify(marker)).toBe('{"elided":{"bytes":42}}');
  });

  it('refuses a byte count that is not a non-negative integer', () => {
    for (const bytes of [-1, 1.5, Number.NaN, -0, 2 ** 53]) {
      expect(() => elidedChunkData(bytes)).toThrow(InvalidArgumentError);
    }
  });

  it('is recognised by shape as well, so a stub survives a JSON round trip', () => {
    expect(isElidedChunkData({ elided: { bytes: 3 } })).toBe(true);
    expect(isElidedChunkData({ elided: { bytes: 3 }, turn: 1 })).toBe(false);
    expect(isElidedChunkData({ elided: { bytes: -3 } })).toBe(false);
    expect(isElidedChunkData({ turn: 1, step: 1, chunk: { type: 'x' } })).toBe(false);
  });
});

describe('seeding a session with stubs', () => {
  it('accepts stubs that a later assistant/message cites, with the surface and messages of the full log', () => {
    const full = crashedMidStream('e');
    const seed = elidedLoad(full.events);
    const session = Session.create({ seed, seedMode: 'parsed' });
    expect(session.elidedChunkCount).toBe(2 * 2);
    expect(session.surface.seqs).toEqual(full.surface.seqs);
    expect(session.deriveMessages()).toEqual(full.deriveMessages());
    expect(session.transcript()).toEqual(full.transcript());
    expect(session.messagesAt(10)).toEqual(full.messagesAt(10));
    expect(planRepair(session.events)).toEqual(planRepair(full.events));
    const stub = session.event(3) as SessionEvent;
    expect(isElidedChunk(stub)).toBe(true);
    expect(Object.isFrozen(stub)).toBe(true);
    expect(stub.data).toEqual({
      elided: { bytes: Buffer.byteLength(JSON.stringify(full.event(3)?.data)) },
    });
  });

  it('keeps the open tail in full: a chunk no message cites yet is not a stub', () => {
    const full = crashedMidStream('e');
    const session = Session.create({ seed: elidedLoad(full.events) });
    const tail = session.event(full.seq - 1) as SessionEvent;
    expect(isElidedChunk(tail)).toBe(false);
    expect(tail).toEqual(full.event(full.seq - 1));
  });

  it('accepts stubs in every seed mode and from a JSON round trip, normalised to the shared marker', () => {
    const seed = elidedLoad(crashedMidStream('e').events);
    for (const mode of ['copy', 'adopt', 'parsed'] as const) {
      const roundTripped = JSON.parse(JSON.stringify(seed)) as unknown[];
      const session = Session.create({ seed: roundTripped, seedMode: mode });
      expect(session.elidedChunkCount).toBe(4);
      const bytes = (seed[3] as SessionEvent<'assistant/chunk'>).data as unknown as ElidedChunkData;
      expect(session.event(3)?.data).toBe(elidedChunkData(bytes.elided.bytes));
      // Parsed stubs take the fast path: the parsed record itself becomes the event.
      if (mode === 'parsed') expect(session.event(3)).toBe(roundTripped[3]);
    }
  });

  it('refuses a stub that no later assistant/message cites, naming the stub', () => {
    const seed = elidedLoad(crashedMidStream('e').events);
    const uncited = seed.slice(0, 4);
    const error = validationError(() => Session.create({ seed: uncited }));
    expect(error.code).toBe('ELIDED_CHUNK_NOT_FINISHED');
    expect(error).toMatchObject({ index: 3, seq: 3, eventType: 'assistant/chunk' });
    expect(error.message).toContain('none cites seq 3');
  });

  it('counts only assistant/message citations as finishing a chunk', () => {
    const seed: unknown[] = [
      event(0, 'assistant/chunk', elidedChunkData(5), { time: 1 }),
      event(1, 'user/message', user('s', 'summary'), {
        time: 1,
        surfaceOp: 'append',
        sourceEventSeqs: [0],
      }),
    ];
    expect(validationError(() => Session.create({ seed })).code).toBe('ELIDED_CHUNK_NOT_FINISHED');
  });

  it('refuses a malformed marker as chunk data of the wrong shape', () => {
    for (const elided of [{ bytes: -1 }, {}, 7, { bytes: 1, extra: true }, null]) {
      const seed = [{ seq: 0, time: 1, type: 'assistant/chunk', data: { elided } }];
      const error = validationError(() => Session.create({ seed }));
      expect(error.code).toBe('INVALID_EVENT_DATA');
      expect(error.path).toBe('data.elided');
    }
  });

  it('reads an elided key beside the real fields as chunk data, not as a stub', () => {
    const data = { turn: 1, step: 1, chunk: { type: 'text-delta' }, elided: { bytes: 1 } };
    const session = Session.create({ seed: [{ seq: 0, time: 1, type: 'assistant/chunk', data }] });
    expect(session.elidedChunkCount).toBe(0);
    expect(session.event(0)?.data).toEqual(data);
  });

  it('treats the marker on any other type as plain data', () => {
    const session = Session.create();
    session.append('app/note', elidedChunkData(3));
    expect(session.elidedChunkCount).toBe(0);
  });

  it('folds the same seeds as a session, with the same errors', () => {
    const seed = elidedLoad(crashedMidStream('e').events);
    expect(foldSurface(seed).seqs).toEqual(Session.create({ seed }).surface.seqs);
    const error = validationError(() => foldSurface(seed.slice(0, 4)));
    expect(error).toMatchObject({ code: 'ELIDED_CHUNK_NOT_FINISHED', index: 3 });
  });
});

describe('a session seeded with stubs', () => {
  it('refuses a live append of a stub and stays as it was', () => {
    const session = Session.create({ seed: elidedLoad(crashedMidStream('e').events) });
    const before = session.seq;
    const append = session.append.bind(session) as (type: string, data: unknown) => unknown;
    const error = validationError(() => append('assistant/chunk', elidedChunkData(9)));
    expect(error.code).toBe('ELIDED_CHUNK_OUTSIDE_SEED');
    expect(error.path).toBe('data.elided');
    expect(session.seq).toBe(before);
  });

  it('appends real events after its stubs', () => {
    const session = Session.create({
      seed: elidedLoad(crashedMidStream('e').events),
      clock: () => 5,
    });
    const chunk = session.append('assistant/chunk', {
      turn: 3,
      step: 1,
      chunk: { type: 'text-delta', id: 't0', delta: 'ash' },
    });
    session.append('assistant/message', assistant('a3', 'done', [], { turn: 3, step: 1 }), {
      surfaceOp: 'append',
      sourceEventSeqs: [chunk.seq - 1, chunk.seq],
    });
    expect(session.deriveMessages().at(-1)).toMatchObject({ id: 'a3' });
    expect(isElidedChunk(chunk)).toBe(false);
  });

  it('refuses to fork a prefix holding a stub, and forks a prefix before the first one', () => {
    const full = Session.create({ clock: tickingClock() });
    full.append('context/message', user('rules', 'be brief'), { surfaceOp: 'append' });
    const turn = recordToolTurn(full, 1);
    const session = Session.create({ seed: elidedLoad(full.events) });
    let refused: unknown;
    try {
      forkSession(session, turn.last);
    } catch (error) {
      refused = error;
    }
    expect(refused).toBeInstanceOf(ForkError);
    expect(refused).toMatchObject({ code: 'ELIDED_CHUNKS', boundarySeq: turn.last });
    expect((refused as Error).message).toContain('the first at seq 4');
    expect(forkSession(session, 0).events).toEqual([session.event(0)]);
  });

  it('lints like the full log, checking stubs by their position in the open step', () => {
    const full = crashedMidStream('e');
    const session = Session.create({ seed: elidedLoad(full.events) });
    expect(checkInvariants(session.events)).toEqual(checkInvariants(full.events));
    expect(checkInvariants(elidedLoad(full.events))).toEqual(checkInvariants(full.events));
    const outside: unknown[] = [
      event(0, 'assistant/chunk', elidedChunkData(5), { time: 1 }),
      event(1, 'turn/start', { turn: 1 }, { time: 1 }),
      event(2, 'step/start', { turn: 1, step: 1 }, { time: 1 }),
      event(3, 'assistant/message', assistant('a', 'x'), {
        time: 1,
        surfaceOp: 'append',
        sourceEventSeqs: [0],
      }),
    ];
    const codes = checkInvariants(Session.create({ seed: outside }).events).map((v) => v.code);
    expect(codes).toContain('OUTSIDE_STEP');
  });

  it('reports a stub nothing cites as a log a session would refuse', () => {
    const seed = elidedLoad(crashedMidStream('e').events).slice(0, 4);
    const violations = checkInvariants(seed);
    expect(violations.at(-1)).toMatchObject({ code: 'INVALID_LOG', seq: 3 });
  });
});

describe("seedMode 'parsed'", () => {
  const text = JSON.stringify(crashedMidStream('e').events);

  it('accepts what copy accepts and freezes the parsed objects in place', () => {
    const parsed = JSON.parse(text) as SessionEvent[];
    const session = Session.create({ seed: parsed, seedMode: 'parsed' });
    const copy = Session.create({ seed: JSON.parse(text) as unknown[] });
    expect(session.events).toEqual(copy.events);
    expect(session.event(1)).toBe(parsed[1]);
    expect(Object.isFrozen(parsed[1]?.data)).toBe(true);
    expect(JSON.stringify(session.events)).toBe(text);
  });

  it('refuses what JSON text can get wrong, with the error copy gives', () => {
    for (const bad of ['-0', '1e400', '-1e999']) {
      const line = `[{"seq":0,"time":1,"type":"app/x","data":{"list":[1,${bad}]}}]`;
      const parsed = validationError(() =>
        Session.create({ seed: JSON.parse(line) as unknown[], seedMode: 'parsed' }),
      );
      const copied = validationError(() => Session.create({ seed: JSON.parse(line) as unknown[] }));
      expect(parsed.code).toBe('NON_JSON_DATA');
      expect(parsed.message).toBe(copied.message);
      expect(parsed.path).toBe('data.list[1]');
    }
  });

  it('admits keys in another order, and keeps the admitted key order', () => {
    const seed = [{ data: { n: 1 }, type: 'app/x', time: 2, seq: 0 }];
    const session = Session.create({ seed, seedMode: 'parsed' });
    expect(JSON.stringify(session.events)).toBe(
      '[{"seq":0,"time":2,"type":"app/x","data":{"n":1}}]',
    );
  });

  it('is not fooled by enumerable keys added to Object.prototype', () => {
    const proto = Object.prototype as Record<string, unknown>;
    proto.polluted = 1;
    try {
      const session = Session.create({ seed: JSON.parse(text) as unknown[], seedMode: 'parsed' });
      expect(Object.keys(session.event(1) as object)).not.toContain('polluted');
      expect(JSON.stringify(session.events)).toBe(text);
    } finally {
      delete proto.polluted;
    }
  });

  it('shares the admitted events with a fork instead of validating them again', () => {
    const parent = Session.create({ seed: JSON.parse(text) as unknown[], seedMode: 'parsed' });
    const child = forkSession(parent, 12);
    expect(child.event(5)).toBe(parent.event(5));
    expect(foldSurface(parent.events).seqs).toEqual(parent.surface.seqs);
  });
});
