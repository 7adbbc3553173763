/**
 * The stats of a JSONL log (`summarize`) in one sequential pass that decodes almost nothing:
 * every line's envelope prefix, `{"seq":N,"time":T,"type":"…"`, gives its time and type; only
 * the few lines of a type the stats need (`turn/start`, `assistant/message`, `compaction/end`)
 * are parsed. A log of stream chunks and tool output is mostly bytes that are skipped.
 *
 * Counts are taken per batch and kept only once its commit marker is read, so a torn final
 * batch is not counted, as `load` leaves it out. Checksums are not verified: `load` and
 * `verify` do that; a line this pass cannot read at all is a `CorruptLogError` naming it.
 */
import type { SessionHeader } from '../../core/index.js';
import { CorruptLogError } from '../contract/errors.js';
import type { SessionStats } from '../contract/session-store.js';
import { STATS_EVENT_TYPES, type StatsEvent, statsOf } from '../contract/store-rules.js';
import { RUN_KEY, runOf } from './chunk-run-line.js';
import { looksLikeCommit, parseCommit } from './format.js';
import type { FsFileHandle } from './fs.js';
import { parseHeaderLine } from './header.js';
import { startsWith } from './line-bytes.js';
import { decodeJson, LineReader } from './line-reader.js';

const SEQ_PREFIX = Buffer.from('{"seq":');
const RUN_PREFIX = Buffer.from(`{"${RUN_KEY}":`);
const TIME_KEY = Buffer.from(',"time":');
const TYPE_KEY = Buffer.from(',"type":"');
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** What a line's prefix says, when it is in the form palimpsest writes. */
interface Envelope {
  readonly time: number;
  readonly type: string;
}

/**
 * Reads the stats of the log open in `handle`.
 *
 * @throws CorruptLogError for a header or event line that cannot be read; FormatVersionError
 *   for a header of another version; LimitExceededError for an over-long line.
 */
export async function readStats(
  handle: FsFileHandle,
  file: string,
  expectedId: string,
  maxLineBytes: number,
): Promise<SessionStats> {
  const reader = new LineReader(handle, file, maxLineBytes);
  const first = await reader.next();
  if (first === undefined || !first.terminated) {
    throw new CorruptLogError({ file, line: 1, offset: 0, reason: 'the log has no header line' });
  }
  const header: SessionHeader = parseHeaderLine(first.bytes, file, expectedId);
  let count = 0;
  let lastTime: number | undefined;
  const picked: StatsEvent[] = [];
  // The batch being read: kept once its commit marker is.
  let batchCount = 0;
  let batchTime: number | undefined;
  let batchPicked: StatsEvent[] = [];
  for (;;) {
    const line = reader.nextBuffered() ?? (await reader.next());
    if (line === undefined || !line.terminated) break;
    const bytes = line.bytes;
    if (looksLikeCommit(bytes)) {
      if (parseCommit(bytes) === undefined) break; // a damaged marker ends what is committed
      count += batchCount;
      if (batchTime !== undefined) lastTime = batchTime;
      picked.push(...batchPicked);
      batchCount = 0;
      batchTime = undefined;
      batchPicked = [];
      continue;
    }
    if (matches(bytes, 0, RUN_PREFIX)) {
      // A run of chunks: its length and last time (no chunk type is one the stats read).
      const run = decodeRun(bytes, file, line.number, line.offset, count + batchCount);
      batchCount += run.count;
      batchTime = run.lastTime;
      continue;
    }
    const envelope = readEnvelope(bytes) ?? decodeEnvelope(bytes, file, line.number, line.offset);
    batchCount++;
    batchTime = envelope.time;
    if (STATS_EVENT_TYPES.has(envelope.type)) {
      const decoded = decodeJson(bytes);
      if ('problem' in decoded) {
        throw corrupt(file, line.number, line.offset, `event line is ${decoded.problem}`);
      }
      const { data } = decoded.value as StatsEvent;
      batchPicked.push({ type: envelope.type, data });
    }
  }
  return statsOf(header, count, lastTime, picked);
}

/**
 * The time and type of an event line in the form palimpsest writes, read from its first bytes
 * without decoding the line; `undefined` for any other form (parsed instead).
 */
function readEnvelope(bytes: Buffer): Envelope | undefined {
  if (!matches(bytes, 0, SEQ_PREFIX)) return;
  let at = skipInteger(bytes, SEQ_PREFIX.length, false);
  if (at === -1 || !matches(bytes, at, TIME_KEY)) return;
  const timeStart = at + TIME_KEY.length;
  at = skipInteger(bytes, timeStart, true);
  if (at === -1 || !matches(bytes, at, TYPE_KEY)) return;
  const time = Number(bytes.toString('latin1', timeStart, at));
  const typeStart = at + TYPE_KEY.length;
  const typeEnd = bytes.indexOf(QUOTE, typeStart);
  if (typeEnd === -1 || bytes.subarray(typeStart, typeEnd).includes(BACKSLASH)) return;
  if (!Number.isSafeInteger(time)) return;
  return { time, type: bytes.toString('utf8', typeStart, typeEnd) };
}

/** The length and last time of a run line whose first event is `seq`. */
function decodeRun(
  bytes: Buffer,
  file: string,
  line: number,
  offset: number,
  seq: number,
): { count: number; lastTime: number } {
  const decoded = decodeJson(bytes);
  if ('problem' in decoded) throw corrupt(file, line, offset, `run line is ${decoded.problem}`);
  const run = runOf(decoded.value, seq);
  if (run === undefined) throw corrupt(file, line, offset, 'a run line that is not a run');
  if (typeof run === 'string') throw corrupt(file, line, offset, run);
  let lastTime = run.time;
  for (const step of run.dt) lastTime += step;
  return { count: run.chunks.length, lastTime };
}

/** The envelope of a line in any other form: the line is parsed. */
function decodeEnvelope(bytes: Buffer, file: string, line: number, offset: number): Envelope {
  const decoded = decodeJson(bytes);
  if ('problem' in decoded) throw corrupt(file, line, offset, `event line is ${decoded.problem}`);
  const { time, type } = (decoded.value ?? {}) as { time?: unknown; type?: unknown };
  if (typeof time !== 'number' || typeof type !== 'string') {
    throw corrupt(file, line, offset, 'event line has no numeric time or string type');
  }
  return { time, type };
}

/** Where the digits (with an optional `-` when `signed`) at `start` end, or -1. */
function skipInteger(bytes: Buffer, start: number, signed: boolean): number {
  let at = start;
  if (signed && bytes[at] === 0x2d) at++;
  const digits = at;
  while (at < bytes.length && (bytes[at] as number) >= 0x30 && (bytes[at] as number) <= 0x39) at++;
  return at === digits || at - digits > 16 ? -1 : at;
}

/** Whether `key` is at `at` in `bytes`. */
function matches(bytes: Buffer, at: number, key: Buffer): boolean {
  return startsWith(bytes, at, bytes.length, key);
}

function corrupt(file: string, line: number, offset: number, reason: string): CorruptLogError {
  return new CorruptLogError({ file, line, offset, reason });
}
