/**
 * The JSON text of an event's data, which the chain's payload digest and a sealed payload are
 * taken of. It is `JSON.stringify(data)`, byte for byte; only the commonest data there is, a
 * stream chunk's `{turn, step, chunk: {type, id, delta}}` (200 of a benchmark turn's 204 events),
 * is put together by hand: its keys, numbers and part type are the same from one chunk to the
 * next, so only the delta needs escaping, and `JSON.stringify` of the whole object cost about
 * twice that (docs/benchmarks.md, "Hash chain and encryption benchmark").
 */

const DATA_KEYS = ['turn', 'step', 'chunk'] as const;
const PART_KEYS = ['type', 'id', 'delta'] as const;

/** The text before the delta of the chunk last put together, and what it was made of. */
let lastTurn = Number.NaN;
let lastStep = Number.NaN;
let lastType = '';
let lastId = '';
let lastPrefix = '';

/** `JSON.stringify(data)`. */
export function payloadText(data: unknown): string {
  return deltaChunkText(data) ?? JSON.stringify(data);
}

/**
 * The JSON text of the data of a stream chunk of the delta shape, or `undefined` for any other
 * value (which `JSON.stringify` then writes). The shape is checked as strictly as the text needs:
 * plain objects (so no `toJSON` of their own, no array), exactly these own enumerable keys in
 * this order (the order `JSON.stringify` writes them in), finite numbers and strings.
 */
function deltaChunkText(data: unknown): string | undefined {
  if (!hasPlainKeys(data, DATA_KEYS)) return undefined;
  const { turn, step, chunk } = data as { turn: unknown; step: unknown; chunk: unknown };
  if (typeof turn !== 'number' || !Number.isFinite(turn)) return undefined;
  if (typeof step !== 'number' || !Number.isFinite(step)) return undefined;
  if (!hasPlainKeys(chunk, PART_KEYS)) return undefined;
  const { type, id, delta } = chunk as { type: unknown; id: unknown; delta: unknown };
  if (typeof type !== 'string' || typeof id !== 'string' || typeof delta !== 'string') {
    return undefined;
  }
  if (turn !== lastTurn || step !== lastStep || type !== lastType || id !== lastId) {
    // `${n}` is JSON's text of a finite number, -0 included ("0").
    lastPrefix = `{"turn":${turn},"step":${step},"chunk":{"type":${JSON.stringify(type)},"id":${JSON.stringify(id)},"delta":`;
    lastTurn = turn;
    lastStep = step;
    lastType = type;
    lastId = id;
  }
  return `${lastPrefix}${JSON.stringify(delta)}}}`;
}

/**
 * Whether `value` is an object of `Object.prototype` with no `toJSON` method whose enumerable
 * keys are exactly `keys`, in that order, all its own. Inherited enumerable keys (a polluted
 * prototype) refuse it.
 */
function hasPlainKeys(value: unknown, keys: readonly string[]): boolean {
  if (typeof value !== 'object' || value === null) return false;
  if (Object.getPrototypeOf(value) !== Object.prototype) return false;
  // A `toJSON` method, even one no `for...in` lists, would be what `JSON.stringify` writes.
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return false;
  let i = 0;
  for (const key in value) {
    if (key !== keys[i] || !Object.hasOwn(value, key)) return false;
    i++;
  }
  return i === keys.length;
}
