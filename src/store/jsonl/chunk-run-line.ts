/**
 * Chunk run lines (format 1): consecutive stream chunks of one batch written as one line.
 *
 * A streamed turn is mostly `assistant/chunk` events, and as lines of their own each repeats
 * its envelope (`seq`, `time`, `type`, `turn`, `step`) and its part's `type` and `id` around a
 * delta of a few dozen bytes: three quarters of a log's bytes, and of the JSON its writer makes.
 * So the writer puts each stretch of at least {@link MIN_RUN_CHUNKS} consecutive chunks of a
 * batch that share their `turn` and `step` on one line:
 *
 * ```text
 * {"run":{"seq":12,"time":1700000000012,"turn":3,"step":0,"dt":[0,1,2],
 *   "chunks":[{"type":"text-start","id":"t1"},{"type":"text-delta","id":"t1","delta":"Hel"},"lo"," world"]}}
 * ```
 *
 * - the run holds the events `seq .. seq + n - 1`, n being the length of `chunks`; each is an
 *   `assistant/chunk` with data `{turn, step, chunk}` (in that key order);
 * - the first chunk's time is `time`; `dt` holds n - 1 integers, each chunk's time minus the
 *   previous chunk's;
 * - an object in `chunks` is the chunk (the stream part) itself; a string `s` stands for the
 *   part `{type, id, delta: s}` whose `type` and `id` are those of the nearest object before it,
 *   which must have exactly the keys `type`, `id` and `delta` (a delta part of the same stream).
 *
 * Every chunk keeps its own seq, time and data: expanding a run gives back the events exactly, as
 * JSON text byte for byte. The writer makes a run only of chunks it can give back so (no
 * `sourceEventSeqs`, no other data keys, keys in the order above); anything else stays a line of
 * its own. Batches are framed and checksummed as before: a run line is one of a batch's lines.
 */

import type { ElidedLog } from '../../core/elided-log.js';
import type { JsonValue, SessionEvent } from '../../core/index.js';
import { CHUNK_DATA_KEYS, deltaPart, hasKeys } from '../contract/delta-part.js';

/** The key of a run line: `{"run":{...}}`. */
export const RUN_KEY = 'run';
/** Runs shorter than this stay lines: a run of one saves nothing. */
export const MIN_RUN_CHUNKS = 2;
/** The most chunks one run line holds (longer streams make several lines). */
const MAX_RUN_CHUNKS = 4096;
/** The most UTF-16 units of chunk JSON one run line holds, beside its `maxLineBytes` share. */
const MAX_RUN_CHARS = 1024 * 1024;
/** Room a run line's envelope takes beside its chunks (seq, times, turn, step, dt digits). */
const RUN_ENVELOPE_CHARS = 256;

const CHUNK_TYPE = 'assistant/chunk';

/** A chunk's data as a run holds it. */
interface RunData {
  readonly turn: number;
  readonly step: number;
  readonly chunk: JsonValue;
}

/** The data of `event` when it may join a run, else `undefined`. */
function runData(event: SessionEvent): RunData | undefined {
  if (event.type !== CHUNK_TYPE || event.surfaceOp !== undefined) return undefined;
  if (event.sourceEventSeqs !== undefined) return undefined;
  const data = event.data as unknown;
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return undefined;
  if (!hasKeys(event, ENVELOPE_KEYS) || !hasKeys(data, CHUNK_DATA_KEYS)) return undefined;
  const { turn, step, chunk } = data as RunData;
  // A run's elements are parts (objects) or deltas (strings): a part of any other JSON kind, or
  // a string, would read back as something else.
  if (typeof chunk !== 'object' || chunk === null || Array.isArray(chunk)) return undefined;
  return isRunInteger(turn) && isRunInteger(step) ? { turn, step, chunk } : undefined;
}

/** An integer a run writes as it reads back (`-0` would come back as `0`). */
function isRunInteger(value: number): boolean {
  return Number.isSafeInteger(value) && !Object.is(value, -0);
}

const ENVELOPE_KEYS = ['seq', 'time', 'type', 'data'] as const;

/** Serializes a value of the event at `seq` (the event itself, or a chunk of a run). */
export type Stringify = (value: unknown, seq: number) => string;

/**
 * Writes a batch's lines: each event as a line, and each stretch of run-eligible chunks as run
 * lines. `line` receives every line's text (without `\n`) and the seq of its first event; it is
 * where the caller checks the line limit. A run line is kept within `maxLineBytes` by
 * construction; a chunk too long for one is written as its own line, for the caller to refuse.
 */
export function encodeLines(
  events: readonly SessionEvent[],
  maxLineBytes: number,
  stringify: Stringify,
  line: (text: string, seq: number) => void,
): void {
  // A run line's UTF-8 length is at most 3 bytes per UTF-16 unit.
  const maxChars = Math.min(MAX_RUN_CHARS, Math.floor(maxLineBytes / 3) - RUN_ENVELOPE_CHARS);
  let i = 0;
  while (i < events.length) {
    const event = events[i] as SessionEvent;
    const data = maxChars > 0 ? runData(event) : undefined;
    const next = events[i + 1];
    const nextData = data === undefined || next === undefined ? undefined : runData(next);
    if (
      data === undefined ||
      nextData === undefined ||
      !sameStep(data, nextData) ||
      !timeStepOk(event, next as SessionEvent)
    ) {
      line(stringify(event, event.seq), event.seq);
      i++;
      continue;
    }
    i = encodeRun(events, i, data, maxChars, stringify, line);
  }
}

