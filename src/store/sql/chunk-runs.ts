/**
 * Chunk runs: how the SQL stores keep the stream chunks a message has finished (SQLite schema 4,
 * PostgreSQL schema 2, with an envelope checksum since 3). This module is the backend-neutral
 * encoding; each backend stores the columns below in a `chunk_runs` table of its own (BLOB in
 * SQLite, bytea in PostgreSQL).
 *
 * A streamed turn is mostly `assistant/chunk` events (200 per message in the benchmarks), and
 * each one as a row of its own costs a row header, a primary-key entry and a checksum, beside
 * data that repeats its neighbours' keys. Once an `assistant/message` cites its chunks they never
 * change and are read together or not at all, so the append that lands the message also moves
 * each maximal run of consecutive chunks it cites into one row of `chunk_runs`:
 *
 * - `first_seq`, `count`: the run covers seqs `first_seq .. first_seq + count - 1`;
 * - `time`: the first chunk's time; `times`: for each further chunk, the difference to the
 *   previous chunk's time as a zigzag LEB128 varint (`0, -1, 1, -2, ...` as `0, 1, 2, 3, ...`);
 * - `sizes`: for each chunk, the UTF-8 byte length of its data's JSON text, as a LEB128 varint;
 * - `data`: the chunks' data JSON texts, each followed by `\n` (JSON text holds no raw newline),
 *   compressed with raw DEFLATE (RFC 1951, zlib's `deflateRaw`);
 * - `crc`: the CRC-32 of `data`, continued over `times`, `sizes` and the line
 *   `\n<session key> <first_seq> <count> <time>` (the backend's integer key of the session, so a
 *   run that strays into another session is caught);
 * - `envelope_crc` (PostgreSQL since schema 3; this form since schema 4): the same CRC-32 with
 *   the SHA-256 digest of `data` in place of `data` (of the digest, `times`, `sizes` and that
 *   line), continued over ` <crc>`. A read that needs only the chunks' envelopes has the server
 *   compute the digest and checks the run without the compressed bytes crossing the wire, and
 *   every column of the row is still covered: `data` through its digest, `crc` by name.
 *
 * Every chunk keeps its own seq, time and data, byte for byte: a run is an encoding, not a
 * summary. A load that elides finished chunks reads `times` and `sizes` without inflating
 * anything; it checks them with `envelope_crc` where the backend has it (PostgreSQL, which then
 * reads the digest of `data`, not `data`) and with `crc` over the compressed bytes where it has
 * not (SQLite).
 * Chunks no message cites (a stream a crash left open) and chunks with provenance of their own
 * stay rows of `events`.
 */
import { createHash } from 'node:crypto';
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import type { SessionEvent } from '../../core/index.js';
import { crc32, crc32Text } from '../contract/crc32.js';

/** The type every event of a run has. */
export const RUN_TYPE = 'assistant/chunk';

/** Runs shorter than this stay rows: a run of one saves nothing. */
export const MIN_RUN_CHUNKS = 2;

/**
 * The largest time difference a run encodes: the zigzag of a larger one could leave the safe
 * integers. Chunks further apart in time stay rows.
 */
const MAX_TIME_STEP = 2 ** 51;

/** What a run says of its chunks without their data: their seqs, times and sizes. */
export interface RunEnvelope {
  readonly first_seq: number;
  readonly count: number;
  readonly time: number;
  readonly times: Uint8Array;
  readonly sizes: Uint8Array;
}

/** A row of `chunk_runs`, its integers as numbers (a backend converts what its driver gives). */
export interface RunRow extends RunEnvelope {
  readonly data: Uint8Array;
  readonly crc: number;
  /** The checksum of the envelope and data's digest, where the backend keeps one (PostgreSQL). */
  readonly envelope_crc?: number;
}

/**
 * A run read without its data (`data` not selected), checked by `envelope_crc`: `digest` is the
 * SHA-256 of its data, computed by the server.
 */
export interface RunEnvelopeRow extends RunEnvelope {
  readonly data?: undefined;
  readonly digest: Uint8Array;
  readonly crc: number;
  readonly envelope_crc: number;
}

/** A chunk a run is made of: its seq, its time and its data's JSON text as stored. */
export interface RunChunk {
  readonly seq: number;
  readonly time: number;
  readonly data: string;
}

