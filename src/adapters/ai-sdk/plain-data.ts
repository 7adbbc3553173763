/**
 * Copies of prompt data, and equality with them, for what a message converts to: two values
 * equal here hold the same plain data, so every reading of one reads the other alike. Only
 * plain objects (their own enumerable properties, read as data), arrays, primitives, bytes and
 * URLs take part; anything else has no copy and equals nothing.
 */

/** A value {@link plainCopy} could not copy. */
export const NO_COPY: unique symbol = Symbol('no copy');

/**
 * A deep copy of `value` that later changes to `value` leave alone, or {@link NO_COPY} when it
 * holds something other than plain data (a class instance, a function, a cycle).
 */
export function plainCopy(value: unknown): unknown {
  return copy(value, new Set());
}

function copy(value: unknown, path: Set<object>): unknown {
  if (typeof value === 'function' || typeof value === 'symbol') return NO_COPY;
  if (value === null || typeof value !== 'object') return value;
  const kind = kindOf(value);
  if (kind === undefined || path.has(value)) return NO_COPY;
  switch (kind) {
    case 'bytes':
      return (value as Uint8Array).slice();
    case 'buffer':
      return (value as ArrayBuffer).slice(0);
    case 'url':
      return new URL((value as URL).href);
  }
  path.add(value);
  try {
    if (kind === 'array') {
      const items = value as readonly unknown[];
      const out: unknown[] = [];
      for (let index = 0; index < items.length; index++) {
        const item = copy(items[index], path);
        if (item === NO_COPY) return NO_COPY;
        out.push(item);
      }
      return out;
    }
    const out: Record<string, unknown> = kind === 'bare' ? Object.create(null) : {};
    for (const key of Object.keys(value)) {
      const item = copy((value as Record<string, unknown>)[key], path);
      if (item === NO_COPY) return NO_COPY;
      out[key] = item;
    }
    return out;
  } finally {
    path.delete(value);
  }
}

/**
 * Whether `value` holds the same plain data as `copy`, a result of {@link plainCopy}: the same
 * kinds, own enumerable keys and items throughout, primitives equal by `Object.is`, bytes byte
 * for byte, URLs by their text. A value that is not plain data equals nothing. This runs over
 * every message of every prompt, so it allocates nothing for plain objects and arrays.
 */
export function equalsPlainCopy(value: unknown, copy: unknown): boolean {
  if (value === null || typeof value !== 'object') return Object.is(value, copy);
  if (copy === null || typeof copy !== 'object') return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  if (prototype !== Object.getPrototypeOf(copy)) return false;
  if (prototype === Object.prototype || prototype === null) {
    const record = value as Record<string, unknown>;
    const copied = copy as Record<string, unknown>;
    let keys = 0;
    // `for...in` also lists enumerable keys of the prototype (pollution): `hasOwn` refuses
    // them, and counting both sides alike keeps them out of the balance.
    for (const key in record) {
      if (!Object.hasOwn(record, key) || !Object.hasOwn(copied, key)) return false;
      if (!equalsPlainCopy(record[key], copied[key])) return false;
      keys++;
    }
    for (const key in copied) if (Object.hasOwn(copied, key)) keys--;
    return keys === 0;
  }
  switch (kindOf(value)) {
    case 'array': {
      const items = value as readonly unknown[];
      const copies = copy as readonly unknown[];
      if (items.length !== copies.length || !Array.isArray(copy)) return false;
      for (let index = 0; index < items.length; index++) {
        if (!equalsPlainCopy(items[index], copies[index])) return false;
      }
      return true;
    }
    case 'bytes':
      return sameBytes(value as Uint8Array, copy as Uint8Array);
    case 'buffer':
      return sameBytes(new Uint8Array(value as ArrayBuffer), new Uint8Array(copy as ArrayBuffer));
    case 'url':
      return (value as URL).href === (copy as URL).href;
    default:
      return false;
  }
}

type Kind = 'array' | 'object' | 'bare' | 'bytes' | 'buffer' | 'url';

/** The kind of plain data an object is, by its prototype: subclasses and proxies of none. */
function kindOf(value: object): Kind | undefined {
  const prototype: unknown = Object.getPrototypeOf(value);
  if (prototype === Object.prototype) return 'object';
  if (prototype === null) return 'bare';
  if (prototype === Array.prototype) return Array.isArray(value) ? 'array' : undefined;
  if (prototype === Uint8Array.prototype) return 'bytes';
  if (prototype === ArrayBuffer.prototype) return 'buffer';
  if (prototype === URL.prototype) return 'url';
  return undefined;
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let index = 0; index < a.length; index++) if (a[index] !== b[index]) return false;
  return true;
}
