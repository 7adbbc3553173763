/**
 * The reference reader of a JSONL log: line by line from a batch boundary to the end, deciding
 * every line on its own, so that it names the first damaged line exactly and tells a torn tail
 * (damage after the last commit marker) from damage in acknowledged data.
 */
import type { SessionEvent } from '../../core/index.js';
import { crc32 } from '../contract/crc32.js';
import { CorruptLogError } from '../contract/errors.js';
import type { TornTail } from '../contract/session-store.js';
import { runEvents, runOf } from './chunk-run-line.js';
import { looksLikeCommit, NEWLINE_BYTES, parseCommit } from './format.js';
import type { FsFileHandle } from './fs.js';
import { decodeJson, LineReader, type RawLine, READ_CHUNK_BYTES } from './line-reader.js';

/** Where {@link scanLines} starts: at a batch boundary, with the log committed so far. */
export interface LineScanStart {
  /** The log's path, for error messages. */
  readonly file: string;
  readonly maxLineBytes: number;
  /** Byte offset of the first line to read (a batch's first line, or the end of the file). */
  readonly offset: number;
  /** Its 1-based line number. */
  readonly lineNumber: number;
  /** Where the committed log ends (after the last commit marker, or the header). */
  readonly committedEnd: number;
  /** Bytes per read (defaults to {@link READ_CHUNK_BYTES}). */
  readonly chunkBytes?: number;
}

/** How a log ends, as {@link scanLines} found it. */
export interface LineScanEnd {
  /** Byte offset where the committed log ends. */
  readonly committedEnd: number;
  /** Bytes scanned (the file size as read). */
  readonly size: number;
  /** The 1-based line number at `committedEnd` (the reference reader counts lines). */
  readonly committedLine?: number;
  readonly tornTail?: TornTail;
}

/** Where committed events go: an array, or a loading `ElidedLog`. */
export interface EventSink {
  readonly length: number;
  push(event: SessionEvent): unknown;
}

/**
 * Reads a log line by line from a batch boundary to its end, adding each committed batch's
 * events to `events` (which holds the events committed before `start`), and classifies the end.
 * The reference reader: it decides every line on its own, so it names the first damaged line
 * exactly. The batch scanner (`scan.ts`) hands over to it at the first batch it doubts.
 *
 * @throws CorruptLogError for damage before the last commit marker; LimitExceededError for an
 *   over-long line.
 */
export async function scanLines(
  handle: FsFileHandle,
  start: LineScanStart,
  events: EventSink,
): Promise<LineScanEnd> {
  const { file, maxLineBytes } = start;
  const reader = new LineReader(
    handle,
    file,
    maxLineBytes,
    start.offset,
    start.lineNumber,
    start.chunkBytes ?? READ_CHUNK_BYTES,
  );
  const batch: BatchState = { events: [], checksum: 0, bytes: 0 };
  let committedEnd = start.committedEnd;
  let committedLine = start.lineNumber;
  let end = start.offset;
  let damage: { line: RawLine; problem: string } | undefined;
  const acknowledged = (problem: string, reason: string): CorruptLogError =>
    new CorruptLogError({
      file,
      line: damage?.line.number,
      offset: damage?.line.offset,
      reason: `${problem}; ${reason}, so the damage is in acknowledged data`,
    });
  // The marker that closes the damaged batch, once found.
  let closing: RawLine | undefined;
  for (;;) {
    const line = reader.nextBuffered() ?? (await reader.next());
    if (line === undefined) break;
    end = line.offset + line.bytes.length + (line.terminated ? 1 : 0);
    if (damage !== undefined) {
      // Damage is tolerated only in the last batch written: batches are written one at a time,
      // each after the previous one's fsync, so a crash can damage the final batch alone (even
      // with its commit marker intact, when pages reach the disk out of order).
      if (closing !== undefined) {
        throw acknowledged(
          damage.problem,
          `the batch was committed at line ${closing.number} and more was written after it`,
        );
      }
      const commit = line.terminated ? parseCommit(line.bytes) : undefined;
      if (commit !== undefined) {
        // The marker says where its batch began: later than the last good marker means an
        // earlier, acknowledged batch lies in between, damaged.
        if (line.offset - commit.bytes !== committedEnd) {
          throw acknowledged(
            damage.problem,
            `the marker at line ${line.number} closes a later batch`,
          );
        }
        closing = line;
      }
      continue;
    }
    if (!line.terminated) {
      damage = { line, problem: 'incomplete final line' };
      continue;
    }
    const verdict = acceptLine(line.bytes, line.withNewline, events.length, batch);
    if (verdict.kind === 'commit') {
      for (const event of batch.events) events.push(event);
      batch.events = [];
      batch.checksum = 0;
      batch.bytes = 0;
      committedEnd = end;
      committedLine = line.number + 1;
    } else if (verdict.kind === 'damage') {
      damage = { line, problem: verdict.problem };
      // A well-formed marker that does not match its batch still closes that batch.
      const commit = parseCommit(line.bytes);
      if (commit !== undefined) {
        if (line.offset - commit.bytes !== committedEnd) {
          throw acknowledged(
            verdict.problem,
            `the marker at line ${line.number} closes a later batch`,
          );
        }
        closing = line;
      }
    }
  }
  const pending = batch.events;
  const size = end;
  if (damage === undefined && pending.length === 0) return { committedEnd, size, committedLine };
  const reason =
    damage === undefined
      ? `${pending.length} event(s) after the last commit marker (a batch that never completed)`
      : `${damage.problem} at line ${damage.line.number} (byte ${damage.line.offset}), after the last commit marker`;
  return {
    committedEnd,
    size,
    committedLine,
    tornTail: {
      committedSeq: events.length,
      reason,
      bytes: { offset: committedEnd, size: size - committedEnd },
    },
  };
}

