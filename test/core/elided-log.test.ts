/**
 * The compact form of a load with elided chunks: a session seeded from an `ElidedLog` holds
 * the same log as one seeded from its stubs, builds a stub only when that event is read, and
 * applies the same rules.
 */
import { describe, expect, it } from 'vitest';
import { ElidedLog } from '../../src/core/backend.js';
import {
  InvalidArgumentError,
  isElidedChunk,
  planRepair,
  Session,
  type SessionEvent,
  SessionValidationError,
} from '../../src/core/index.js';
import {
  crashedMidStream,
  elidedLoad,
  event,
  finishedSeqs,
  recordToolTurn,
  tickingClock,
  user,
} from './builders.js';

/** The load a store builds: finished chunks as holes, every other event as parsed JSON. */
function compactLoad(events: readonly SessionEvent[]): ElidedLog {
  const finished = finishedSeqs(events);
  const log = new ElidedLog();
  for (const event of events) {
    if (event.type === 'assistant/chunk' && finished.has(event.seq)) {
      log.pushElided(event.time, Buffer.byteLength(JSON.stringify(event.data)));
    } else log.push(JSON.parse(JSON.stringify(event)) as SessionEvent);
  }
  return log;
}

describe('a session seeded from an ElidedLog', () => {
  it('tells the type of every event without building the chunks it holds unbuilt', () => {
    const original = crashedMidStream('types').events;
    const session = Session.create({
      id: 'types',
      seed: compactLoad(original),
      seedMode: 'parsed',
    });
    const types = original.map((_, seq) => session.eventType(seq));
    expect(types).toEqual(original.map((event) => event.type));
    expect(session.eventType(-1)).toBeUndefined();
    expect(session.eventType(original.length)).toBeUndefined();
    // Still unbuilt: building them now gives the same events as the log.
    expect(session.events.map((event) => event.type)).toEqual(types);
  });

  it('holds the same log, surface, messages and transcript as one seeded from stubs', () => {
    const original = crashedMidStream('c').events;
    const log = compactLoad(original);
    expect(log.elidedCount).toBeGreaterThan(0);
    const compact = Session.create({ id: 'c', seed: log, seedMode: 'parsed' });
    const stubs = Session.create({ id: 'c', seed: elidedLoad(original), seedMode: 'parsed' });
    expect(compact.elidedChunkCount).toBe(stubs.elidedChunkCount);
    expect(compact.deriveMessages()).toEqual(stubs.deriveMessages());
    expect(compact.transcript()).toEqual(stubs.transcript());
    expect(compact.surface.seqs).toEqual(stubs.surface.seqs);
    expect(compact.messagesAt(5)).toEqual(stubs.messagesAt(5));
    expect(compact.events).toEqual(stubs.events);
  });

  it('folds replaces among the holes as a seed of stubs does', () => {
    const session = Session.create({ id: 'r', clock: tickingClock() });
    const first = recordToolTurn(session, 1);
    recordToolTurn(session, 2);
    const shadowed = session.surface.seqs.filter((seq) => seq <= first.answer);
    session.append('context/message', user('s1', 'summary of turn 1'), {
      surfaceOp: { op: 'replace', start: first.user, end: first.answer },
      sourceEventSeqs: shadowed,
    });
    recordToolTurn(session, 3);
    const original = session.events;
    const compact = Session.create({ id: 'r', seed: compactLoad(original), seedMode: 'parsed' });
    const stubs = Session.create({ id: 'r', seed: elidedLoad(original), seedMode: 'parsed' });
    expect(compact.surface.seqs).toEqual(session.surface.seqs);
    expect(compact.surface.replaceGeneration).toBe(1);
    expect(stubs.surface.replaceGeneration).toBe(1);
    expect(compact.deriveMessages()).toEqual(stubs.deriveMessages());
    expect(compact.messagesAt(first.last)).toEqual(stubs.messagesAt(first.last));
  });

  it('builds a frozen stub when an elided chunk is read, the same object each time', () => {
    const original = crashedMidStream('c').events;
    const session = Session.create({ id: 'c', seed: compactLoad(original) });
    const seq = original.findIndex((event) => event.type === 'assistant/chunk');
    const stub = session.event(seq) as SessionEvent;
    expect(isElidedChunk(stub)).toBe(true);
    expect(stub).toEqual({
      seq,
      time: original[seq]?.time,
      type: 'assistant/chunk',
      data: { elided: { bytes: Buffer.byteLength(JSON.stringify(original[seq]?.data)) } },
    });
    expect(Object.isFrozen(stub)).toBe(true);
    expect(session.event(seq)).toBe(stub);
    expect(session.events[seq]).toBe(stub);
    expect(session.event(original.length)).toBeUndefined();
  });

  it('appends after the seed as any session does', () => {
    const original = crashedMidStream('c').events;
    const session = Session.create({ id: 'c', seed: compactLoad(original) });
    const next = session.append('step/end', { turn: 3, step: 1 });
    expect(next.seq).toBe(original.length);
    expect(session.events).toHaveLength(original.length + 1);
  });

  it('refuses an elided chunk that no later message cites, as a seed of stubs does', () => {
    const log = new ElidedLog();
    log.push(event(0, 'turn/start', { turn: 1 }, { time: 1 }));
    log.pushElided(2, 10);
    const seed = () => Session.create({ id: 'c', seed: log });
    expect(seed).toThrow(SessionValidationError);
    expect(seed).toThrow(/none cites seq 1/);
  });

  it('seals the log it was seeded from', () => {
    const log = compactLoad(crashedMidStream('c').events);
    Session.create({ id: 'c', seed: log });
    expect(() => log.pushElided(1, 1)).toThrow(InvalidArgumentError);
    expect(() => log.truncate(0)).toThrow(/can no longer change/);
  });
});

