/**
 * Model-based property test of the session surface (DESIGN §4, spec/session-surface-rfc.md).
 *
 * Random sequences of valid and invalid appends and replaces run against a real `Session` and
 * against a naive reference model that re-implements the rules plainly: the model keeps the
 * accepted events, a map seq -> derived message and a replace counter, and rebuilds its surface
 * from scratch at every step by replaying the accepted surface ops with `splice`. The model
 * decides accept/reject on its own; the command generator only aims at interesting cases.
 *
 * Checked after EVERY step:
 *  1. accept/reject agrees with the model; a rejection is a `SessionValidationError` with the
 *     model's `code`, the would-be seq and the event type;
 *  2. `session.surface.seqs` equals the model's surface (also `size`, `has`, `indexOf`, `at`);
 *  3. `session.surface.replaceGeneration` equals the model's replace counter;
 *  4. `session.deriveMessages()` equals the model's messages (surface order, empty assistant
 *     messages dropped) and, element by element, a full re-derivation of `session.events` through
 *     `deriveEventMessage` (the events' own frozen message objects);
 *  5. `foldSurface(session.events)` gives the same seqs, generation and replace count;
 *  6. a rejected append changes nothing: `seq`, the events, the surface (same frozen array), the
 *     generation and the derived messages (same array) are exactly as before;
 *  7. an accepted append returns a deeply frozen event holding what was asked, at the next seq,
 *     and an `events` snapshot taken before the append does not grow;
 *  8. `messagesAt(seq)` for a random earlier seq equals a session seeded with
 *     `events.slice(0, seq + 1)` and the model's messages right after that seq;
 *  9. a consumer following `deriveMessagesSince` cursors holds exactly `deriveMessages()`, and
 *     is told to reset exactly when a replace happened since its cursor;
 * 10. `deriveMessageList()` reads exactly `deriveMessages()` (by `at`, iteration and `slice`),
 *     is the same list while the messages are unchanged, and every list taken at an earlier
 *     step still reads what it read then, whatever was appended or replaced since.
 * At the end of each run, a JSON round trip of the log reseeds to the same surface and messages.
 *
 * Reproduce a failure with PALIMPSEST_SEED=<seed> [PALIMPSEST_PATH=<path>] from fast-check's report.
 *
 * The reference model is in surface-reference-model.ts, the command generator in
 * surface-commands.ts.
 */
import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  deriveEventMessage,
  foldSurface,
  type Message,
  type MessageCursor,
  type MessageList,
  PalimpsestError,
  type ProvenanceIntent,
  Session,
  type SessionEvent,
  type SessionValidationCode,
  SessionValidationError,
  type SurfaceIntent,
} from '../../src/core/index.js';
import { fuzzRuns } from '../fuzz-runs.js';
import { type Command, commandArb, resolve } from './surface-commands.js';
import {
  type Attempt,
  type Decision,
  ReferenceModel,
  SURFACE_TYPES,
} from './surface-reference-model.js';

// ---------------------------------------------------------------------------------------------
// Running a sequence against the session and the model
// ---------------------------------------------------------------------------------------------

/** Counts what the runs exercised, so a generator regression cannot make the test vacuous. */
const coverage = new Map<string, number>();
let propertyHeld = false;

function count(key: string): void {
  coverage.set(key, (coverage.get(key) ?? 0) + 1);
}

/** Deep strict equality; on a mismatch vitest prints the diff. */
function assertEqual(actual: unknown, expected: unknown, what: string): void {
  if (isDeepStrictEqual(actual, expected)) return;
  expect(actual, what).toStrictEqual(expected);
  throw new Error(`${what}: values differ`);
}

/** Element-by-element identity (`===`), for arrays that must hold the very same objects. */
function assertIdentical(
  actual: readonly unknown[],
  expected: readonly unknown[],
  what: string,
): void {
  if (actual.length === expected.length && actual.every((v, i) => v === expected[i])) return;
  assertEqual(actual, expected, what); // prints a diff when the contents differ
  throw new Error(`${what}: equal contents, but not the same objects`);
}

