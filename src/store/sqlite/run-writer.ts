/**
 * The append side of chunk runs: which chunks a batch's messages finish, and the writes that
 * move them into `chunk_runs` inside the append's transaction (see `chunk-runs.ts`).
 */
import type { SessionEvent } from '../../core/index.js';
import { citedRanges, encodeRun, RUN_TYPE, type RunChunk, splitRuns } from './chunk-runs.js';
import { corruptRow, type EventRow, type RowContext, rowChecksum } from './rows.js';
import type { Statements } from './statements.js';

/** The runs one batch makes. */
export interface RunPlan {
  /** Whether the batch's event at `seq` goes into a run (and so into no row of `events`). */
  joins(seq: number): boolean;
  /** Inserts the runs and deletes the stored rows they took in. */
  write(): void;
}

const NO_RUNS: RunPlan = { joins: () => false, write: () => {} };

/**
 * Plans the runs of a batch appended at `expected`: each run of consecutive chunks an
 * `assistant/message` of the batch cites, whether its chunks are in the batch or stored rows of
 * earlier batches. A stored chunk is checked against its checksum before it is moved: a run must
 * never give damaged data a fresh checksum.
 *
 * @throws CorruptLogError when a stored chunk a run would take in is damaged.
 */
export function planRuns(
  sql: Statements,
  context: RowContext,
  events: readonly SessionEvent[],
  expected: number,
): RunPlan {
  const ranges = citedRanges(events);
  if (ranges.length === 0) return NO_RUNS;
  const claimed = new Set<number>();
  const runs: RunChunk[][] = [];
  for (const { start, end } of ranges) {
    const chunks: (RunChunk | undefined)[] = [];
    const lastStored = Math.min(end, expected - 1);
    if (start <= lastStored) {
      let at = start;
      for (const row of sql.eventRange.all(context.key, start, lastStored) as EventRow[]) {
        // A seq without a row is in a run already.
        for (; at < row.seq; at++) chunks.push(undefined);
        chunks.push(storedChunk(context, row));
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
  if (runs.length === 0) return NO_RUNS;
  return {
    joins: (seq) => seq >= expected && claimed.has(seq),
    write: () => {
      for (const run of runs) {
        const row = encodeRun(context.key, run);
        sql.insertRun.run(
          context.key,
          row.first_seq,
          row.count,
          row.time,
          row.times,
          row.sizes,
          row.data,
          row.crc,
        );
        const first = row.first_seq;
        const last = Math.min(first + row.count - 1, expected - 1);
        if (first > last) continue;
        const { changes } = sql.deleteRange.run(context.key, first, last);
        if (changes !== last - first + 1) {
          // Impossible inside the append's transaction, unless the database is damaged.
          throw corruptRow(
            context.file,
            first,
            `session '${context.id}' lost rows of seqs ${first}..${last} while they were moved into a chunk run`,
          );
        }
      }
    },
  };
}

/** A stored row as a run's chunk, if it may join one (checked against its checksum). */
function storedChunk(context: RowContext, row: EventRow): RunChunk | undefined {
  if (row.source_event_seqs !== null || row.surface_op !== null) return undefined;
  if (context.typeName(row.type) !== RUN_TYPE) return undefined;
  const crc = rowChecksum(context.key, row.seq, RUN_TYPE, row.time, row.data, null, null);
  if (crc !== row.crc) {
    throw corruptRow(
      context.file,
      row.seq,
      `the event row of session '${context.id}' does not match its checksum`,
    );
  }
  return { seq: row.seq, time: row.time, data: row.data };
}

/** An event of the batch as a run's chunk, if it may join one. */
function batchChunk(event: SessionEvent | undefined): RunChunk | undefined {
  if (event === undefined || event.type !== RUN_TYPE) return undefined;
  if (event.sourceEventSeqs !== undefined || event.surfaceOp !== undefined) return undefined;
  const data = JSON.stringify(event.data) as string | undefined;
  return data === undefined ? undefined : { seq: event.seq, time: event.time, data };
}
