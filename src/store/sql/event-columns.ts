/**
 * An event row of an SQL backend turned back into its event: the JSON columns parsed and shaped
 * as the envelope says, so that a row another program wrote, or damage its checksum does not
 * see, is a `CorruptLogError` naming the row, never an event of another shape.
 */
import type { SessionEvent } from '../../core/index.js';
import { CorruptLogError } from '../contract/errors.js';

/** Where a row comes from, for errors: the location and the session's id. */
export interface EventSite {
  readonly file: string;
  readonly id: string;
}

/** The JSON text columns of an event row. */
export interface EventColumns {
  readonly data: string;
  readonly source_event_seqs: string | null;
  readonly surface_op: string | null;
}

/**
 * The event of a row of seq `seq`, type `type` and time `time` from its JSON columns.
 *
 * @throws CorruptLogError when a column is not JSON, `surface_op` is not a surface op, or
 *   `source_event_seqs` is not an array.
 */
export function decodeEventColumns(
  site: EventSite,
  seq: number,
  type: string,
  time: number,
  row: EventColumns,
): SessionEvent {
  const data = parseColumn(site, row.data, seq, 'data');
  let surfaceOp: unknown;
  if (row.surface_op !== null) {
    surfaceOp = parseColumn(site, row.surface_op, seq, 'surface_op');
    if (typeof surfaceOp !== 'string' && (typeof surfaceOp !== 'object' || surfaceOp === null)) {
      throw corruptColumn(site, seq, 'surface_op', 'is not a surface op');
    }
  }
  let sources: unknown;
  if (row.source_event_seqs !== null) {
    sources = parseColumn(site, row.source_event_seqs, seq, 'source_event_seqs');
    if (!Array.isArray(sources)) {
      throw corruptColumn(site, seq, 'source_event_seqs', 'is not an array');
    }
  }
  return {
    seq,
    time,
    type,
    data,
    ...(surfaceOp === undefined ? {} : { surfaceOp: surfaceOp as SessionEvent['surfaceOp'] }),
    ...(sources === undefined ? {} : { sourceEventSeqs: sources as number[] }),
  } as SessionEvent;
}

function parseColumn(site: EventSite, text: string, seq: number, column: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw corruptColumn(site, seq, column, 'is not valid JSON', error);
  }
}

function corruptColumn(
  site: EventSite,
  seq: number,
  column: string,
  problem: string,
  cause?: unknown,
): CorruptLogError {
  const where = {
    file: site.file,
    row: seq,
    reason: `the ${column} of session '${site.id}' ${problem}`,
  };
  return cause === undefined ? new CorruptLogError(where) : new CorruptLogError(where, { cause });
}
