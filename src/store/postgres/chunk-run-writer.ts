/**
 * The append side of chunk runs in PostgreSQL: the chunks a batch's messages finish (planned by
 * `../run-plan.ts`, as in SQLite) and the statements that move them into `chunk_runs` inside
 * the append's transaction. The append holds the session's row `FOR UPDATE`, has checked
 * `expectedSeq` and the lease before it plans: no other writer can change the rows it reads and
 * moves, and a retry that finds its batch landed returns before planning, so rows move once.
 */
import type { SessionEvent } from '../../core/index.js';
import {
  type PlannedRuns,
  planRunChunks,
  type StoredChunk,
  storedPart,
  storedRanges,
} from '../sql/chunk-run-plan.js';
import type { RunContext } from '../sql/chunk-run-rows.js';
import {
  encodeRun,
  envelopeChecksum,
  RUN_TYPE,
  type RunChunk,
  runColumns,
  runDigest,
} from '../sql/chunk-runs.js';
import { checkEventRow } from '../sql/row-checksums.js';
import type { PgQueryable } from './driver.js';
import { corruptRow, EVENT_COLUMNS, type EventRow, type RowSite, runContext } from './rows.js';

/** Runs per INSERT statement: 9 parameters a run stays far below the protocol's 65,535. */
const RUNS_PER_INSERT = 1000;

/**
 * Plans the runs of a batch appended at `expected` to the session of `key`, reading the stored
 * chunk rows of earlier batches that its messages cite.
 *
 * @throws CorruptLogError when a stored chunk a run would take in does not match its checksum:
 *   a run must never give damaged data a fresh checksum.
 */
export async function planRuns(
  client: PgQueryable,
  s: string,
  site: RowSite,
  key: string,
  events: readonly SessionEvent[],
  expected: number,
): Promise<PlannedRuns> {
  const ranges = storedRanges(events, expected);
  const stored = new Map<string, StoredChunk[]>();
  for (const { start, end } of ranges) {
    const { rows } = await client.query<EventRow>(
      `SELECT ${EVENT_COLUMNS} FROM ${s}.events WHERE session_key = $1 AND seq BETWEEN $2 AND $3 ORDER BY seq`,
      [key, start, end],
    );
    const context = runContext(site, key);
    stored.set(
      `${start} ${end}`,
      rows.map((row) => ({ seq: Number(row.seq), chunk: storedChunk(context, row) })),
    );
  }
  return planRunChunks(events, expected, (start, last) => stored.get(`${start} ${last}`) ?? []);
}

/** Inserts the planned runs and deletes the stored rows they took in. */
export async function writeRuns(
  client: PgQueryable,
  s: string,
  site: RowSite,
  key: string,
  planned: PlannedRuns,
  expected: number,
): Promise<void> {
  const { runs } = planned;
  for (let from = 0; from < runs.length; from += RUNS_PER_INSERT) {
    await insertRuns(client, s, key, runs.slice(from, from + RUNS_PER_INSERT));
  }
  for (const run of runs) {
    const part = storedPart(run, expected);
    if (part === undefined) continue;
    const { first, last } = part;
    const { rowCount } = await client.query(
      `DELETE FROM ${s}.events WHERE session_key = $1 AND seq BETWEEN $2 AND $3`,
      [key, first, last],
    );
    if (rowCount !== last - first + 1) {
      // Impossible under the session's row lock, unless something else writes the table.
      throw corruptRow(
        site,
        first,
        `session '${site.id}' lost rows of seqs ${first}..${last} while they were moved into a chunk run`,
      );
    }
  }
}

async function insertRuns(
  client: PgQueryable,
  s: string,
  key: string,
  runs: readonly RunChunk[][],
): Promise<void> {
  const values: unknown[] = [key];
  const tuples: string[] = [];
  for (const run of runs) {
    const row = encodeRun(Number(key), run);
    const n = values.length;
    tuples.push(
      `($1, $${n + 1}, $${n + 2}, $${n + 3}, $${n + 4}, $${n + 5}, $${n + 6}, $${n + 7}, $${n + 8})`,
    );
    values.push(...runColumns(row), envelopeChecksum(Number(key), row, runDigest(row.data)));
  }
  await client.query(
    `INSERT INTO ${s}.chunk_runs (session_key, first_seq, count, time, times, sizes, data, crc, envelope_crc) VALUES ${tuples.join(', ')}`,
    values,
  );
}

/** A stored row as a run's chunk, if it may join one (checked against its checksum). */
function storedChunk(context: RunContext, row: EventRow): RunChunk | undefined {
  if (row.type !== RUN_TYPE || row.source_event_seqs !== null || row.surface_op !== null) {
    return undefined;
  }
  checkEventRow(context, RUN_TYPE, row);
  return { seq: Number(row.seq), time: Number(row.time), data: row.data };
}
