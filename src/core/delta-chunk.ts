/**
 * The fast admission of the commonest event there is: an `assistant/chunk` whose data is
 * `{turn, step, chunk: {type, id, delta}}` with string parts (a text, reasoning or tool-input
 * delta). A streamed turn is mostly these, 200 of every 204 events in the benchmarks, and the
 * general JSON walk (`json.ts`) spends about a microsecond on each: a walker, a try per member,
 * objects grown key by key. Here the checks are written out for this one shape and the frozen
 * copy is built as two literals, which V8 gives their final layout at once.
 *
 * The rules are the general path's, not a second set: this only accepts data that the general
 * path would accept as is, and makes the same frozen value of it. Anything else (another shape,
 * key order, prototype, a limit the data would come near) is left to the general path, which
 * then reports what is wrong.
 */
import { isSeqLike } from './event-shapes.js';
import type { JsonLimits, JsonValue } from './json.js';

/** What {@link admitDeltaChunk} made of the data. */
export type DeltaChunkAdmission =
  /** The admitted, frozen data of the event. */
  | { readonly data: JsonValue; readonly general?: undefined }
  /**
   * Not this shape: give `general` to the general path instead of the caller's data. It holds the
   * values already read (so no getter is read twice) in the caller's key order, or is the
   * caller's data itself when nothing was read.
   */
  | { readonly data?: undefined; readonly general: unknown };

const DATA_KEYS = ['turn', 'step', 'chunk'] as const;
const PART_KEYS = ['type', 'id', 'delta'] as const;
/** The characters of the keys of both objects, which count against `maxChars`. */
const KEY_CHARS = [...DATA_KEYS, ...PART_KEYS].reduce((sum, key) => sum + key.length, 0);
/** The values of the shape (data, turn, step, chunk, type, id, delta), against `maxNodes`. */
export const DELTA_CHUNK_NODES = 7;
/** The deepest object (the part) sits at depth 1: `maxDepth` must exceed it. */
export const DELTA_CHUNK_DEPTH = 2;

/** The characters the data of the delta shape counts against `maxChars`: keys and strings. */
export function deltaChunkChars(type: string, id: string, delta: string): number {
  return KEY_CHARS + type.length + id.length + delta.length;
}

/**
 * Admits the data of an `assistant/chunk` of the delta shape: `copy` returns a frozen copy,
 * `adopt` freezes the caller's objects in place and returns them.
 */
export function admitDeltaChunk(
  raw: unknown,
  mode: 'copy' | 'adopt',
  limits: JsonLimits,
): DeltaChunkAdmission {
  if (
    !isPlainWithKeys(raw, DATA_KEYS) ||
    limits.maxDepth < DELTA_CHUNK_DEPTH ||
    limits.maxNodes < DELTA_CHUNK_NODES
  ) {
    return { general: raw };
  }
  const data = raw as { turn: unknown; step: unknown; chunk: unknown };
  const chunk = data.chunk;
  const turn = data.turn;
  const step = data.step;
  if (!isPlainWithKeys(chunk, PART_KEYS)) return declined(raw, mode, turn, step, chunk);
  const part = chunk as { type: unknown; id: unknown; delta: unknown };
  const type = part.type;
  const id = part.id;
  const delta = part.delta;
  if (
    !isSeqLike(turn) ||
    !isSeqLike(step) ||
    typeof type !== 'string' ||
    typeof id !== 'string' ||
    typeof delta !== 'string' ||
    deltaChunkChars(type, id, delta) > limits.maxChars
  ) {
    return declined(raw, mode, turn, step, { type, id, delta });
  }
  if (mode === 'adopt') {
    Object.freeze(chunk);
    return { data: Object.freeze(raw) as JsonValue };
  }
  return { data: Object.freeze({ turn, step, chunk: Object.freeze({ type, id, delta }) }) };
}

/**
 * What the general path gets once values were read: in `copy` mode a plain record of them (so
 * no getter runs twice), in `adopt` mode the caller's data, which must become the event's.
 */
function declined(
  raw: unknown,
  mode: 'copy' | 'adopt',
  turn: unknown,
  step: unknown,
  chunk: unknown,
): DeltaChunkAdmission {
  return { general: mode === 'adopt' ? raw : { turn, step, chunk } };
}

/**
 * Whether `value` is a plain object (`Object.prototype`) whose own keys are exactly `keys`, in
 * that order, all enumerable strings. Reads no value: no getter runs.
 */
function isPlainWithKeys(value: unknown, keys: readonly string[]): boolean {
  if (typeof value !== 'object' || value === null) return false;
  if (Object.getPrototypeOf(value) !== Object.prototype) return false;
  let i = 0;
  // `for...in` also lists enumerable keys of the prototype (pollution): `hasOwn` refuses those.
  for (const key in value) {
    if (key !== keys[i] || !Object.hasOwn(value, key)) return false;
    i++;
  }
  return (
    i === keys.length &&
    Object.getOwnPropertyNames(value).length === i &&
    Object.getOwnPropertySymbols(value).length === 0
  );
}
