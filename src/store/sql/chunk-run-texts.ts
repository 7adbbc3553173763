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
  readonly times: number[];
}

/**
 * Pushes the chunks `texts[skip..]` of the run whose first chunk is at seq `first`, each at its
 * time of `times`, onto `log`: with `hold`, its text deltas as held deltas, else each chunk as
 * its event (a log that does not begin at seq 0 holds none). `parse` parses a chunk's data
 * text, and throws (naming the seq) when the text is not JSON.
 */
export function pushRunTexts(
  texts: readonly string[],
  times: ArrayLike<number>,
  first: number,
  skip: number,
  log: ElidedLog,
  hold: boolean,
  parse: (text: string, seq: number) => unknown,
): void {
  let span: DeltaSpan | undefined;
  for (let i = skip; i < texts.length; i++) {
    const text = texts[i] as string;
    const time = times[i] as number;
    const delta = span === undefined ? undefined : deltaAfter(text, span.prefix);
    if (delta !== undefined) {
      (span as DeltaSpan).deltas.push(delta);
      (span as DeltaSpan).times.push(time);
      continue;
    }
    if (span !== undefined) log.pushDeltaRun(span);
    const data = parse(text, first + i);
    span = hold ? spanOf(data, time) : undefined;
    if (span === undefined) {
      log.push({ seq: first + i, time, type: RUN_TYPE, data } as SessionEvent);
    }
  }
  if (span !== undefined) log.pushDeltaRun(span);
}

/** A span begun by a chunk's parsed data, when that data is a delta part's. */
function spanOf(data: unknown, time: number): DeltaSpan | undefined {
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return undefined;
  if (!hasKeys(data, CHUNK_DATA_KEYS)) return undefined;
  const { turn, step, chunk } = data as { turn: unknown; step: unknown; chunk: JsonValue };
  // A held run's turn and step are numbers; the session checks them as it checks any chunk's.
  if (typeof turn !== 'number' || typeof step !== 'number') return undefined;
  const part = deltaPart(chunk);
  if (part === undefined) return undefined;
  const { type, id } = part;
  const prefix = `{"turn":${JSON.stringify(turn)},"step":${JSON.stringify(step)},"chunk":{"type":${JSON.stringify(type)},"id":${JSON.stringify(id)},"delta":`;
  return { prefix, turn, step, type, id, deltas: [part.delta], times: [time] };
}

/**
 * The delta of `text` when it is `prefix`, one JSON string and `}}`; else `undefined`. The
 * string is the whole of what lies between (it opens and closes with a quote, and `JSON.parse`
 * takes nothing after a value), so the text parses to the prefix's data with this delta.
 */
function deltaAfter(text: string, prefix: string): string | undefined {
  // A slice compared whole: `startsWith` reads several times slower here (Node 20's V8).
  if (text.slice(0, prefix.length) !== prefix || !text.endsWith('"}}')) return undefined;
  if (text.charCodeAt(prefix.length) !== 0x22) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text.slice(prefix.length, -2));
  } catch {
    return undefined;
  }
  return typeof value === 'string' ? value : undefined;
}
