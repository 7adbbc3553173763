/**
 * The page assembles a stream's snapshot from its start line and its parts, each parsed as it
 * arrives: every event once, in order, and a reason instead of a snapshot when the lines do not
 * add up to what the start said.
 */
import { describe, expect, it } from 'vitest';
import type { SessionEvent } from '../../src/core/index.js';
import { PendingSnapshot } from '../../src/viewer/page/snapshot-parts.js';
import {
  SNAPSHOT_PART_PREFIX,
  type SnapshotPart,
  type SnapshotStart,
} from '../../src/viewer/protocol.js';

const event = (seq: number): SessionEvent => ({
  seq,
  time: 1_700_000_000_000 + seq,
  type: 'turn/start',
  data: { turn: seq },
});

const start = (parts: number, eventCount: number): SnapshotStart => ({
  kind: 'snapshot-start',
  header: { version: 1, id: 's', createdAt: 1_700_000_000_000 },
  children: ['child'],
  parts,
  eventCount,
});

const part = (...seqs: number[]): string => {
  const line: SnapshotPart = { kind: 'snapshot-part', events: seqs.map(event) };
  return JSON.stringify(line);
};

describe('PendingSnapshot', () => {
  it('gives the parts’ events as one snapshot once the last part is in, and counts their text', () => {
    const pending = new PendingSnapshot();
    expect(pending.start(start(2, 3), 100)).toBeUndefined();
    expect(pending.waiting).toBe(true);
    expect(pending.awaitsLast).toBe(false);
    expect(pending.add(part(0, 1))).toBeUndefined();
    expect(pending.complete).toBe(false);
    expect(pending.awaitsLast).toBe(true);
    expect(pending.describe()).toBe("part 2 of the snapshot's 2");
    expect(pending.add(part(2))).toBeUndefined();
    expect(pending.waiting).toBe(false);
    expect(pending.complete).toBe(true);
    const taken = pending.take();
    if (typeof taken === 'string') throw new Error(taken);
    expect(taken.snapshot).toEqual({
      kind: 'snapshot',
      header: start(2, 3).header,
      events: [event(0), event(1), event(2)],
      children: ['child'],
    });
    expect(taken.bytes).toBe(100 + part(0, 1).length + part(2).length);
    expect(pending.complete).toBe(false);
  });

  it('is complete at once for a session without events', () => {
    const pending = new PendingSnapshot();
    expect(pending.start(start(0, 0), 10)).toBeUndefined();
    expect(pending.waiting).toBe(false);
    const taken = pending.take();
    expect(typeof taken === 'string' ? taken : taken.snapshot.events).toEqual([]);
  });

  it('refuses a start whose part count is not a count, or is 0 for events or not 0 for none', () => {
    for (const [parts, events] of [
      [-1, 1],
      [1.5, 2],
      [Number.NaN, 2],
      [0, 5],
      [2, 0],
    ] as const) {
      const problem = new PendingSnapshot().start(start(parts, events), 10);
      expect(problem).toMatch(/^expected a snapshot's parts as a count/);
    }
  });

  it('says how many events it expected when the parts hold fewer or more', () => {
    for (const seqs of [[0], [0, 1, 2]]) {
      const pending = new PendingSnapshot();
      pending.start(start(1, 2), 10);
      pending.add(part(...seqs));
      expect(pending.take()).toBe(
        `expected the snapshot's 2 events, found ${seqs.length} in its 1 parts`,
      );
    }
  });

  it('says so as it arrives when a part holds no events array, and throws on a part that is not JSON', () => {
    const pending = new PendingSnapshot();
    pending.start(start(2, 2), 10);
    expect(pending.add('{"kind":"snapshot-part","events":{}}')).toBe(
      'expected a snapshot part to hold an events array',
    );
    pending.start(start(2, 2), 10);
    expect(() => pending.add(`${SNAPSHOT_PART_PREFIX}{"seq":`)).toThrow(SyntaxError);
  });

  it('begins anew with the next start, whatever the parts before it held', () => {
    const pending = new PendingSnapshot();
    pending.start(start(2, 3), 10);
    pending.add(part(0, 1));
    pending.start(start(1, 1), 20);
    pending.add(part(0));
    const taken = pending.take();
    if (typeof taken === 'string') throw new Error(taken);
    expect(taken.snapshot.events).toEqual([event(0)]);
    expect(taken.bytes).toBe(20 + part(0).length);
  });

  it('begins every part line with the prefix the page tells parts by', () => {
    expect(part(0).startsWith(SNAPSHOT_PART_PREFIX)).toBe(true);
    expect(SNAPSHOT_PART_PREFIX).toBe('{"kind":"snapshot-part","events":[');
  });
});
