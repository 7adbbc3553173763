/**
 * Which chunks an appended batch moves into chunk runs (see `chunk-runs.ts`): the planning both
 * SQL backends share. Reading the stored rows and writing the runs is each backend's own.
 */
import type { SessionEvent } from '../../core/index.js';
import { type CitedRange, citedRanges, RUN_TYPE, type RunChunk, splitRuns } from './chunk-runs.js';

/** A stored row of `events` in a cited range: its seq, and itself as a run's chunk if it may be one. */
export interface StoredChunk {
  readonly seq: number;
  readonly chunk: RunChunk | undefined;
}

/**
 * Reads the stored rows of seqs `start..last` (inclusive, all before the batch) in seq order. A
 * seq without a row is in a run already. Throws when a row a run would take in is damaged: a run
 * must never give damaged data a fresh checksum.
 */
export type StoredRange = (start: number, last: number) => Iterable<StoredChunk>;

/** The runs of one batch, planned. */
export interface PlannedRuns {
  /** Each run's chunks, consecutive seqs, at least two. */
  readonly runs: readonly RunChunk[][];
  /** Whether the batch's event at `seq` goes into a run (and so into no row of `events`). */
  joins(seq: number): boolean;
}

const NO_PLANNED_RUNS: PlannedRuns = { runs: [], joins: () => false };

/**
 * The ranges of stored rows (before `expected`) that planning a batch appended at `expected`
 * reads: for a backend that must fetch them before it plans (an asynchronous driver).
 */
export function storedRanges(events: readonly SessionEvent[], expected: number): CitedRange[] {
  return citedRanges(events)
    .map(({ start, end }) => ({ start, end: Math.min(end, expected - 1) }))
    .filter(({ start, end }) => start <= end);
}

/**
 * Plans the runs of a batch appended at `expected`: each run of consecutive chunks an
 * `assistant/message` of the batch cites, whether its chunks are in the batch or stored rows of
 * earlier batches (read through `stored`).
 */
export function planRunChunks(
  events: readonly SessionEvent[],
  expected: number,
  stored: StoredRange,
): PlannedRuns {
  const ranges = citedRanges(events);
  if (ranges.length === 0) return NO_PLANNED_RUNS;
  const claimed = new Set<number>();
  const runs: RunChunk[][] = [];
  for (const { start, end } of ranges) {
    const chunks: (RunChunk | undefined)[] = [];
    const lastStored = Math.min(end, expected - 1);
    if (start <= lastStored) {
      let at = start;
      for (const row of stored(start, lastStored)) {
        for (; at < row.seq; at++) chunks.push(undefined);
        chunks.push(row.chunk);
        at++;
      }
      for (; at <= lastStored; at++) chunks.push(undefined);
    }
    for (let seq = Math.max(start, expected); seq <= end; seq++) {
      chunks.push(batchChunk(events[seq - expected]));
    }
    // A chunk two messages cite joins the first one's run only.
    const free = chunks.map((chunk) =>
      chunk === undefined || claimed.has(chunk.seq) ? undefined : chunk,
    );
    for (const run of splitRuns(free)) {
      runs.push(run);
      for (const chunk of run) claimed.add(chunk.seq);
    }
  }
  if (runs.length === 0) return NO_PLANNED_RUNS;
  return { runs, joins: (seq) => seq >= expected && claimed.has(seq) };
}

/** The seqs of a run that were stored rows before the batch (`first..last`), or none. */
export function storedPart(
  run: readonly RunChunk[],
  expected: number,
): { readonly first: number; readonly last: number } | undefined {
  const first = (run[0] as RunChunk).seq;
  const last = Math.min(first + run.length - 1, expected - 1);
  return first > last ? undefined : { first, last };
}

/** An event of the batch as a run's chunk, if it may join one. */
function batchChunk(event: SessionEvent | undefined): RunChunk | undefined {
  if (event === undefined || event.type !== RUN_TYPE) return undefined;
  if (event.sourceEventSeqs !== undefined || event.surfaceOp !== undefined) return undefined;
  const data = JSON.stringify(event.data) as string | undefined;
  return data === undefined ? undefined : { seq: event.seq, time: event.time, data };
}