/** The seqs `start..end` (inclusive) one message cites, consecutive. */
export interface CitedRange {
  readonly start: number;
  readonly end: number;
}

/**
 * The maximal ranges of consecutive seqs that the `assistant/message` events of a batch cite,
 * each at least {@link MIN_RUN_CHUNKS} long, in the order the messages come. Which seqs of a
 * range are chunks that may join a run is for the caller to check (some may be stored rows, some
 * in the batch, some not chunks at all).
 */
export function citedRanges(events: readonly SessionEvent[]): CitedRange[] {
  const ranges: CitedRange[] = [];
  for (const event of events) {
    if (event.type !== 'assistant/message') continue;
    const sources = event.sourceEventSeqs;
    if (sources === undefined || sources.length < MIN_RUN_CHUNKS) continue;
    // Stores keep what they are given: only a citation of an earlier event finishes a chunk
    // (the rule of `CitedSeqs`), so only those may form a run.
    const earlier = sources.filter(
      (seq) => Number.isSafeInteger(seq) && seq >= 0 && seq < event.seq,
    );
    const seqs = isAscending(earlier) ? earlier : earlier.sort((a, b) => a - b);
    if (seqs.length < MIN_RUN_CHUNKS) continue;
    let start = seqs[0] as number;
    let previous = start;
    for (let i = 1; i <= seqs.length; i++) {
      const seq = seqs[i];
      if (seq === previous + 1) {
        previous = seq;
        continue;
      }
      if (previous - start + 1 >= MIN_RUN_CHUNKS) ranges.push({ start, end: previous });
      if (seq === undefined) break;
      start = seq;
      previous = seq;
    }
  }
  return ranges;
}

function isAscending(seqs: readonly number[]): boolean {
  for (let i = 1; i < seqs.length; i++) {
    if ((seqs[i] as number) <= (seqs[i - 1] as number)) return false;
  }
  return true;
}

/**
 * Splits consecutive chunks into the runs they may form: a chunk that is `undefined` (not a
 * chunk that may join a run) ends one, and so does a time step too large to encode.
 */
export function splitRuns(chunks: readonly (RunChunk | undefined)[]): RunChunk[][] {
  const runs: RunChunk[][] = [];
  let current: RunChunk[] = [];
  const close = (): void => {
    if (current.length >= MIN_RUN_CHUNKS) runs.push(current);
    current = [];
  };
  for (const chunk of chunks) {
    if (chunk === undefined) {
      close();
      continue;
    }
    const previous = current.at(-1);
    if (previous !== undefined && Math.abs(chunk.time - previous.time) > MAX_TIME_STEP) close();
    current.push(chunk);
  }
  close();
  return runs;
}

/** The columns of a new run row for `chunks` (consecutive seqs, at least two). */
export function encodeRun(key: number, chunks: readonly RunChunk[]): RunRow {
  const first = chunks[0] as RunChunk;
  const times = new VarintWriter();
  const sizes = new VarintWriter();
  const texts: string[] = [];
  let previous = first.time;
  for (let i = 0; i < chunks.length; i++) {
    const chunk = chunks[i] as RunChunk;
    if (i > 0) times.write(zigzag(chunk.time - previous));
    previous = chunk.time;
    sizes.write(Buffer.byteLength(chunk.data, 'utf8'));
    texts.push(chunk.data, '\n');
  }
  const data = deflateRawSync(Buffer.from(texts.join(''), 'utf8'));
  const row = {
    first_seq: first.seq,
    count: chunks.length,
    time: first.time,
    times: times.bytes(),
    sizes: sizes.bytes(),
    data,
  };
  return { ...row, crc: runChecksum(key, row) };
}

/** A run row's columns in the order both backends' `chunk_runs` tables declare them. */
export function runColumns(
  row: RunRow,
): [number, number, number, Uint8Array, Uint8Array, Uint8Array, number] {
  return [row.first_seq, row.count, row.time, row.times, row.sizes, row.data, row.crc];
}

/** The checksum of a run row, `crc` (see the module comment). */
export function runChecksum(key: number, row: RunEnvelope & { readonly data: Uint8Array }): number {
  return envelopeChecksumFrom(key, row, crc32(row.data));
}

/**
 * The checksum of a run's envelope, `envelope_crc` (see the module comment), from the SHA-256
 * digest of its data ({@link runDigest}) and its `crc`.
 */
