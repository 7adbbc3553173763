/**
 * The append side of chunk runs: which chunks a batch's messages finish, and the writes that
 * move them into `chunk_runs` inside the append's transaction (see `chunk-runs.ts`).
 */
import type { SessionEvent } from '../../core/index.js';
import { planRunChunks, type StoredChunk, storedPart } from '../sql/chunk-run-plan.js';
import { encodeRun, RUN_TYPE, type RunChunk, runColumns } from '../sql/chunk-runs.js';
import { checkEventRow } from '../sql/row-checksums.js';
import { corruptRow, type EventRow, type RowContext } from './rows.js';
import type { Statements } from './statements.js';

/** The runs one batch makes. */
export interface RunPlan {
  /** Whether the batch's event at `seq` goes into a run (and so into no row of `events`). */
  joins(seq: number): boolean;
  /** Inserts the runs and deletes the stored rows they took in. */
  write(): void;
}

/**
 * Plans the runs of a batch appended at `expected` (`run-plan.ts`). A stored chunk is checked
 * against its checksum before it is moved: a run must never give damaged data a fresh checksum.
 *
 * @throws CorruptLogError when a stored chunk a run would take in is damaged.
 */
export function planRuns(
  sql: Statements,
  context: RowContext,
  events: readonly SessionEvent[],
  expected: number,
): RunPlan {
  const planned = planRunChunks(events, expected, (start, last) =>
    (sql.eventRange.all(context.key, start, last) as EventRow[]).map(
      (row): StoredChunk => ({ seq: row.seq, chunk: storedChunk(context, row) }),
    ),
  );
  return {
    joins: planned.joins,
    write: () => {
      for (const run of planned.runs) {
        const row = encodeRun(context.key, run);
        sql.insertRun.run(context.key, ...runColumns(row));
        const part = storedPart(run, expected);
        if (part === undefined) continue;
        const { first, last } = part;
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
  checkEventRow(context, RUN_TYPE, row);
  return { seq: row.seq, time: row.time, data: row.data };
}
