/**
 * Lossless JSON values: what may be stored in an event, and the boundary that snapshots,
 * validates and freezes caller data before it enters a log.
 *
 * "Lossless" means `JSON.parse(JSON.stringify(v))` is deep-equal to `v`: no `undefined`, NaN,
 * ±Infinity, `-0`, sparse arrays, functions, symbols, bigints, class instances, symbol or
 * non-enumerable keys, or cycles. A literal `__proto__` key is an ordinary data key.
 */

/** A JSON scalar. */
export type JsonPrimitive = null | boolean | number | string;
/** A JSON object with readonly members. */
export type JsonObject = { readonly [key: string]: JsonValue };
/** A JSON array with readonly elements. */
export type JsonArray = readonly JsonValue[];
/** Any JSON value. */
export type JsonValue = JsonPrimitive | JsonArray | JsonObject;

/** Bounds applied to each event's data so that hostile input cannot exhaust the stack or memory. */
export interface JsonLimits {
  /**
   * Deepest allowed nesting of arrays and objects. The default (256) stays far below the depth
   * at which `JSON.stringify` itself overflows the stack.
   */
  readonly maxDepth: number;
  /** Most UTF-16 code units allowed in one value's strings and keys, summed. */
  readonly maxChars: number;
  /**
   * Most values (scalars, arrays and objects) allowed in one value, counting a value each time
   * it is reached: a small object graph that shares references can stand for an enormous JSON
   * text, and this bound keeps its walk (and its copy) finite.
   */
  readonly maxNodes: number;
}

/** The limits used when a session or fold is not given its own. */
export const DEFAULT_JSON_LIMITS: JsonLimits = Object.freeze({
  maxDepth: 256,
  maxChars: 64 * 1024 * 1024,
  maxNodes: 1_000_000,
});

/** Why a value was refused; `path` is relative to the walked value (`''` for the value itself). */
export class JsonIssue {
  readonly segments: (string | number)[] = [];
  constructor(
    readonly kind: 'non-json' | 'limit',
    readonly reason: string,
  ) {}

  /** The path in `a.b[0]` form, prefixed by `root`. */
  path(root: string): string {
    let out = root;
    for (let i = this.segments.length - 1; i >= 0; i--) {
      const segment = this.segments[i];
      if (typeof segment === 'number') out += `[${segment}]`;
      else if (/^[A-Za-z_$][\w$]{0,39}$/.test(segment ?? '')) out += `.${segment}`;
      else out += `[${JSON.stringify(truncateKey(segment ?? ''))}]`;
    }
    return out;
  }
}

/** Long keys are cut in paths so an error message never carries a payload-sized key. */
function truncateKey(key: string): string {
  return key.length > 40 ? `${key.slice(0, 39)}…` : key;
}

/**
 * Returns a detached, deeply frozen copy of `value`, or throws a {@link JsonIssue}.
 * Getters are read exactly once.
 */
export function snapshotJson(value: unknown, limits: JsonLimits = DEFAULT_JSON_LIMITS): JsonValue {
  return new JsonWalk(limits, 'copy').visit(value, 0) as JsonValue;
}

/**
 * Validates `value` in place and deeply freezes it, or throws a {@link JsonIssue}. For values the
 * caller hands over (such as freshly parsed store lines): no copy is made.
 */
export function adoptJson(value: unknown, limits: JsonLimits = DEFAULT_JSON_LIMITS): JsonValue {
  return new JsonWalk(limits, 'adopt').visit(value, 0) as JsonValue;
}

/**
 * {@link adoptJson} for values that `JSON.parse` built and nobody has touched since (a store's
 * freshly parsed lines). Such values cannot hold symbol or non-enumerable keys, accessors,
 * `undefined`, holes or cycles, so the two own-key listings per object that detect those are
 * skipped; everything JSON text *can* express wrongly is still refused (`-0`, numbers that
 * overflow to ±Infinity, the limits), prototypes are still checked, and every object and array
 * is frozen. Values that did not come from `JSON.parse` belong in {@link adoptJson}.
 */
export function adoptParsedJson(
  value: unknown,
  limits: JsonLimits = DEFAULT_JSON_LIMITS,
): JsonValue {
  return new JsonWalk(limits, 'parsed').visit(value, 0) as JsonValue;
}

/**
 * The fast path of adoption for values that `JSON.parse` built and nobody has touched since (a
 * store's freshly parsed lines): checks what JSON text *can* get wrong (`-0`, numbers that
 * overflow to ±Infinity, the limits) and that every object and array has the plain prototype
 * `JSON.parse` gives it, and deeply freezes the value. It skips what such values cannot hold
 * (symbol and non-enumerable keys, accessors): the two own-key listings per object that
 * {@link adoptJson} needs for them cost more than the walk itself. Keys are listed with
 * `for...in`, so the caller must know that `Object.prototype` has no enumerable keys
 * ({@link prototypesArePristine}).
 *
 * Returns `false` as soon as the value breaks a rule or is not shaped like parsed JSON, possibly
 * having frozen part of it; the caller then runs {@link adoptJson}, which finds the problem and
 * reports it with its path. No error object or path is built here: the walk allocates nothing.
 */
