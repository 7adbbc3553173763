/**
 * Where an imported fork may start: how long a prefix two event lists share, and the longest
 * prefix of it a fork can copy (one that does not end inside a turn or a compaction bracket, as
 * `palimpsest fork` cuts).
 */
import type { SessionEvent } from '../core/index.js';

/** How many leading events of `a` and `b` are `equal`. */
export function sharedPrefix(
  a: readonly SessionEvent[],
  b: readonly SessionEvent[],
  equal: (x: SessionEvent, y: SessionEvent) => boolean,
): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    if (!equal(a[i] as SessionEvent, b[i] as SessionEvent)) return i;
  }
  return n;
}

/**
 * The largest length at or below `length` whose prefix of `events` ends outside every turn and
 * every compaction bracket: a child seeded with it holds whole turns and whole compactions only.
 */
export function forkBoundary(events: readonly SessionEvent[], length: number): number {
  let boundary = 0;
  let turnOpen = false;
  let compacting = 0;
  for (let i = 0; i < length; i++) {
    const type = (events[i] as SessionEvent).type;
    if (type === 'turn/start') turnOpen = true;
    else if (type === 'turn/end') turnOpen = false;
    else if (type === 'compaction/start') compacting++;
    else if (type === 'compaction/end') compacting = Math.max(0, compacting - 1);
    if (!turnOpen && compacting === 0) boundary = i + 1;
  }
  return boundary;
}
