/**
 * Copies of prompt data, and equality with them, for what a message converts to: two values
 * equal here hold the same plain data, so every reading of one reads the other alike. Only
 * plain objects (their own enumerable properties, read as data), arrays, primitives, bytes and
 * URLs take part; anything else has no copy and equals nothing.
 */

/** A value {@link plainCopy} could not copy. */
export const NO_COPY: unique symbol = Symbol('no copy');

/** A copied object: its own enumerable keys in order, and a copy of each value. */
class CopiedRecord {
  constructor(
    readonly bare: boolean,
    readonly keys: readonly string[],
    readonly values: readonly unknown[],
  ) {}
}

class CopiedArray {
  constructor(readonly items: readonly unknown[]) {}
}

class CopiedBytes {
  constructor(
    readonly kind: 'bytes' | 'buffer',
    readonly bytes: Uint8Array,
  ) {}
}

class CopiedUrl {
  constructor(readonly href: string) {}
}

/**
 * A deep copy of `value` that later changes to `value` leave alone, or {@link NO_COPY} when it
 * holds something other than plain data (a class instance, a function, a cycle). The copy is
 * only for {@link equalsPlainCopy}.
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
      return new CopiedBytes(kind, (value as Uint8Array).slice());
    case 'buffer':
      return new CopiedBytes(kind, new Uint8Array((value as ArrayBuffer).slice(0)));
    case 'url':
      return new CopiedUrl((value as URL).href);
  }
  path.add(value);
  try {
    const source: readonly unknown[] =
      kind === 'array' ? (value as readonly unknown[]) : Object.keys(value);
    const copies: unknown[] = [];
    for (let index = 0; index < source.length; index++) {
      const item =
        kind === 'array'
          ? source[index]
          : (value as Record<string, unknown>)[source[index] as string];
      const copied = copy(item, path);
      if (copied === NO_COPY) return NO_COPY;
      copies.push(copied);
    }
    return kind === 'array'
      ? new CopiedArray(copies)
      : new CopiedRecord(kind === 'bare', source as string[], copies);
  } finally {
    path.delete(value);
  }
}

/**
 * Whether `value` holds the same plain data as `copy`, a result of {@link plainCopy}: the same
 * kinds, own enumerable keys (in the same order) and items throughout, primitives equal by
 * `Object.is`, bytes byte for byte, URLs by their text. A value that is not plain data equals
 * nothing; keys in another order only make a value unequal, which costs a conversion, never a
 * wrong answer. This runs over every message of every prompt: it allocates nothing for plain
 * objects and arrays.
 */
export function equalsPlainCopy(value: unknown, copy: unknown): boolean {
  if (value === null || typeof value !== 'object') return Object.is(value, copy);
  if (copy instanceof CopiedRecord) {
    if (Object.getPrototypeOf(value) !== (copy.bare ? null : Object.prototype)) return false;
    const { keys, values } = copy;
    let index = 0;
    // `for...in` also lists enumerable keys of the prototype (pollution): `hasOwn` refuses them.
    for (const key in value) {
      if (key !== keys[index] || !Object.hasOwn(value, key)) return false;
      if (!equalsPlainCopy((value as Record<string, unknown>)[key], values[index])) return false;
      index++;
    }
    return index === keys.length;
  }
  if (copy instanceof CopiedArray) {
    if (kindOf(value) !== 'array') return false;
    const items = value as readonly unknown[];
    if (items.length !== copy.items.length) return false;
    for (let index = 0; index < items.length; index++) {
      if (!equalsPlainCopy(items[index], copy.items[index])) return false;
    }
    return true;
  }
  if (copy instanceof CopiedBytes) {
    if (kindOf(value) !== copy.kind) return false;
    const bytes =
      copy.kind === 'bytes' ? (value as Uint8Array) : new Uint8Array(value as ArrayBuffer);
    return sameBytes(bytes, copy.bytes);
  }
  if (copy instanceof CopiedUrl)
    return kindOf(value) === 'url' && (value as URL).href === copy.href;
  return false;
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