export function freezeParsedJson(value: unknown, limits: JsonLimits): boolean {
  nodesLeft = limits.maxNodes;
  charsLeft = limits.maxChars;
  depthLimit = limits.maxDepth;
  return freezeParsed(value, 0);
}

/** True when neither `Object.prototype` nor `Array.prototype` has an enumerable key. */
export function prototypesArePristine(): boolean {
  for (const _ in Object.prototype) return false;
  for (const _ in Array.prototype) return false;
  return true;
}

// The budgets of the current freezeParsedJson walk (it runs no user code, so it cannot reenter).
let nodesLeft = 0;
let charsLeft = 0;
let depthLimit = 0;

function freezeParsed(value: unknown, depth: number): boolean {
  if (--nodesLeft < 0) return false;
  switch (typeof value) {
    case 'string':
      charsLeft -= value.length;
      return charsLeft >= 0;
    case 'number':
      // Refuses -0, and ±Infinity (`1e400` parses to it), whose difference with itself is NaN.
      return value === 0 ? 1 / value > 0 : value - value === 0;
    case 'boolean':
      return true;
    case 'object': {
      if (value === null) return true;
      if (depth >= depthLimit) return false;
      if (Array.isArray(value)) {
        if (Object.getPrototypeOf(value) !== Array.prototype) return false;
        for (let i = 0; i < value.length; i++) {
          if (!freezeParsed(value[i], depth + 1)) return false;
        }
      } else {
        if (Object.getPrototypeOf(value) !== Object.prototype) return false;
        const record = value as Record<string, unknown>;
        for (const key in record) {
          charsLeft -= key.length;
          if (charsLeft < 0 || !freezeParsed(record[key], depth + 1)) return false;
        }
      }
      Object.freeze(value);
      return true;
    }
    default:
      return false;
  }
}

/** Checks `value` without copying or freezing it; throws a {@link JsonIssue} when it is not JSON. */
export function checkJson(value: unknown, limits: JsonLimits = DEFAULT_JSON_LIMITS): JsonValue {
  return new JsonWalk(limits, 'check').visit(value, 0) as JsonValue;
}

/** True when `value` is lossless JSON within the default limits. Does not freeze or copy. */
export function isJsonValue(value: unknown): value is JsonValue {
  try {
    checkJson(value);
    return true;
  } catch (error) {
    if (error instanceof JsonIssue) return false;
    throw error;
  }
}

class JsonWalk {
  private chars = 0;
  private nodes = 0;
  private readonly ancestors: object[] = [];

  private readonly copy: boolean;
  private readonly freeze: boolean;
  /** The value came from `JSON.parse`: own keys are known to be enumerable strings. */
  private readonly parsed: boolean;

  constructor(
    private readonly limits: JsonLimits,
    mode: 'copy' | 'adopt' | 'parsed' | 'check',
  ) {
    this.copy = mode === 'copy';
    this.freeze = mode !== 'check';
    this.parsed = mode === 'parsed';
  }

  visit(value: unknown, depth: number): unknown {
    if (++this.nodes > this.limits.maxNodes) {
      throw new JsonIssue('limit', `more than ${this.limits.maxNodes} values`);
    }
    switch (typeof value) {
      case 'string':
        this.count(value.length);
        return value;
      case 'number':
        if (!Number.isFinite(value))
          throw new JsonIssue('non-json', `${value} is not a JSON number`);
        if (value === 0 && 1 / value < 0)
          throw new JsonIssue('non-json', '-0 does not survive JSON');
        return value;
      case 'boolean':
        return value;
      case 'object':
        if (value === null) return null;
        return this.container(value, depth);
      case 'undefined':
        throw new JsonIssue('non-json', 'undefined is not JSON');
      default:
        throw new JsonIssue('non-json', `a ${typeof value} is not JSON`);
    }
  }

  private container(value: object, depth: number): unknown {
    if (depth >= this.limits.maxDepth) {
      // A cycle also ends here: it nests without bound, so it is told apart only at the limit.
      if (this.ancestors.includes(value)) throw new JsonIssue('non-json', 'the value is cyclic');
      throw new JsonIssue('limit', `nesting deeper than ${this.limits.maxDepth} levels`);
    }
    this.ancestors.push(value);
    const result = Array.isArray(value) ? this.array(value, depth) : this.object(value, depth);
    this.ancestors.pop();
    return result;
  }

