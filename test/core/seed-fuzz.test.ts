/**
 * Seed fuzzing (DESIGN §4 rules 7 and 11): loaded logs are hostile input.
 *
 * A few golden logs are recorded through a real Session (turns with tool round trips, stream
 * chunks, an empty assistant stream, a compaction replace, nested replaces with start > end by
 * seq, tool/result prunes, custom event types, `__proto__` data keys), JSON round-tripped, then
 * mutated by fast-check: events dropped, duplicated, swapped or replaced; seq, time and type
 * corrupted; data deleted or swapped for values JSON cannot express (undefined, functions, class
 * instances, -0, NaN, cycles, 1e5-deep nesting, symbol keys, sparse arrays...); unknown envelope
 * keys; malformed surfaceOp and sourceEventSeqs; broken message shapes.
 *
 * Property, for every mutated log:
 *  1. `Session.create({seed})`, `Session.create({seed, seedMode: 'adopt'})` and `foldSurface`
 *     either all succeed with the same surface and generation, or all throw a
 *     `SessionValidationError` (by `instanceof` and `PalimpsestError.isInstance`) with the same
 *     documented `code` and the same integer `index`, and a bounded message; never a TypeError,
 *     a RangeError or a hang;
 *  2. a rejection names the first bad event: the prefix before `index` is accepted, the prefix
 *     through `index` fails the same way;
 *  3. an accepted log is internally consistent: seqs equal indexes, `foldSurface` of the session's
 *     own events agrees, derived messages equal a full re-derivation, a JSON round trip reseeds
 *     to the same state, and the read paths (messagesAt, transcript, checkInvariants, planRepair)
 *     throw nothing but typed errors (forkSession waits on a KNOWN BUG, see expectConsistent);
 *     copy mode and foldSurface leave the caller's objects unfrozen;
 *  4. `Object.prototype` never gains a key.
 * The golden logs are in seed-goldens.ts, the mutations in seed-mutations.ts; the defects fuzzing
 * found are pinned in seed-regressions.test.ts.
 *
 * Reproduce a failure with PALIMPSEST_SEED=<seed> [PALIMPSEST_PATH=<path>] from fast-check's report.
 */
import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  checkInvariants,
  deriveEventMessage,
  foldSurface,
  type Message,
  PalimpsestError,
  planRepair,
  Session,
  type SessionEvent,
  type SessionValidationCode,
  SessionValidationError,
} from '../../src/core/index.js';
import { fuzzRuns } from '../fuzz-runs.js';
import { GOLDENS, MAX_MESSAGE_LENGTH } from './seed-goldens.js';
import { buildSeed, caseArb, type FuzzCase, isRecord, type Mutable } from './seed-mutations.js';

// ---------------------------------------------------------------------------------------------
// Outcomes
// ---------------------------------------------------------------------------------------------

const DOCUMENTED_CODES: ReadonlySet<SessionValidationCode> = new Set<SessionValidationCode>([
  'INVALID_EVENT_TYPE',
  'INVALID_ENVELOPE',
  'INVALID_TIME',
  'SEQ_NOT_CONTIGUOUS',
  'NON_JSON_DATA',
  'DATA_LIMIT_EXCEEDED',
  'SURFACE_OP_REQUIRED',
  'SURFACE_OP_FORBIDDEN',
  'INVALID_SURFACE_OP',
  'REPLACE_ENDPOINT_NOT_ON_SURFACE',
  'REPLACE_RANGE_REVERSED',
  'INVALID_SOURCE_EVENT_SEQS',
  'EMPTY_SOURCE_EVENT_SEQS',
  'REPLACE_SOURCES_INCOMPLETE',
  'TOOL_RESULT_REWRITE_INVALID',
  'INVALID_MESSAGE',
  'INVALID_EVENT_DATA',
]);

type Outcome =
  | { readonly ok: true; readonly seqs: readonly number[]; readonly generation: number }
  | { readonly ok: false; readonly code: string; readonly index: number };

/** Runs `fn`; a thrown value must be a documented, located SessionValidationError. */
function outcomeOf(
  what: string,
  length: number,
  fn: () => { readonly seqs: readonly number[]; readonly generation: number },
): Outcome {
  let result: { readonly seqs: readonly number[]; readonly generation: number };
  try {
    result = fn();
  } catch (error) {
    if (!(error instanceof SessionValidationError) || !PalimpsestError.isInstance(error)) {
      const name = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
      throw new Error(`${what} threw an untyped error: ${name}`, { cause: error });
    }
    if (!DOCUMENTED_CODES.has(error.code))
      throw new Error(`${what}: undocumented code ${error.code}`);
    const index = error.index;
    if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index >= length) {
      throw new Error(`${what}: ${error.code} without a valid index (${String(index)})`);
    }
    if (error.message.length > MAX_MESSAGE_LENGTH) {
      throw new Error(`${what}: ${error.code} message is ${error.message.length} characters long`);
    }
    return { ok: false, code: error.code, index };
  }
  return { ok: true, seqs: [...result.seqs], generation: result.generation };
}