type LineVerdict =
  | { readonly kind: 'event' | 'commit' }
  | { readonly kind: 'damage'; readonly problem: string };

/** The events of the batch being read, the running checksum and length of their lines. */
interface BatchState {
  events: SessionEvent[];
  checksum: number;
  bytes: number;
}

/**
 * Takes one complete body line: an event (added to the batch) or the commit marker closing the
 * batch (its count and checksum must match); anything else is damage, with the reason.
 */
function acceptLine(
  bytes: Buffer,
  withNewline: Buffer | undefined,
  committed: number,
  batch: BatchState,
): LineVerdict {
  const next = committed + batch.events.length;
  if (looksLikeCommit(bytes)) {
    const commit = parseCommit(bytes);
    if (commit === undefined) return { kind: 'damage', problem: 'a malformed commit marker' };
    if (batch.events.length === 0) {
      return { kind: 'damage', problem: 'a commit marker with no events before it' };
    }
    if (commit.count !== next) {
      return {
        kind: 'damage',
        problem: `commit marker ${commit.count} where ${next} was expected`,
      };
    }
    if (commit.bytes !== batch.bytes || commit.checksum !== batch.checksum) {
      return {
        kind: 'damage',
        problem: 'the batch does not match the length and checksum of its commit marker',
      };
    }
    return { kind: 'commit' };
  }
  const decoded = decodeJson(bytes);
  if ('problem' in decoded) return { kind: 'damage', problem: decoded.problem };
  const value = decoded.value;
  if (!isRecord(value)) return { kind: 'damage', problem: 'not a JSON object' };
  let added: SessionEvent[] = [value as SessionEvent];
  if (value.seq !== next) {
    const run = runOf(value, next);
    const chunks = run === undefined || typeof run === 'string' ? run : runEvents(run);
    if (chunks === undefined) {
      return {
        kind: 'damage',
        problem: `event seq ${describe(value.seq)} where seq ${next} was expected`,
      };
    }
    if (typeof chunks === 'string') return { kind: 'damage', problem: chunks };
    added = chunks;
  }
  batch.checksum =
    withNewline === undefined
      ? crc32(NEWLINE_BYTES, crc32(bytes, batch.checksum))
      : crc32(withNewline, batch.checksum);
  batch.bytes += bytes.length + 1;
  for (const event of added) batch.events.push(event);
  return { kind: 'event' };
}

function describe(value: unknown): string {
  if (typeof value === 'number') return String(value);
  if (value === undefined) return 'missing';
  return value === null ? 'null' : typeof value;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
