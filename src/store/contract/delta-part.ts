/**
 * The shape of the commonest stream chunk, as the stores recognise it to keep it compactly: a
 * delta part `{type, id, delta}` (all strings), in the data `{turn, step, chunk}` of an
 * `assistant/chunk`, keys in that order. A store that keeps such a chunk in a shorter form (a
 * JSONL run line's string element, a loading log's held delta) gives back the same value, as
 * JSON text byte for byte, only because it takes nothing else for it.
 */
import type { JsonValue } from '../../core/index.js';

/** The keys of a chunk's data, in the order a compact form writes them back. */
export const CHUNK_DATA_KEYS = ['turn', 'step', 'chunk'] as const;
const DELTA_KEYS = ['type', 'id', 'delta'] as const;

/** Whether `value`'s own enumerable keys are exactly `keys`, in that order. */
export function hasKeys(value: object, keys: readonly string[]): boolean {
  let i = 0;
  for (const key in value) {
    if (!Object.hasOwn(value, key)) return false;
    if (key !== keys[i]) return false;
    i++;
  }
  return i === keys.length;
}

/** A part of the form a compact form may keep as its delta alone. */
export type DeltaPart = {
  readonly type: string;
  readonly id: string;
  readonly delta: string;
};

/** `chunk` itself when it is a delta part (`{type, id, delta}`, all strings), else `undefined`. */
export function deltaPart(chunk: JsonValue): DeltaPart | undefined {
  if (typeof chunk !== 'object' || chunk === null || Array.isArray(chunk)) return undefined;
  if (!hasKeys(chunk, DELTA_KEYS)) return undefined;
  const { type, id, delta } = chunk as Record<string, JsonValue>;
  return typeof type === 'string' && typeof id === 'string' && typeof delta === 'string'
    ? (chunk as DeltaPart)
    : undefined;
}