function viaSession(seed: readonly unknown[], seedMode: 'copy' | 'adopt'): Outcome {
  return outcomeOf(`Session.create (${seedMode})`, seed.length, () => {
    const session = Session.create({ id: 'fuzz', seed, seedMode });
    return { seqs: session.surface.seqs, generation: session.surface.replaceGeneration };
  });
}

function viaFold(seed: readonly unknown[]): Outcome {
  return outcomeOf('foldSurface', seed.length, () => {
    const fold = foldSurface(seed);
    return { seqs: fold.seqs, generation: fold.replaceGeneration };
  });
}

/** Loose equality for seq lists: `-0` and `0` name the same event. */
function sameSeqs(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((v, i) => v === b[i]);
}

function sameOutcome(a: Outcome, b: Outcome): boolean {
  if (a.ok && b.ok) return sameSeqs(a.seqs, b.seqs) && a.generation === b.generation;
  if (!a.ok && !b.ok) return a.code === b.code && a.index === b.index;
  return false;
}

function expectAgreement(outcomes: Readonly<Record<string, Outcome>>): void {
  const entries = Object.entries(outcomes);
  const [, first] = entries[0] as [string, Outcome];
  for (const [, outcome] of entries) {
    if (!sameOutcome(first, outcome)) {
      throw new Error(`seeding paths disagree: ${JSON.stringify(outcomes)}`);
    }
  }
}

/** A rejection names the first bad event: everything before it is a valid log. */
function expectFirstBadIndex(fuzz: FuzzCase, outcome: Outcome & { ok: false }): void {
  const before = buildSeed(fuzz).slice(0, outcome.index);
  const accepted = viaSession(before, 'copy');
  if (!accepted.ok) {
    throw new Error(`error at index ${outcome.index}, but the prefix fails at ${accepted.index}`);
  }
  const through = viaFold(buildSeed(fuzz).slice(0, outcome.index + 1));
  if (!sameOutcome(through, outcome)) {
    throw new Error(`the prefix through index ${outcome.index} gives ${JSON.stringify(through)}`);
  }
}

/** Read paths of an accepted log may throw typed errors only. */
function expectTyped(what: string, fn: () => unknown): void {
  try {
    fn();
  } catch (error) {
    if (!PalimpsestError.isInstance(error)) {
      throw new Error(`${what} threw ${String(error)}`, { cause: error });
    }
  }
}

function expectConsistent(seed: readonly unknown[]): void {
  const session = Session.create({ id: 'fuzz', seed });
  const events = session.events;
  expect(events.length).toBe(seed.length);
  events.forEach((event, index) => {
    if (event.seq !== index) throw new Error(`event ${index} has seq ${event.seq}`);
  });
  const seqs = session.surface.seqs;
  const fold = foldSurface(events);
  if (!sameSeqs(fold.seqs, seqs)) throw new Error('foldSurface(session.events) disagrees');
  expect(fold.replaceGeneration).toBe(session.surface.replaceGeneration);

  const messages = session.deriveMessages();
  const rederived = seqs
    .map((seq) => deriveEventMessage(events[seq] as SessionEvent))
    .filter((m): m is Message => m !== null);
  expect(messages.length).toBe(rederived.length);
  messages.forEach((message, i) => {
    if (message !== rederived[i]) throw new Error(`derived message ${i} is not the event's own`);
  });

  const reseeded = Session.create({ seed: JSON.parse(JSON.stringify(events)) });
  if (!sameSeqs(reseeded.surface.seqs, seqs))
    throw new Error('a JSON round trip changes the surface');
  if (!isDeepStrictEqual(reseeded.deriveMessages(), messages)) {
    throw new Error('a JSON round trip changes the derived messages');
  }

  for (let seq = 0; seq < events.length; seq++) {
    expectTyped(`messagesAt(${seq})`, () => session.messagesAt(seq));
  }
  expectTyped('transcript', () => session.transcript());
  expectTyped('checkInvariants', () => checkInvariants(events, { requireClosed: true }));
  expectTyped('planRepair', () => planRepair(events));
  // forkSession is left out here: it throws a TypeError on some accepted logs (KNOWN BUG; see
  // seed-regressions.test.ts). Add it back once fork.ts is fixed:
  // expectTyped('forkSession', () => forkSession(session));
}