describe('an ElidedLog', () => {
  it('refuses an elided chunk without an integer time or a length, and stays as it was', () => {
    const log = new ElidedLog();
    for (const [time, bytes] of [
      [1.5, 3],
      [-0, 3],
      [Number.NaN, 3],
      [1, -1],
      [1, 0.5],
      [1, Number.POSITIVE_INFINITY],
    ] as const) {
      expect(() => log.pushElided(time, bytes)).toThrow(InvalidArgumentError);
    }
    expect(log.length).toBe(0);
    expect(log.elidedCount).toBe(0);
  });

  it('gives every event in order, elided ones as stubs, and tracks restores and truncation', () => {
    const log = new ElidedLog();
    log.push(event(0, 'turn/start', { turn: 1 }, { time: 1 }));
    log.pushElided(2, 7);
    log.pushElided(3, 8);
    expect(log.toEvents().map(isElidedChunk)).toEqual([false, true, true]);
    const chunk: SessionEvent = event(1, 'assistant/chunk', { x: 1 }, { time: 2 });
    log.restore(1, chunk);
    expect(log.peek(1)).toBe(chunk);
    expect(log.elidedCount).toBe(1);
    log.truncate(2);
    expect(log.length).toBe(2);
    expect(log.elidedCount).toBe(0);
    expect(() => log.restore(5, chunk)).toThrow(InvalidArgumentError);
  });

  it('appends a run of elided chunks from a start within it, checked whole before any is added', () => {
    const log = new ElidedLog();
    log.push(event(0, 'turn/start', { turn: 1 }, { time: 1 }));
    log.pushElidedRun(new Float64Array([2, 3, 4]), new Float64Array([7, 8, 9]), 1);
    expect(log.length).toBe(3);
    expect(log.elidedCount).toBe(2);
    expect(log.at(1)).toEqual(event(1, 'assistant/chunk', { elided: { bytes: 8 } }, { time: 3 }));
    expect(log.at(2)?.time).toBe(4);
    expect(Array.from(log.elidedMap())).toEqual([0, 1, 1]);
    expect(log.slots()).toEqual([log.peek(0), undefined, undefined]);
    for (const [times, sizes] of [
      [
        [5, 1.5],
        [1, 1],
      ],
      [
        [5, 6],
        [1, -1],
      ],
      [[5], [1, 2]],
      [[-0], [1]],
      [[5], [-0]],
    ] as const) {
      expect(() => log.pushElidedRun(new Float64Array(times), new Float64Array(sizes))).toThrow(
        InvalidArgumentError,
      );
    }
    expect(() => log.pushElidedRun(new Float64Array([5]), new Float64Array([1]), 2)).toThrow(
      /a start within them/,
    );
    expect(log.length).toBe(3);
    expect(log.elidedCount).toBe(2);
  });

  it('allocated ahead for a capacity, holds only the events pushed, and grows past it', () => {
    const log = new ElidedLog(3);
    expect(log.length).toBe(0);
    expect(log.at(0)).toBeUndefined();
    expect(log.isElided(0)).toBe(false);
    log.pushElidedRun(new Float64Array([1, 2]), new Float64Array([5, 6]));
    log.push(event(2, 'turn/start', { turn: 1 }, { time: 3 }));
    log.pushElided(4, 7);
    expect(log.length).toBe(4);
    expect(log.slots()).toHaveLength(4);
    expect(log.toEvents().map((event) => event.seq)).toEqual([0, 1, 2, 3]);
    log.truncate(2);
    expect(log.length).toBe(2);
    expect(log.peek(2)).toBeUndefined();
    expect(() => new ElidedLog(-1)).toThrow(InvalidArgumentError);
    expect(() => new ElidedLog(1.5)).toThrow(
      /capacity as a non-negative integer, found the number 1.5/,
    );
  });

  it('keeps its map of elided seqs through restores, late elisions and truncation', () => {
    const log = new ElidedLog();
    log.pushElided(1, 1);
    log.push(event(1, 'assistant/chunk', { x: 1 }, { time: 2 }));
    log.pushElided(3, 1);
    log.restore(0, event(0, 'assistant/chunk', { y: 1 }, { time: 1 }));
    log.elide(1, 2, 7);
    expect(Array.from(log.elidedMap())).toEqual([0, 1, 1]);
    log.truncate(1);
    log.push(event(1, 'turn/start', { turn: 1 }, { time: 4 }));
    log.push(event(2, 'turn/start', { turn: 2 }, { time: 5 }));
    expect(Array.from(log.elidedMap())).toEqual([0, 0, 0]);
    expect(log.elidedCount).toBe(0);
  });

  it('plans the same repair as the events it stands for', () => {
    const original = crashedMidStream('c').events;
    expect(planRepair(compactLoad(original))).toEqual(planRepair(elidedLoad(original)));
    expect(planRepair(compactLoad(original)).length).toBeGreaterThan(0);
  });

  it('concatenates into a copy that keeps the holes and leaves the original as it was', () => {
    const log = new ElidedLog();
    log.push(event(0, 'turn/start', { turn: 1 }, { time: 1 }));
    log.pushElided(2, 7);
    log.pushDeltaRun({
      turn: 1,
      step: 1,
      type: 'text-delta',
      id: 't',
      deltas: ['a', 'b'],
      times: [3, 4],
    });
    log.seal();
    const closer = event(4, 'turn/end', { turn: 1 }, { time: 5 });
    const copy = log.concat([closer]);
    expect(copy.length).toBe(5);
    expect(copy.elidedCount).toBe(1);
    expect(copy.holeCount).toBe(3);
    expect(copy.toEvents()).toEqual([...log.toEvents(), closer]);
    expect(log.length).toBe(4);
    copy.truncate(1);
    expect(log.toEvents()).toHaveLength(4);
  });
});
