/**
 * The chunks of an inflated chunk run (see `chunk-runs.ts`) pushed onto a loading log, for a
 * full load of an SQL backend.
 *
 * A run holds a message's chunks as the JSON texts of their data, and most are text deltas:
 * `{"turn":3,"step":0,"chunk":{"type":"text-delta","id":"t1","delta":"Hel"}}`, the same text
 * up to the delta each time. Parsing each into an event is three objects per chunk, a million
 * for a 5,000-turn session, and building, checking, freezing and collecting them was most of
 * such a load. So once a chunk parses to a delta part, each next text that is the same text up
 * to its delta, then one JSON string, then `}}`, is read as that string alone, and the span of
 * them is held by the log as strings (`ElidedLog.pushDeltaRun`), an event built only when read.
 * Such a text can only parse to `{turn, step, chunk: {type, id, delta}}` with the span's values:
 * the held chunk is the chunk the text holds. Every other text is parsed in full.
 */

import type { ElidedLog } from '../../core/elided-log.js';
import type { JsonValue, SessionEvent } from '../../core/index.js';
import { CHUNK_DATA_KEYS, deltaPart, hasKeys } from '../contract/delta-part.js';
import { RUN_TYPE } from './chunk-runs.js';

/** A span of delta texts being gathered, and the text each of its chunks begins with. */
interface DeltaSpan {
  readonly prefix: string;
  readonly turn: number;
  readonly step: number;
  readonly type: string;
  readonly id: string;
  readonly deltas: string[];
  /** The index in the run of the span's first chunk. */
  readonly from: number;
}

/**
 * Where each line of the run being read ends: one array for every run of a load (a resume reads
 * thousands), grown when a run has more lines. Only {@link runLineEnds} writes it, and its
 * caller reads it before the next run is split.
 */
let lineEnds = new Int32Array(256);

/**
 * The index of the `\n` that ends each line of `text` (the inflated data of a run), in an array
 * that the next call reuses; `undefined` unless `text` is exactly `count` lines, each ended by
 * `\n`. Positions instead of a string per line: the line's delta is read from the text itself.
 */
export function runLineEnds(text: string, count: number): Int32Array | undefined {
  if (lineEnds.length < count) lineEnds = new Int32Array(Math.max(count, lineEnds.length * 2));
  const ends = lineEnds;
  let from = 0;
  for (let i = 0; i < count; i++) {
    const end = text.indexOf('\n', from);
    if (end === -1) return undefined;
    ends[i] = end;
    from = end + 1;
  }
  return from === text.length ? ends : undefined;
}

/**
 * Pushes the chunks `skip..` of a run whose first chunk is at seq `first` onto `log`: chunk `i`
 * is the line of `text` that ends at `ends[i]` (see {@link runLineEnds}), at time `times[i]`.
 * With `hold`, its text deltas go as held deltas, else each chunk as its event (a log that does
 * not begin at seq 0 holds none). `parse` parses a chunk's data text, and throws (naming the
 * seq) when the text is not JSON.
 */
export function pushRunTexts(
  text: string,
  ends: Int32Array,
  times: Float64Array,
  first: number,
  skip: number,
  log: ElidedLog,
  hold: boolean,
  parse: (text: string, seq: number) => unknown,
): void {
  let span: DeltaSpan | undefined;
  const count = times.length;
  for (let i = skip; i < count; i++) {
    const start = i === 0 ? 0 : (ends[i - 1] as number) + 1;
    const end = ends[i] as number;
    const delta = span === undefined ? undefined : deltaAt(text, start, end, span.prefix);
    if (delta !== undefined) {
      (span as DeltaSpan).deltas.push(delta);
      continue;
    }
    if (span !== undefined) pushSpan(log, span, times, i);
    const data = parse(text.slice(start, end), first + i);
    span = hold ? spanOf(data, i) : undefined;
    if (span === undefined) {
      log.push({ seq: first + i, time: times[i] as number, type: RUN_TYPE, data } as SessionEvent);
    }
  }
  if (span !== undefined) pushSpan(log, span, times, count);
}

function pushSpan(log: ElidedLog, span: DeltaSpan, times: Float64Array, to: number): void {
  const { turn, step, type, id, deltas } = span;
  log.pushDeltaRun({ turn, step, type, id, deltas, times: times.subarray(span.from, to) });
}

/** A span begun by the chunk at `index` of a run, when its parsed data is a delta part's. */
function spanOf(data: unknown, index: number): DeltaSpan | undefined {
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return undefined;
  if (!hasKeys(data, CHUNK_DATA_KEYS)) return undefined;
  const { turn, step, chunk } = data as { turn: unknown; step: unknown; chunk: JsonValue };
  // A held run's turn and step are numbers; the session checks them as it checks any chunk's.
  if (typeof turn !== 'number' || typeof step !== 'number') return undefined;
  const part = deltaPart(chunk);
  if (part === undefined) return undefined;
  const { type, id } = part;
  const prefix = `{"turn":${JSON.stringify(turn)},"step":${JSON.stringify(step)},"chunk":{"type":${JSON.stringify(type)},"id":${JSON.stringify(id)},"delta":`;
  return { prefix, turn, step, type, id, deltas: [part.delta], from: index };
}

/**
 * The delta of the line `text[start..end)` when it is `prefix`, one JSON string and `}}`; else
 * `undefined`. The string is the whole of what lies between (it opens and closes with a quote,
 * and `JSON.parse` takes nothing after a value), so the line parses to the prefix's data with
 * this delta.
 */
function deltaAt(text: string, start: number, end: number, prefix: string): string | undefined {
  const at = start + prefix.length;
  if (end - at < 3) return undefined;
  if (
    text.charCodeAt(at) !== 0x22 ||
    text.charCodeAt(end - 1) !== 0x7d ||
    text.charCodeAt(end - 2) !== 0x7d ||
    text.charCodeAt(end - 3) !== 0x22
  ) {
    return undefined;
  }
  // A slice compared whole: `startsWith` at an offset reads about twice as slow (Node 20's V8).
  if (text.slice(start, at) !== prefix) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text.slice(at, end - 2));
  } catch {
    return undefined;
  }
  return typeof value === 'string' ? value : undefined;
}