/** Which events and data objects of a seed are frozen: copy and fold must not change it. */
function frozenState(seed: readonly unknown[]): string {
  return seed
    .map((event) => {
      if (!isRecord(event)) return '-';
      const data = event.data;
      const dataFrozen = typeof data === 'object' && data !== null && Object.isFrozen(data);
      return `${Object.isFrozen(event) ? 'F' : 'w'}${dataFrozen ? 'F' : 'w'}`;
    })
    .join('');
}

/** The whole property for one mutated log (see the header comment, points 1-3). */
function checkCase(fuzz: FuzzCase): void {
  const seed = buildSeed(fuzz);
  const frozenBefore = frozenState(seed);
  const copy = viaSession(seed, 'copy');
  const fold = viaFold(seed);
  if (frozenState(seed) !== frozenBefore) throw new Error('copy or fold froze the caller input');
  expectAgreement({ copy, fold, adopt: viaSession(buildSeed(fuzz), 'adopt') });
  const key = copy.ok ? 'accepted' : copy.code;
  outcomeCounts.set(key, (outcomeCounts.get(key) ?? 0) + 1);
  if (copy.ok) expectConsistent(buildSeed(fuzz));
  else expectFirstBadIndex(fuzz, copy);
}

function prototypeKeys(): string {
  return Reflect.ownKeys(Object.prototype).map(String).sort().join(',');
}

function runParameters(numRuns: number): fc.Parameters<[FuzzCase]> {
  const seed = process.env.PALIMPSEST_SEED;
  const path = process.env.PALIMPSEST_PATH;
  return {
    numRuns,
    ...(seed === undefined || seed === '' ? {} : { seed: Number(seed) }),
    ...(path === undefined || path === '' ? {} : { path }),
  };
}

const outcomeCounts = new Map<string, number>();
let fuzzHeld = false;

// ---------------------------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------------------------

describe('seeding from hostile logs', () => {
  let prototypeBefore = '';
  beforeAll(() => {
    prototypeBefore = prototypeKeys();
  });
  afterAll(() => {
    expect(prototypeKeys()).toBe(prototypeBefore);
  });

  it('accepts every golden log unchanged, from JSON and from live events', () => {
    for (const log of Object.values(GOLDENS)) {
      if (log.live.length > 0)
        expect(foldSurface(log.live).replaceGeneration, log.name).toBeGreaterThan(0);
      for (const seed of [JSON.parse(log.json) as unknown[], [...log.live]]) {
        const session = Session.create({ seed });
        expect(session.events.length, log.name).toBe(log.live.length);
        expect(JSON.stringify(session.events), log.name).toBe(log.json);
        expectConsistent(seed);
      }
    }
  });

  it('either rejects a mutated seed with the same located, documented error on every path, or accepts it consistently', () => {
    const prototypeBefore = prototypeKeys();
    fc.assert(
      fc.property(caseArb, (fuzz) => {
        checkCase(fuzz);
        if (prototypeKeys() !== prototypeBefore) throw new Error('Object.prototype gained a key');
        if (({} as Mutable).polluted !== undefined) throw new Error('Object.prototype polluted');
      }),
      runParameters(fuzzRuns(1000)),
    );
    fuzzHeld = true;
  });

  it('reaches every stage of validation across the fuzz runs', () => {
    if (!fuzzHeld) return;
    // The fuzz run above draws a new seed each time, so its counts can dip on an unlucky draw;
    // the coverage claim is made on a fixed sample instead.
    outcomeCounts.clear();
    fc.assert(fc.property(caseArb, checkCase), { numRuns: 1000, seed: 20_261_130 });
    if (process.env.PALIMPSEST_COVERAGE) console.log(Object.fromEntries(outcomeCounts));
    const expected = [
      'accepted',
      'INVALID_EVENT_TYPE',
      'INVALID_ENVELOPE',
      'INVALID_TIME',
      'SEQ_NOT_CONTIGUOUS',
      'NON_JSON_DATA',
      'DATA_LIMIT_EXCEEDED',
      'SURFACE_OP_REQUIRED',
      'SURFACE_OP_FORBIDDEN',
      'INVALID_SURFACE_OP',
      'INVALID_SOURCE_EVENT_SEQS',
      'INVALID_MESSAGE',
    ];
    for (const key of expected) expect(outcomeCounts.get(key) ?? 0, key).toBeGreaterThan(1);
  });
});