function isDeeplyFrozen(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return true;
  return Object.isFrozen(value) && Object.values(value).every(isDeeplyFrozen);
}

/** Calls `session.append` through a widened `string` type so every attempt compiles. */
function appendLoosely(session: Session, attempt: Attempt): SessionEvent {
  const type: string = attempt.type;
  return session.append(type, attempt.data, attempt.intent as SurfaceIntent | ProvenanceIntent);
}

interface Snapshot {
  readonly seq: number;
  readonly events: readonly SessionEvent[];
  readonly surface: readonly number[];
  readonly generation: number;
  readonly messages: readonly Message[];
}

function snapshot(session: Session): Snapshot {
  return {
    seq: session.seq,
    events: session.events,
    surface: session.surface.seqs,
    generation: session.surface.replaceGeneration,
    messages: session.deriveMessages(),
  };
}

function applyStep(session: Session, model: ReferenceModel, attempt: Attempt): void {
  const decision = model.decide(attempt);
  const before = snapshot(session);
  let outcome: { event: SessionEvent } | { error: unknown };
  try {
    outcome = { event: appendLoosely(session, attempt) };
  } catch (error) {
    outcome = { error };
  }
  if (!decision.ok) {
    count(decision.code);
    if ('event' in outcome) {
      throw new Error(
        `accepted ${attempt.type} (seq ${outcome.event.seq}); model expected ${decision.code}`,
      );
    }
    expectRejection(outcome.error, decision.code, before.seq, attempt.type);
    expectUnchanged(session, before);
    return;
  }
  if ('error' in outcome) {
    throw new Error(`rejected ${attempt.type} that the model accepts: ${String(outcome.error)}`);
  }
  countAccepted(model, attempt, decision);
  expectCommitted(outcome.event, attempt, before);
  model.commit(attempt, decision);
}

function countAccepted(
  model: ReferenceModel,
  attempt: Attempt,
  decision: Decision & { ok: true },
): void {
  if (decision.shadowed === undefined) {
    count(SURFACE_TYPES.has(attempt.type) ? 'accepted append' : 'accepted log-only');
    return;
  }
  count(attempt.type === 'tool/result' ? 'accepted tool/result rewrite' : 'accepted replace');
  const op = attempt.intent?.surfaceOp as { start: number; end: number };
  if (op.start > op.end) count('accepted replace with start seq > end seq');
  if (decision.shadowed.some((s) => typeof model.events[s]?.op === 'object')) {
    count('accepted nested replace');
  }
}

function expectRejection(
  error: unknown,
  code: SessionValidationCode,
  seq: number,
  type: string,
): void {
  if (!(error instanceof SessionValidationError) || !PalimpsestError.isInstance(error)) {
    throw new Error(`expected a SessionValidationError ${code}, got ${String(error)}`);
  }
  if (error.code !== code) {
    throw new Error(`expected ${code}, got ${error.code}: ${error.message}`);
  }
  expect(error.seq).toBe(seq);
  expect(error.eventType).toBe(type);
}

function expectUnchanged(session: Session, before: Snapshot): void {
  expect(session.seq).toBe(before.seq);
  expect(session.events.length).toBe(before.events.length);
  assertIdentical(session.events, before.events, 'events after a rejected append');
  expect(session.surface.seqs, 'surface array after a rejected append').toBe(before.surface);
  expect(session.surface.replaceGeneration).toBe(before.generation);
  expect(session.deriveMessages(), 'messages array after a rejected append').toBe(before.messages);
}

