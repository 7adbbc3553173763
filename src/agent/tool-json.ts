/**
 * A tool's return value as JSON, converted the way `JSON.stringify` would (so what a developer
 * sees in a quick `console.log(JSON.stringify(x))` is what the model gets), except where
 * `JSON.stringify` silently loses data: a `Map` or `Set` becomes `{}`, a function disappears,
 * a `Buffer` becomes a list of bytes, a bigint or a cycle throws without saying where. Those
 * are refused with the path of the offending member, so the tool's author can fix the tool.
 */
import type { JsonValue } from '../core/index.js';

/** The converted value, or what stopped the conversion and where. */
export type ToolJson = { readonly json: JsonValue } | { readonly problem: string };

// Deeper than any real tool output, shallow enough that the walk cannot overflow the stack.
const MAX_DEPTH = 1000;

/** Converts `value` (a tool's return value); `root` names it in messages (`result`). */
export function toToolJson(value: unknown, root = 'result'): ToolJson {
  const walk = new Walk();
  const json = walk.convert(value, root, '', 0);
  if (walk.problem !== undefined) return { problem: walk.problem };
  return { json: json === undefined ? null : json };
}

class Walk {
  problem: string | undefined;
  /** The objects being converted, from the root down: a cycle is a reference back into it. */
  private readonly ancestors: object[] = [];
  private readonly paths: string[] = [];

  convert(value: unknown, path: string, key: string, depth: number): JsonValue | undefined {
    if (this.problem !== undefined) return undefined;
    if (typeof value === 'object' && value !== null && !ArrayBuffer.isView(value)) {
      const toJSON = (value as { toJSON?: unknown }).toJSON;
      if (typeof toJSON === 'function') value = toJSON.call(value, key);
    }
    switch (typeof value) {
      case 'string':
      case 'boolean':
        return value;
      case 'number':
        if (!Number.isFinite(value))
          return this.refuse(path, `${value}, which is not a JSON number`);
        return Object.is(value, -0) ? 0 : value;
      case 'undefined':
        return undefined;
      case 'bigint':
        return this.refuse(path, 'a bigint (convert it to a string or a number)');
      case 'function':
        return this.refuse(path, 'a function');
      case 'symbol':
        return this.refuse(path, 'a symbol');
    }
    if (value === null) return null;
    const object = value as object;
    if (depth >= MAX_DEPTH) return this.refuse(path, `nested deeper than ${MAX_DEPTH} levels`);
    const index = this.ancestors.indexOf(object);
    if (index !== -1) {
      return this.refuse(path, `a cycle: it refers back to ${this.paths[index]}`);
    }
    const kind = refusedKind(object);
    if (kind !== undefined) return this.refuse(path, kind);
    this.ancestors.push(object);
    this.paths.push(path);
    try {
      if (Array.isArray(object)) {
        const out: JsonValue[] = [];
        for (let i = 0; i < object.length; i++) {
          const item = this.convert(object[i], `${path}[${i}]`, String(i), depth + 1);
          out.push(item === undefined ? null : item);
        }
        return out;
      }
      const out: Record<string, JsonValue> = {};
      for (const name of Object.keys(object)) {
        const item = this.convert(
          (object as Record<string, unknown>)[name],
          memberPath(path, name),
          name,
          depth + 1,
        );
        if (item === undefined) continue;
        // A literal "__proto__" key is data; plain assignment would change the prototype.
        Object.defineProperty(out, name, {
          value: item,
          enumerable: true,
          writable: true,
          configurable: true,
        });
      }
      return out;
    } finally {
      this.ancestors.pop();
      this.paths.pop();
    }
  }

  private refuse(path: string, what: string): undefined {
    this.problem ??= `${path} is ${what}`;
    return undefined;
  }
}

/** What a non-plain object is, when JSON cannot carry it; `undefined` for arrays and plain objects. */
function refusedKind(object: object): string | undefined {
  if (Array.isArray(object)) return undefined;
  const proto: unknown = Object.getPrototypeOf(object);
  if (proto === Object.prototype || proto === null) return undefined;
  if (object instanceof Map) return 'a Map (convert it with Object.fromEntries)';
  if (object instanceof Set) return 'a Set (convert it with Array.from)';
  if (ArrayBuffer.isView(object) || object instanceof ArrayBuffer) {
    return `a ${constructorName(object) ?? 'binary buffer'} (encode it as base64 text, or return an image with toolContent)`;
  }
  const name = constructorName(object);
  return name === undefined
    ? 'an object with a custom prototype'
    : `an instance of ${name} (return a plain object, or give the class a toJSON method)`;
}

function constructorName(object: object): string | undefined {
  const name: unknown = (object as { constructor?: { name?: unknown } }).constructor?.name;
  return typeof name === 'string' && name !== '' ? name : undefined;
}

function memberPath(path: string, name: string): string {
  return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(name)
    ? `${path}.${name}`
    : `${path}[${JSON.stringify(name)}]`;
}
