/**
 * Stream parts and errors from providers are JavaScript values, not JSON: dates, Error
 * objects, byte arrays, `undefined` fields. The log keeps only JSON, so they are converted here,
 * losslessly where JSON can say it (dates as ISO text, bytes as base64) and by omission where it
 * cannot (functions, `undefined`).
 */
import type { JsonObject, JsonValue } from '../core/index.js';

const MAX_DEPTH = 64;

/** Converts any value to JSON for the log; `undefined` at the top becomes `null`. */
export function toLogJson(value: unknown): JsonValue {
  return convert(value, 0) ?? null;
}

/** Converts a stream part (an object with a string `type`) to a chunk object. */
export function toChunk(part: { readonly type: string }): JsonObject & { readonly type: string } {
  // Deltas are nearly every part of a stream and nearly always exactly {type, id, delta}:
  // build those directly instead of walking them.
  const delta = part as { type: string; id?: unknown; delta?: unknown; providerMetadata?: unknown };
  if (
    typeof delta.delta === 'string' &&
    typeof delta.id === 'string' &&
    delta.providerMetadata === undefined &&
    ownKeyCount(part) === 3
  ) {
    return { type: delta.type, id: delta.id, delta: delta.delta };
  }
  const converted = convert(part, 0);
  return converted as JsonObject & { readonly type: string };
}

/** Own enumerable keys, counted without allocating the key array. */
function ownKeyCount(value: object): number {
  let count = 0;
  for (const key in value) if (Object.hasOwn(value, key)) count++;
  return count;
}

function convert(value: unknown, depth: number): JsonValue | undefined {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      if (!Number.isFinite(value)) return null;
      return Object.is(value, -0) ? 0 : value;
    case 'bigint':
      return value.toString();
    case 'undefined':
    case 'function':
    case 'symbol':
      return undefined;
  }
  if (value === null) return null;
  if (depth >= MAX_DEPTH) return '[nested too deeply]';
  if (Array.isArray(value)) {
    return value.map((item) => convert(item, depth + 1) ?? null);
  }
  if (value instanceof Date) {
    return Number.isNaN(value.getTime()) ? null : value.toISOString();
  }
  if (value instanceof Uint8Array) return bytesToBase64(value);
  if (value instanceof URL) return value.href;
  if (value instanceof Error) return errorJson(value, depth);
  const out: Record<string, JsonValue> = {};
  for (const key of Object.keys(value as object)) {
    const item = convert((value as Record<string, unknown>)[key], depth + 1);
    if (item === undefined) continue;
    if (key === '__proto__') defineData(out, key, item);
    else out[key] = item;
  }
  return out;
}

function errorJson(error: Error, depth: number): JsonObject {
  const out: Record<string, JsonValue> = { name: error.name, message: error.message };
  // The error's own enumerable fields, as a copy its type can index (an Error declares none).
  const fields: Readonly<Record<string, unknown>> = { ...error };
  for (const key of Object.keys(fields)) {
    // Request bodies and full response bodies can be megabytes; the failure summary keeps the rest.
    if (key === 'requestBodyValues' || key === 'responseBody' || key === 'cause') continue;
    const item = convert(fields[key], depth + 1);
    if (item !== undefined) defineData(out, key, item);
  }
  return out;
}

function defineData(target: Record<string, JsonValue>, key: string, value: JsonValue): void {
  // A literal "__proto__" key is data; plain assignment would change the prototype instead.
  Object.defineProperty(target, key, {
    value,
    enumerable: true,
    writable: true,
    configurable: true,
  });
}

function bytesToBase64(bytes: Uint8Array): string {
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) {
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(binary);
}
