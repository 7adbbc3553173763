/**
 * Items as the log can hold them: JSON. The SDK's items are plain objects, but built by hand
 * they often carry `undefined` members (`providerData: undefined`), which JSON drops; anything
 * else JSON cannot carry is refused here, before the first event of a batch is appended.
 */
import { isJsonValue, type JsonObject, type JsonValue } from '../../core/index.js';
import { OpenAIAgentsSessionError } from './errors.js';
import { itemKind } from './item-events.js';

/**
 * A JSON copy of `value` without its `undefined` object members, as `JSON.stringify` would
 * write it.
 *
 * @throws OpenAIAgentsSessionError `INVALID_ITEM` when it is not an item object,
 *   `NON_JSON_ITEM` when it holds a value JSON cannot carry.
 */
export function jsonItem(value: unknown, index: number): JsonObject {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new OpenAIAgentsSessionError(
      'INVALID_ITEM',
      `item ${index}: expected an item object, found ${describe(value)}`,
      index,
    );
  }
  const copy = withoutUndefined(value);
  if (!isJsonObject(copy)) {
    throw new OpenAIAgentsSessionError(
      'NON_JSON_ITEM',
      `item ${index}: holds a value JSON cannot carry (binary data, a class instance, NaN...); convert it first (an image as a data URL)`,
      index,
    );
  }
  if (itemKind(copy) === '') {
    throw new OpenAIAgentsSessionError(
      'INVALID_ITEM',
      `item ${index}: expected a string 'type' or a message 'role'`,
      index,
    );
  }
  return copy;
}

function isJsonObject(value: unknown): value is JsonObject {
  return isJsonValue(value) && typeof value === 'object' && value !== null && !Array.isArray(value);
}

function withoutUndefined(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutUndefined);
  if (typeof value !== 'object' || value === null) return value;
  const prototype = Object.getPrototypeOf(value);
  // Class instances stay as they are, for the JSON check to refuse.
  if (prototype !== Object.prototype && prototype !== null) return value;
  const copy: Record<string, unknown> = {};
  for (const [key, member] of Object.entries(value)) {
    if (member === undefined) continue;
    // defineProperty: a literal `__proto__` key stays data.
    Object.defineProperty(copy, key, {
      value: withoutUndefined(member),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return copy;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'string' ? 'a string' : `a value of type ${typeof value}`;
}

/** A fresh, unfrozen copy of a stored item, for a caller that may change what it gets. */
export function copyItem(item: JsonValue): JsonObject {
  return structuredClone(item) as JsonObject;
}
