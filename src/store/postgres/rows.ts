/**
 * Rows of the PostgreSQL store and their decoding: each row checked as it is turned back into an
 * event (its seq where the log says, its JSON columns parseable), so that damage, or rows another
 * program wrote, is a `CorruptLogError` naming the row, never a shorter or different session.
 */
import { CitedSeqs, elidedChunk, type SessionEvent } from '../../core/index.js';
import { CorruptLogError } from '../errors.js';
import { checkRowPosition, checkRowsComplete } from '../store-rules.js';

/** A row of `events` as a load selects it. */
export interface EventRow {
  readonly seq: string | number;
  readonly type: string;
  readonly time: string | number;
  readonly data: string;
  readonly source_event_seqs: string | null;
  readonly surface_op: string | null;
}

/** Where rows come from, for messages. */
export interface RowSite {
  readonly location: string;
  readonly id: string;
}

/** The events of rows in seq order, and the seqs of the finished chunks left as stubs. */
export interface DecodedRows {
  readonly events: SessionEvent[];
  readonly elided: number[];
  /** With `salvage`: the first damage, which ended `events`. */
  readonly damage?: CorruptLogError;
}

/**
 * Decodes a session's rows, which must be exactly seqs `0..recordedLength-1`. With `salvage`,
 * the first problem ends the events there and is returned instead of thrown.
 */
export function decodeRows(
  site: RowSite,
  rows: readonly EventRow[],
  recordedLength: number,
  salvage: boolean,
): DecodedRows {
  const events: SessionEvent[] = [];
  const elided: number[] = [];
  try {
    const checked = { file: site.location, id: site.id };
    for (const row of rows) {
      const seq = Number(row.seq);
      checkRowPosition(checked, seq, events.length, recordedLength);
      events.push(decodeRow(site, row));
    }
    checkRowsComplete(checked, events.length, recordedLength);
  } catch (error) {
    if (!salvage || !CorruptLogError.isInstance(error)) throw error;
    return { events, elided, damage: error };
  }
  return { events, elided };
}

/**
 * The finished-chunk candidates of a fast load: the time and data size of each, by seq. A row
 * object per chunk is what made a fast load slow (most of a streamed session is chunks), so
 * their metadata travels as one binary value the server aggregates (see
 * {@link ELIDABLE_CHUNK_BYTES}) and is read here without an object per chunk.
 */
export interface ElidableChunks {
  /** 1 at the seqs of the candidates. */
  readonly at: Uint8Array;
  readonly times: Float64Array;
  readonly bytes: Float64Array;
  readonly count: number;
}

/**
 * The bytes of one chunk in the aggregate: `int8send(seq) || int8send(time) ||
 * int4send(octet_length(data))`, big-endian as PostgreSQL sends them.
 */
export const ELIDABLE_CHUNK_BYTES = 20;

/**
 * Reads the aggregate of {@link ElidableChunks} (`null` when there are none) of a session of
 * `recordedLength` events. Each chunk is placed by its seq, so the aggregate may come in any
 * order (one without ORDER BY, which would sort on the server, follows the scan).
 */
export function parseElidableChunks(
  site: RowSite,
  packed: Buffer | null,
  recordedLength: number,
): ElidableChunks {
  const length = packed === null ? 0 : packed.length;
  if (length % ELIDABLE_CHUNK_BYTES !== 0) {
    throw new CorruptLogError({
      file: site.location,
      reason: `the chunk metadata the server aggregated for session '${site.id}' is ${length} bytes, not a multiple of ${ELIDABLE_CHUNK_BYTES}`,
    });
  }
  const count = length / ELIDABLE_CHUNK_BYTES;
  const chunks = {
    at: new Uint8Array(recordedLength),
    times: new Float64Array(recordedLength),
    bytes: new Float64Array(recordedLength),
    count,
  };
  for (let at = 0; at < length; at += ELIDABLE_CHUNK_BYTES) {
    const buffer = packed as Buffer;
    const seq = int64(buffer, at);
    if (seq < 0 || seq >= recordedLength) throw beyondLength(site, seq, recordedLength);
    if (chunks.at[seq] === 1) {
      throw corruptRow(site, seq, `session '${site.id}' has two event rows with seq ${seq}`);
    }
    chunks.at[seq] = 1;
    chunks.times[seq] = int64(buffer, at + 8);
    chunks.bytes[seq] = buffer.readInt32BE(at + 16);
  }
  return chunks;
}