export function envelopeChecksum(
  key: number,
  row: RunEnvelope & { readonly crc: number },
  digest: Uint8Array,
): number {
  return crc32Text(` ${row.crc}`, envelopeChecksumFrom(key, row, crc32(digest)));
}

/**
 * The CRC-32 of a run's `times`, `sizes` and key line, continued from `previous`: from the CRC
 * of its data, the run's `crc`; from 0, PostgreSQL schema 3's `envelope_crc`.
 */
export function envelopeChecksumFrom(key: number, row: RunEnvelope, previous: number): number {
  let crc = crc32(row.times, previous);
  crc = crc32(row.sizes, crc);
  return crc32Text(`\n${key} ${row.first_seq} ${row.count} ${row.time}`, crc);
}

/**
 * The SHA-256 digest of a run's data, which `envelope_crc` covers: what PostgreSQL's `sha256()`
 * gives for the stored bytes.
 */
export function runDigest(data: Uint8Array): Buffer {
  return createHash('sha256').update(data).digest();
}

/** A run's times and sizes, decoded; `undefined` when they do not hold `count` values each. */
export function runEnvelopes(
  row: RunEnvelope,
): { readonly times: Float64Array; readonly sizes: Float64Array } | undefined {
  const { count } = row;
  const times = new Float64Array(count);
  const sizes = new Float64Array(count);
  // The steps land in times[1..] and are summed in place.
  if (!readVarints(row.times, times, 1) || !readVarints(row.sizes, sizes, 0)) return undefined;
  let time = row.time;
  times[0] = time;
  for (let i = 1; i < count; i++) {
    time += unzigzag(times[i] as number);
    if (!Number.isSafeInteger(time)) return undefined;
    times[i] = time;
  }
  return { times, sizes };
}

/**
 * A run's data inflated: its chunks' JSON texts, each followed by `\n`; `undefined` when the
 * bytes do not inflate or do not end with a `\n`.
 */
export function inflateRun(row: RunRow): string | undefined {
  let text: string;
  try {
    text = inflateRawSync(row.data).toString('utf8');
  } catch {
    return undefined;
  }
  return text.endsWith('\n') ? text : undefined;
}

/**
 * A run's data JSON texts, inflated and split; `undefined` when the bytes do not inflate into
 * exactly `count` newline-ended texts.
 */
export function runTexts(row: RunRow): string[] | undefined {
  const text = inflateRun(row);
  if (text === undefined) return undefined;
  const texts = text.slice(0, -1).split('\n');
  return texts.length === row.count ? texts : undefined;
}

function zigzag(value: number): number {
  return value >= 0 ? value * 2 : -value * 2 - 1;
}

function unzigzag(value: number): number {
  return value % 2 === 0 ? value / 2 : -(value + 1) / 2;
}

/** Unsigned LEB128 varints of safe integers, written with arithmetic (no 32-bit bit ops). */
class VarintWriter {
  readonly #bytes: number[] = [];

  write(value: number): void {
    let rest = value;
    while (rest >= 0x80) {
      this.#bytes.push((rest % 0x80) + 0x80);
      rest = Math.floor(rest / 0x80);
    }
    this.#bytes.push(rest);
  }

  bytes(): Buffer {
    return Buffer.from(this.#bytes);
  }
}

/**
 * Reads what {@link VarintWriter} wrote into `out` from index `start` to its end; false unless
 * `bytes` holds exactly that many varints of safe integers. One loop for a run's values, with
 * the one-byte varint (most steps and many sizes) first: a resume reads a million of them.
 */
function readVarints(bytes: Uint8Array, out: Float64Array, start: number): boolean {
  const length = bytes.length;
  let at = 0;
  for (let i = start; i < out.length; i++) {
    if (at >= length) return false;
    let byte = bytes[at++] as number;
    if (byte < 0x80) {
      out[i] = byte;
      continue;
    }
    let value = byte & 0x7f;
    let scale = 0x80;
    for (;;) {
      if (at >= length) return false;
      byte = bytes[at++] as number;
      value += (byte & 0x7f) * scale;
      if (byte < 0x80) break;
      scale *= 0x80;
      if (scale > 2 ** 56) return false;
    }
    if (!Number.isSafeInteger(value)) return false;
    out[i] = value;
  }
  return at === length;
}