function expectCommitted(event: SessionEvent, attempt: Attempt, before: Snapshot): void {
  const intent = attempt.intent ?? {};
  const expected = {
    seq: before.seq,
    time: event.time,
    type: attempt.type,
    data: attempt.data,
    ...(intent.surfaceOp === undefined ? {} : { surfaceOp: intent.surfaceOp }),
    ...(intent.sourceEventSeqs === undefined ? {} : { sourceEventSeqs: intent.sourceEventSeqs }),
  };
  assertEqual({ ...event }, expected, 'the appended event');
  if (!isDeeplyFrozen(event)) throw new Error('the appended event is not deeply frozen');
  expect(before.events.length, 'an events snapshot taken before the append').toBe(before.seq);
}

/** Every per-step invariant of the header comment (2-5, 8, 9). */
function checkState(
  session: Session,
  model: ReferenceModel,
  probe: number,
  reader: CursorReader,
): void {
  const seqs = session.surface.seqs;
  assertEqual([...seqs], model.surface, 'surface seqs');
  assertEqual(session.surface.replaceGeneration, model.generation, 'replaceGeneration');
  assertEqual(session.surface.size, model.surface.length, 'surface.size');
  checkSurfaceQueries(session, model);

  const messages = session.deriveMessages();
  assertEqual([...messages], model.messages(), 'derived messages vs model');
  const events = session.events;
  const rederived = seqs
    .map((seq) => deriveEventMessage(events[seq] as SessionEvent))
    .filter((m): m is Message => m !== null);
  assertIdentical(messages, rederived, 'derived messages vs full re-derivation');

  const fold = foldSurface(events);
  assertEqual([...fold.seqs], [...seqs], 'foldSurface seqs');
  assertEqual(fold.replaceGeneration, model.generation, 'foldSurface replaceGeneration');
  assertEqual(fold.replacements.length, model.generation, 'foldSurface replacements');

  if (session.seq > 0) {
    const at = probe % session.seq;
    const viewed = session.messagesAt(at);
    const seeded = Session.create({ seed: events.slice(0, at + 1) }).deriveMessages();
    assertEqual([...viewed], [...seeded], `messagesAt(${at}) vs seeded prefix`);
    assertEqual([...viewed], model.history[at], `messagesAt(${at}) vs model history`);
  }
  reader.follow(session, model.generation);
}

function checkSurfaceQueries(session: Session, model: ReferenceModel): void {
  const surface = session.surface;
  const seqs = Array.from({ length: model.nextSeq + 1 }, (_, seq) => seq);
  assertEqual(
    seqs.map((seq) => [surface.has(seq), surface.indexOf(seq)]),
    seqs.map((seq) => [model.surface.includes(seq), model.surface.indexOf(seq)]),
    'surface.has and surface.indexOf for every seq',
  );
  const positions = Array.from(
    { length: 2 * model.surface.length },
    (_, i) => i - model.surface.length,
  );
  assertEqual(
    positions.map((i) => surface.at(i)),
    positions.map((i) => model.surface.at(i)),
    'surface.at for every position',
  );
}

/** A consumer that keeps its own copy of the messages through `deriveMessagesSince`. */
class CursorReader {
  private cursor: MessageCursor | undefined;
  private held: Message[] = [];
  private generation = -1;

  follow(session: Session, generation: number): void {
    const delta = session.deriveMessagesSince(this.cursor);
    const mustReset = this.cursor === undefined || generation !== this.generation;
    assertEqual(delta.reset, mustReset, 'deriveMessagesSince reset flag');
    this.held = delta.reset ? [...delta.messages] : [...this.held, ...delta.messages];
    this.cursor = delta.cursor;
    this.generation = generation;
    assertIdentical(this.held, session.deriveMessages(), 'messages held through cursors');
  }
}

/** The message lists taken at every step, each with a copy of what it read then. */
class ListKeeper {
  private readonly taken: {
    readonly list: MessageList;
    readonly read: readonly Message[];
    readonly generation: number;
  }[] = [];