/** A big-endian int8 as a number (seqs and times are safe integers). */
function int64(buffer: Buffer, at: number): number {
  return buffer.readInt32BE(at) * 2 ** 32 + buffer.readUInt32BE(at + 4);
}

/**
 * The events of a fast load: the rows loaded whole (`kept`, decoded, in seq order) merged with
 * stubs for the elidable chunks, checked to be exactly seqs `0..recordedLength-1` as
 * {@link decodeRows} checks a full load.
 */
export function mergeElided(
  site: RowSite,
  kept: readonly SessionEvent[],
  chunks: ElidableChunks,
  recordedLength: number,
): DecodedRows {
  const events: SessionEvent[] = [];
  const elided: number[] = [];
  let next = 0;
  for (let seq = 0; seq < recordedLength; seq++) {
    const event = kept[next];
    if (event !== undefined && event.seq === seq) {
      if (chunks.at[seq] === 1) {
        throw corruptRow(site, seq, `session '${site.id}' has two event rows with seq ${seq}`);
      }
      events.push(event);
      next++;
    } else if (chunks.at[seq] === 1) {
      elided.push(seq);
      events.push(elidedChunk(seq, chunks.times[seq] as number, chunks.bytes[seq] as number));
    } else {
      throw corruptRow(site, seq, `session '${site.id}' has no event with seq ${seq}`);
    }
  }
  const beyond = kept[next];
  if (beyond !== undefined) throw beyondLength(site, beyond.seq, recordedLength);
  return { events, elided };
}

function beyondLength(site: RowSite, seq: number, recordedLength: number): CorruptLogError {
  return corruptRow(
    site,
    seq,
    `session '${site.id}' has an event row beyond its recorded length of ${recordedLength}`,
  );
}

/** One event of its row (its body present). */
export function decodeRow(site: RowSite, row: EventRow): SessionEvent {
  const seq = Number(row.seq);
  const data = parseColumn(site, row.data, seq, 'data');
  const surfaceOp =
    row.surface_op === null ? undefined : parseColumn(site, row.surface_op, seq, 'surface_op');
  if (
    surfaceOp !== undefined &&
    typeof surfaceOp !== 'string' &&
    (typeof surfaceOp !== 'object' || surfaceOp === null)
  ) {
    throw corruptRow(site, seq, `the surface_op of session '${site.id}' is not a surface op`);
  }
  const sources =
    row.source_event_seqs === null
      ? undefined
      : parseColumn(site, row.source_event_seqs, seq, 'source_event_seqs');
  if (sources !== undefined && !Array.isArray(sources)) {
    throw corruptRow(site, seq, `the source_event_seqs of session '${site.id}' is not an array`);
  }
  return {
    seq,
    time: Number(row.time),
    type: row.type,
    data,
    ...(surfaceOp === undefined ? {} : { surfaceOp }),
    ...(sources === undefined ? {} : { sourceEventSeqs: sources }),
  } as SessionEvent;
}

/** The elided seqs no message of `events` cites: chunks of an open stream, to load in full. */
export function unfinishedChunks(
  events: readonly SessionEvent[],
  elided: readonly number[],
): number[] {
  const cited = new CitedSeqs();
  for (const event of events) cited.cite(event);
  return elided.filter((seq) => !cited.has(seq));
}

function parseColumn(site: RowSite, text: string, seq: number, column: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new CorruptLogError(
      {
        file: site.location,
        row: seq,
        reason: `the ${column} of session '${site.id}' is not valid JSON`,
      },
      { cause: error },
    );
  }
}

/** A `CorruptLogError` at the row of `seq`. */
export function corruptRow(site: RowSite, seq: number, reason: string): CorruptLogError {
  return new CorruptLogError({ file: site.location, row: seq, reason });
}

/** The key `list` sorts ids by: UTF-16BE code units, as JavaScript compares strings. */
export function idOrder(id: string): Buffer {
  return Buffer.from(id, 'utf16le').swap16();
}
