/**
 * The fast admission of delta chunks (`src/core/delta-chunk.ts`) must decide exactly as the
 * general path does. The oracle is the general path itself: the same data with a null prototype
 * is a plain object to the general path but never takes the fast one.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type JsonLimits, Session, SessionValidationError } from '../../src/core/index.js';

type Outcome =
  | { readonly ok: true; readonly json: string; readonly frozen: boolean }
  | { readonly ok: false; readonly code: string; readonly path: string | undefined };

function isDeepFrozen(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return true;
  return Object.isFrozen(value) && Object.values(value).every(isDeepFrozen);
}

function outcome(append: () => { readonly data: unknown }): Outcome {
  try {
    const event = append();
    return { ok: true, json: JSON.stringify(event), frozen: isDeepFrozen(event) };
  } catch (error) {
    if (!(error instanceof SessionValidationError)) throw error;
    return { ok: false, code: error.code, path: error.path };
  }
}

/** The same own keys and values on a null-prototype object, which the fast path never takes. */
function withoutPrototype(value: Record<string, unknown>): Record<string, unknown> {
  return Object.assign(Object.create(null) as Record<string, unknown>, value);
}

function admit(data: unknown, mode: 'copy' | 'adopt', limits?: Partial<JsonLimits>): Outcome {
  let time = 1_700_000_000_000;
  const session = Session.create({ id: 'delta-chunk', clock: () => time++, limits: limits ?? {} });
  return outcome(() =>
    mode === 'copy'
      ? session.append('assistant/chunk', data as never)
      : session.appendAdopted('assistant/chunk', data as never),
  );
}

/** What the general path makes of data of this shape (the part too loses its prototype). */
function general(
  data: Record<string, unknown>,
  mode: 'copy' | 'adopt',
  limits?: Partial<JsonLimits>,
): Outcome {
  const chunk = data.chunk;
  const copy = withoutPrototype(data);
  if (typeof chunk === 'object' && chunk !== null && !Array.isArray(chunk)) {
    copy.chunk = withoutPrototype(chunk as Record<string, unknown>);
  }
  return admit(copy, mode, limits);
}

const scalar = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.integer({ min: -3, max: 2 ** 53 }),
  fc.constantFrom(-0, 0.5, Number.NaN, Number.POSITIVE_INFINITY, null, true, undefined),
);
/** Mostly what the fast path accepts, so that both of its answers are tried often. */
const text = fc.oneof({ arbitrary: fc.string({ maxLength: 12 }), weight: 8 }, scalar);
const position = fc.oneof({ arbitrary: fc.nat(), weight: 6 }, scalar);
const keyOf = fc.constantFrom('turn', 'step', 'chunk', 'type', 'id', 'delta', 'attempt', 'x');

/** Chunk data near the delta shape: the shape itself, other key sets and orders, wrong values. */
const dataArb = fc.record({
  turn: position,
  step: position,
  part: fc.oneof(
    { arbitrary: fc.record({ type: text, id: text, delta: text }), weight: 4 },
    { arbitrary: fc.dictionary(keyOf, scalar, { maxKeys: 4 }), weight: 1 },
    { arbitrary: scalar, weight: 1 },
  ),
  order: fc.oneof(
    { arbitrary: fc.constant(['turn', 'step', 'chunk']), weight: 4 },
    { arbitrary: fc.constantFrom(['step', 'turn', 'chunk'], ['turn', 'step']), weight: 1 },
  ),
});

function build(arb: {
  readonly turn: unknown;
  readonly step: unknown;
  readonly part: unknown;
  readonly order: readonly string[];
}): Record<string, unknown> {
  const values: Record<string, unknown> = { turn: arb.turn, step: arb.step, chunk: arb.part };
  const data: Record<string, unknown> = {};
  for (const key of arb.order) data[key] = values[key];
  return data;
}

describe('delta chunk admission', () => {
  it('decides every chunk exactly as the general path does, copied or adopted', () => {
    fc.assert(
      fc.property(dataArb, fc.constantFrom('copy' as const, 'adopt' as const), (arb, mode) => {
        const fast = admit(structuredClone(build(arb)), mode);
        expect(fast).toEqual(general(structuredClone(build(arb)), mode));
        if (fast.ok) expect(fast.frozen).toBe(true);
      }),
      { numRuns: 2000, seed: 20_261_203 },
    );
  });

  it('admits a text delta as a frozen copy the caller cannot change', () => {
    const data = { turn: 1, step: 0, chunk: { type: 'text-delta', id: 't1', delta: 'Hel' } };
    const event = Session.create().append('assistant/chunk', data);
    data.chunk.delta = 'changed';
    expect(event.data).toEqual({
      turn: 1,
      step: 0,
      chunk: { type: 'text-delta', id: 't1', delta: 'Hel' },
    });
    expect(Object.isFrozen(event.data)).toBe(true);
    expect(Object.isFrozen(data.chunk)).toBe(false);
  });

  it('adopts a text delta: the caller’s objects become the event’s data, frozen', () => {
    const data = { turn: 1, step: 0, chunk: { type: 'text-delta', id: 't1', delta: 'Hel' } };
    const event = Session.create().appendAdopted('assistant/chunk', data);
    expect(event.data).toBe(data);
    expect(Object.isFrozen(data) && Object.isFrozen(data.chunk)).toBe(true);
  });

  it('refuses symbol and non-enumerable keys on either object of the shape', () => {
    const symbol = { turn: 1, step: 0, chunk: { type: 'text-delta', id: 't', delta: 'a' } };
    Object.defineProperty(symbol.chunk, Symbol('tag'), { value: 1, enumerable: true });
    const hidden = { turn: 1, step: 0, chunk: { type: 'text-delta', id: 't', delta: 'a' } };
    Object.defineProperty(hidden, 'secret', { value: 1, enumerable: false });
    for (const data of [symbol, hidden]) {
      const refused = admit(data, 'copy');
      expect(refused).toMatchObject({ ok: false, code: 'NON_JSON_DATA' });
    }
  });

  it('reads each getter once, also when the chunk turns out not to be a delta', () => {
    const reads: string[] = [];
    const getter = (name: string, value: unknown) => ({
      enumerable: true,
      get: () => {
        reads.push(name);
        return value;
      },
    });
    const part = {};
    Object.defineProperties(part, {
      type: getter('type', 'text-delta'),
      id: getter('id', 't1'),
      delta: getter('delta', { not: 'a string' }),
    });
    const data = {};
    Object.defineProperties(data, {
      turn: getter('turn', 1),
      step: getter('step', 0),
      chunk: getter('chunk', part),
    });
    const event = Session.create().append('assistant/chunk', data as never);
    expect(reads.sort()).toEqual(['chunk', 'delta', 'id', 'step', 'turn', 'type']);
    expect(JSON.stringify(event.data)).toBe(
      '{"turn":1,"step":0,"chunk":{"type":"text-delta","id":"t1","delta":{"not":"a string"}}}',
    );
  });

  it('holds a delta to the session’s limits as the general path does', () => {
    const data = {
      turn: 1,
      step: 0,
      chunk: { type: 'text-delta', id: 't', delta: 'x'.repeat(40) },
    };
    for (const limits of [{ maxChars: 50 }, { maxChars: 64 }, { maxNodes: 6 }, { maxDepth: 1 }]) {
      expect(admit(structuredClone(data), 'copy', limits)).toEqual(
        general(structuredClone(data), 'copy', limits),
      );
    }
    expect(admit(data, 'copy', { maxChars: 50 })).toMatchObject({ code: 'DATA_LIMIT_EXCEEDED' });
  });
});