  private array(value: unknown[], depth: number): unknown {
    if (!isArrayPrototype(Object.getPrototypeOf(value))) {
      throw new JsonIssue('non-json', 'an array subclass is not JSON');
    }
    const length = value.length;
    const out = this.copy ? new Array<unknown>(length) : value;
    for (let i = 0; i < length; i++) {
      const element = value[i];
      if (element === undefined) {
        const issue = new JsonIssue(
          'non-json',
          i in value ? 'undefined is not JSON' : 'a sparse array hole is not JSON',
        );
        issue.segments.push(i);
        throw issue;
      }
      try {
        const next = this.visit(element, depth + 1);
        if (this.copy) out[i] = next;
      } catch (error) {
        if (error instanceof JsonIssue) error.segments.push(i);
        throw error;
      }
    }
    return this.freeze ? Object.freeze(out) : out;
  }

  private object(value: object, depth: number): object {
    const proto: unknown = Object.getPrototypeOf(value);
    if (!isObjectPrototype(proto)) {
      throw new JsonIssue('non-json', `${instanceName(proto)} is not a plain JSON object`);
    }
    if (this.parsed) return this.parsedObject(value as Record<string, unknown>, depth);
    const keys = Object.keys(value);
    // Two cheap listings instead of Reflect.ownKeys, which takes V8's slow key-collection path
    // (~160 ns per object against ~15 ns for getOwnPropertyNames).
    if (
      Object.getOwnPropertyNames(value).length !== keys.length ||
      Object.getOwnPropertySymbols(value).length !== 0
    ) {
      throw new JsonIssue('non-json', 'symbol or non-enumerable keys do not survive JSON');
    }
    const source = value as Record<string, unknown>;
    const out: Record<string, unknown> = this.copy ? {} : source;
    for (const key of keys) {
      this.count(key.length);
      const member = source[key];
      try {
        const next = this.visit(member, depth + 1);
        if (this.copy) {
          if (key === '__proto__') {
            Object.defineProperty(out, key, {
              value: next,
              enumerable: true,
              writable: true,
              configurable: true,
            });
          } else {
            out[key] = next;
          }
        }
      } catch (error) {
        if (error instanceof JsonIssue) error.segments.push(key);
        throw error;
      }
    }
    return this.freeze ? Object.freeze(out) : out;
  }

  /**
   * An object `JSON.parse` built: its own keys are enumerable data properties, so `for...in`
   * walks them without allocating a key array. The `hasOwn` test skips keys an enumerable
   * property added to `Object.prototype` (pollution) would contribute.
   */
  private parsedObject(value: Record<string, unknown>, depth: number): object {
    for (const key in value) {
      if (!Object.hasOwn(value, key)) continue;
      this.count(key.length);
      try {
        this.visit(value[key], depth + 1);
      } catch (error) {
        if (error instanceof JsonIssue) error.segments.push(key);
        throw error;
      }
    }
    return Object.freeze(value);
  }

  private count(chars: number): void {
    this.chars += chars;
    if (this.chars > this.limits.maxChars) {
      throw new JsonIssue(
        'limit',
        `more than ${this.limits.maxChars} characters of strings and keys`,
      );
    }
  }
}

/** True for `Object.prototype` (of any realm) and `null`: the prototypes of plain objects. */
export function isObjectPrototype(proto: unknown): boolean {
  if (proto === Object.prototype || proto === null) return true;
  // A plain object from another realm (vm context, iframe) has that realm's Object.prototype.
  return (
    typeof proto === 'object' &&
    Object.getPrototypeOf(proto) === null &&
    Object.hasOwn(proto, 'isPrototypeOf') &&
    Object.prototype.toString.call(proto) === '[object Object]'
  );
}

function isArrayPrototype(proto: unknown): boolean {
  if (proto === Array.prototype) return true;
  return (
    Array.isArray(proto) &&
    Object.hasOwn(proto, 'concat') &&
    isObjectPrototype(Object.getPrototypeOf(proto))
  );
}

function instanceName(proto: unknown): string {
  const ctor = (proto as { constructor?: { name?: unknown } } | null)?.constructor;
  return typeof ctor?.name === 'string' && ctor.name !== ''
    ? `an instance of ${ctor.name}`
    : 'an exotic object';
}

/**
 * Deep structural equality of two JSON values (object key order ignored). Both values must
 * already be valid JSON within the default depth limit.
 */
export function jsonEqual(a: JsonValue, b: JsonValue): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) {
      if (!jsonEqual(a[i] as JsonValue, b[i] as JsonValue)) return false;
    }
    return true;
  }
  if (Array.isArray(b)) return false;
  const objectA = a as JsonObject;
  const objectB = b as JsonObject;
  const keysA = Object.keys(objectA);
  if (keysA.length !== Object.keys(objectB).length) return false;
  for (const key of keysA) {
    if (!Object.hasOwn(objectB, key)) return false;
    if (!jsonEqual(objectA[key] as JsonValue, objectB[key] as JsonValue)) return false;
  }
  return true;
}