function sameStep(a: RunData, b: RunData): boolean {
  return a.turn === b.turn && a.step === b.step;
}

function timeStepOk(previous: SessionEvent, event: SessionEvent): boolean {
  return event.seq === previous.seq + 1 && Number.isSafeInteger(event.time - previous.time);
}

/** Writes the run starting at `events[start]` (at least two chunks long); returns where it ended. */
function encodeRun(
  events: readonly SessionEvent[],
  start: number,
  first: RunData,
  maxChars: number,
  stringify: Stringify,
  line: (text: string, seq: number) => void,
): number {
  const head = events[start] as SessionEvent;
  const dts: number[] = [];
  // Each chunk's element: a delta string (shorthand for the delta part before it) or the part.
  const elements: JsonValue[] = [];
  let template: DeltaTemplate | undefined;
  let end = start;
  while (end < events.length && elements.length < MAX_RUN_CHUNKS) {
    const event = events[end] as SessionEvent;
    const data = end === start ? first : runData(event);
    if (data === undefined || !sameStep(first, data)) break;
    if (end > start && !timeStepOk(events[end - 1] as SessionEvent, event)) break;
    const part = deltaPart(data.chunk);
    if (
      part !== undefined &&
      template !== undefined &&
      part.type === template.type &&
      part.id === template.id
    ) {
      elements.push(part.delta);
    } else {
      template = part;
      elements.push(data.chunk);
    }
    if (end > start) dts.push(event.time - (events[end - 1] as SessionEvent).time);
    end++;
  }
  // One stringify of the whole array is the same text as the elements' joined (a call per
  // element costs more than the JSON). Only a run past the size bound is cut, element by element.
  let chunks: string | undefined;
  try {
    chunks = JSON.stringify(elements);
  } catch {
    // Left to the element by element pass, which names the chunk that failed.
  }
  if (chunks === undefined || chunks.length - 1 > maxChars) {
    return encodeRunWithin(events, start, first, elements, dts, maxChars, stringify, line);
  }
  line(runLine(head, first, dts, chunks), head.seq);
  return end;
}

/**
 * The run of `elements` (of the chunks from `events[start]`) cut to the longest prefix whose
 * elements' JSON fits in `maxChars`; a prefix of fewer than two chunks is written as a line.
 */
function encodeRunWithin(
  events: readonly SessionEvent[],
  start: number,
  first: RunData,
  elements: readonly JsonValue[],
  dts: readonly number[],
  maxChars: number,
  stringify: Stringify,
  line: (text: string, seq: number) => void,
): number {
  const head = events[start] as SessionEvent;
  const texts: string[] = [];
  let chars = 0;
  for (const element of elements) {
    const text = stringify(element, head.seq + texts.length);
    if (chars + text.length + 1 > maxChars) break;
    texts.push(text);
    chars += text.length + 1;
  }
  if (texts.length < MIN_RUN_CHUNKS) {
    line(stringify(head, head.seq), head.seq);
    return start + 1;
  }
  line(runLine(head, first, dts.slice(0, texts.length - 1), `[${texts.join(',')}]`), head.seq);
  return start + texts.length;
}

/** A run line's text, `chunks` being its elements' JSON array. */
function runLine(
  head: SessionEvent,
  data: RunData,
  dts: readonly number[],
  chunks: string,
): string {
  return `{"${RUN_KEY}":{"seq":${head.seq},"time":${head.time},"turn":${data.turn},"step":${data.step},"dt":[${dts.join(',')}],"chunks":${chunks}}}`;
}

/** A run line's value, checked for its shape. */
interface RunValue {
  readonly seq: number;
  readonly time: number;
  readonly turn: number;
  readonly step: number;
  readonly dt: readonly number[];
  readonly chunks: readonly JsonValue[];
}

/**
 * The run of a parsed line (`{"run":{...}}` whose first event is `seq`), or a problem saying what
 * is wrong with it; `undefined` when the value is not a run line at all.
 */