  check(session: Session): void {
    const generation = session.surface.replaceGeneration;
    const list = session.deriveMessageList();
    const messages = session.deriveMessages();
    assertIdentical([...list], messages, 'message list vs deriveMessages');
    assertIdentical(list.slice(), messages, 'message list slice vs deriveMessages');
    assertEqual(list.at(-1), messages.at(-1), 'message list at(-1)');
    const last = this.taken.at(-1);
    const unchanged =
      last !== undefined &&
      last.generation === generation &&
      last.read.length === messages.length &&
      last.read.every((message, i) => message === messages[i]);
    if (unchanged) expect(list, 'the list while the messages are unchanged').toBe(last.list);
    this.taken.push({ list, read: [...messages], generation });
    for (const [step, { list: held, read }] of this.taken.entries()) {
      assertIdentical(
        Array.from({ length: held.length }, (_, i) => held.at(i)),
        read,
        `message list of step ${step}`,
      );
    }
  }
}

function runCommands(commands: readonly Command[]): void {
  let time = 1_700_000_000_000;
  const session = Session.create({ id: 'model', clock: () => time++ });
  const model = new ReferenceModel();
  const reader = new CursorReader();
  const lists = new ListKeeper();
  for (const cmd of commands) {
    applyStep(session, model, resolve(model, cmd));
    checkState(session, model, cmd.probe, reader);
    lists.check(session);
  }
  const reloaded = JSON.parse(JSON.stringify(session.events)) as unknown[];
  const reseeded = Session.create({ seed: reloaded });
  assertEqual([...reseeded.surface.seqs], model.surface, 'surface after a JSON round trip');
  assertEqual([...reseeded.deriveMessages()], model.messages(), 'messages after a JSON round trip');
  assertEqual([...foldSurface(reloaded).seqs], model.surface, 'fold after a JSON round trip');
}

function runParameters(numRuns: number): fc.Parameters<[Command[]]> {
  const seed = process.env.PALIMPSEST_SEED;
  const path = process.env.PALIMPSEST_PATH;
  return {
    numRuns,
    ...(seed === undefined || seed === '' ? {} : { seed: Number(seed) }),
    ...(path === undefined || path === '' ? {} : { path }),
  };
}

/** Runs of the property: 1000 under test:all, 100 in the fast suite. */
const RUNS = fuzzRuns(1000);

describe('session surface against a naive reference model', () => {
  it('agrees with a naive reference model on every step of random append/replace sequences', () => {
    fc.assert(
      fc.property(
        fc.array(commandArb, { minLength: 1, maxLength: 60, size: 'max' }),
        (commands) => {
          runCommands(commands);
        },
      ),
      runParameters(RUNS),
    );
    propertyHeld = true;
  });

  it('reaches every rule and every kind of accepted replace across the runs (each on more than one step in 50 runs)', () => {
    const expected = [
      'accepted append',
      'accepted log-only',
      'accepted replace',
      'accepted tool/result rewrite',
      'accepted nested replace',
      'accepted replace with start seq > end seq',
      'SURFACE_OP_REQUIRED',
      'SURFACE_OP_FORBIDDEN',
      'INVALID_SURFACE_OP',
      'REPLACE_ENDPOINT_NOT_ON_SURFACE',
      'REPLACE_RANGE_REVERSED',
      'REPLACE_SOURCES_INCOMPLETE',
      'INVALID_SOURCE_EVENT_SEQS',
      'EMPTY_SOURCE_EVENT_SEQS',
      'TOOL_RESULT_REWRITE_INVALID',
    ];
    // Only meaningful after the property above ran to completion (not filtered out, not failed).
    if (!propertyHeld) return;
    if (process.env.PALIMPSEST_COVERAGE) console.log(Object.fromEntries(coverage));
    for (const key of expected) {
      expect(coverage.get(key) ?? 0, `steps that hit ${key}`).toBeGreaterThan(RUNS / 50);
    }
  });
});