export function runOf(value: unknown, seq: number): RunValue | string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  if (!Object.hasOwn(value, RUN_KEY)) return undefined;
  const keys = Object.keys(value);
  if (keys.length !== 1) return 'a run line with keys beside "run"';
  const run = (value as Record<string, unknown>)[RUN_KEY];
  if (typeof run !== 'object' || run === null || Array.isArray(run))
    return 'a run that is not an object';
  const { seq: first, time, turn, step, dt, chunks } = run as Record<string, unknown>;
  if (first !== seq) return `a run from seq ${describe(first)} where seq ${seq} was expected`;
  if (!Number.isSafeInteger(time)) return 'a run whose time is not an integer';
  if (!Number.isSafeInteger(turn) || !Number.isSafeInteger(step)) {
    return 'a run whose turn or step is not an integer';
  }
  if (!Array.isArray(chunks) || chunks.length < MIN_RUN_CHUNKS) {
    return `a run with fewer than ${MIN_RUN_CHUNKS} chunks`;
  }
  if (!Array.isArray(dt) || dt.length !== chunks.length - 1) {
    return 'a run whose dt does not hold one step per further chunk';
  }
  let at = time as number;
  for (const step of dt) {
    if (!Number.isSafeInteger(step)) return 'a run whose dt holds a value that is not an integer';
    at += step as number;
    if (!Number.isSafeInteger(at)) return 'a run whose times leave the safe integers';
  }
  return run as RunValue;
}

/** The `type` and `id` a run's string elements take from the delta part before them. */
interface DeltaTemplate {
  readonly type: string;
  readonly id: string;
}

/**
 * Calls `each` with every chunk of a run: its seq, its time, and its element as the run holds
 * it (a part, or for a string element the delta, with the template it expands with); a problem
 * when a string has no delta part before it.
 */
export function forEachChunk(
  run: RunValue,
  each: (
    seq: number,
    time: number,
    element: JsonValue,
    template: DeltaTemplate | undefined,
  ) => void,
): string | undefined {
  let time = run.time;
  let template: DeltaTemplate | undefined;
  const { chunks, dt } = run;
  for (let i = 0; i < chunks.length; i++) {
    if (i > 0) time += dt[i - 1] as number;
    const element = chunks[i] as JsonValue;
    if (typeof element === 'string') {
      if (template === undefined) {
        return `a run whose chunk ${i} is a delta with no delta part before it`;
      }
      each(run.seq + i, time, element, template);
      continue;
    }
    if (typeof element !== 'object' || element === null || Array.isArray(element)) {
      return `a run whose chunk ${i} is neither a part nor a delta`;
    }
    const part = deltaPart(element);
    template = part === undefined ? undefined : { type: part.type, id: part.id };
    each(run.seq + i, time, element, undefined);
  }
  return undefined;
}

/** The events of a run, or a problem. */
export function runEvents(run: RunValue): SessionEvent[] | string {
  const events: SessionEvent[] = [];
  const problem = forEachChunk(run, (seq, time, element, template) => {
    const chunk =
      template === undefined ? element : { type: template.type, id: template.id, delta: element };
    events.push({
      seq,
      time,
      type: CHUNK_TYPE,
      data: { turn: run.turn, step: run.step, chunk },
    } as SessionEvent);
  });
  return problem ?? events;
}

/**
 * Pushes the chunks of a run onto a loading log: each span of deltas (string elements) as a run
 * of held deltas, which builds no event until one is read, and every part as its chunk's event.
 * A problem when the run is malformed; the chunks before it may have been pushed (a load drops
 * a batch that fails).
 */
export function pushRunChunks(run: RunValue, log: ElidedLog): string | undefined {
  const { turn, step } = run;
  let span: { template: DeltaTemplate; deltas: string[]; times: number[] } | undefined;
  const flush = (): void => {
    if (span === undefined) return;
    const { template, deltas, times } = span;
    log.pushDeltaRun({ turn, step, type: template.type, id: template.id, deltas, times });
    span = undefined;
  };
  const problem = forEachChunk(run, (seq, time, element, template) => {
    if (template !== undefined) {
      span ??= { template, deltas: [], times: [] };
      span.deltas.push(element as string);
      span.times.push(time);
      return;
    }
    flush();
    log.push({ seq, time, type: CHUNK_TYPE, data: { turn, step, chunk: element } } as SessionEvent);
  });
  if (problem === undefined) flush();
  return problem;
}

/**
 * Calls `each` with every chunk's seq, time and the UTF-8 length of its data as JSON text (the
 * size of its stub), without building the chunks' events; a problem when the run is malformed.
 */
export function forEachChunkSize(
  run: RunValue,
  each: (seq: number, time: number, bytes: number) => void,
): string | undefined {
  // The data is `{"turn":T,"step":S,"chunk":` part `}`; a delta's part `{"type":…,"id":…,"delta":` s `}`.
  const around = `{"turn":${run.turn},"step":${run.step},"chunk":}`.length;
  let sized: DeltaTemplate | undefined;
  let deltaAround = 0;
  return forEachChunk(run, (seq, time, chunk, template) => {
    if (template === undefined) {
      each(seq, time, around + Buffer.byteLength(JSON.stringify(chunk)));
      return;
    }
    if (template !== sized) {
      sized = template;
      deltaAround = Buffer.byteLength(
        `{"type":${JSON.stringify(template.type)},"id":${JSON.stringify(template.id)},"delta":}`,
      );
    }
    each(seq, time, around + deltaAround + Buffer.byteLength(JSON.stringify(chunk)));
  });
}

function describe(value: unknown): string {
  if (typeof value === 'number') return String(value);
  if (value === undefined) return 'missing';
  return value === null ? 'null' : typeof value;
}
