/**
 * The damage oracle, shared by the corruption and power-loss harnesses and the SQLite damage
 * tests: opens a damaged copy of a store and says, per acknowledged session, what came back.
 * The promise under test: each session gives its exact acknowledged events, or a typed error
 * (`CorruptLogError`, or `FormatVersionError` where a version was hit); never altered content,
 * never a shorter session or a vanished one without an error, never an untyped error. Two
 * outcomes are documented exceptions of the JSONL format (docs/durability.md) and counted on
 * their own: damage inside the last batch reads as a torn tail, and a file cut short reads as
 * the prefix before the cut (JSONL keeps no independent length).
 */
import { PalimpsestError } from '../../../src/core/index.js';
import type { SessionStore } from '../../../src/store/index.js';
import { CorruptLogError, FormatVersionError, openSession } from '../../../src/store/index.js';
import { random, recordTurns } from './workload.js';

/** What one session of a damaged copy gave back. */
export type SessionOutcome =
  /** Exactly the acknowledged events. */
  | 'intact'
  /** A CorruptLogError or FormatVersionError. */
  | 'detected'
  /** Another typed error (counted as detected, and reported by code). */
  | 'typed-other'
  /** JSONL: a prefix ending at a batch boundary with the rest reported as a torn tail. */
  | 'torn-tail'
  /** A prefix of the acknowledged events, nothing reported. */
  | 'shorter'
  /** Events that are not a prefix of the acknowledged ones. */
  | 'altered'
  /** The session is neither listed, nor listed as damaged, nor loadable. */
  | 'vanished'
  | 'untyped'
  | 'hang';

export interface CopyOutcome {
  readonly sessions: Map<string, SessionOutcome>;
  /** Error codes of typed errors other than the expected ones. */
  readonly otherCodes: string[];
  /** Messages of untyped errors and broken promises, for the failure report. */
  readonly notes: string[];
}

/** What was acknowledged of a session: its header and events, as JSON text. */
export interface AcknowledgedSession {
  readonly header: string;
  readonly events: readonly string[];
}

/** The acknowledged sessions of a store, by id. */
export type AcknowledgedText = ReadonlyMap<string, AcknowledgedSession>;

/**
 * Records `count` agent sessions `<prefix>-<n>` in `store` (3 + n turns each, seeded by n, every
 * batch made durable as it is written) and returns what was acknowledged.
 */
export async function recordAcknowledged(
  store: SessionStore,
  prefix: string,
  count: number,
): Promise<Map<string, AcknowledgedSession>> {
  const acknowledged = new Map<string, AcknowledgedSession>();
  for (let n = 0; n < count; n++) {
    const id = `${prefix}-${n}`;
    const live = await openSession(store, id, { durability: { mode: 'each' } });
    await recordTurns(live, random(n + 1), () => live.flush(), 3 + n);
    await live.flush();
    acknowledged.set(id, {
      header: JSON.stringify(live.header),
      events: live.events.map((event) => JSON.stringify(event)),
    });
    await live.close();
  }
  return acknowledged;
}

/** Settles within `ms`, or gives 'hang'. */
export async function within<T>(work: Promise<T>, ms: number): Promise<T | 'hang'> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'hang'>((resolve) => {
    timer = setTimeout(() => resolve('hang'), ms);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

function typedOutcome(error: unknown, otherCodes: string[]): SessionOutcome | undefined {
  if (CorruptLogError.isInstance(error) || FormatVersionError.isInstance(error)) return 'detected';
  if (PalimpsestError.isInstance(error)) {
    otherCodes.push((error as PalimpsestError).code);
    return 'typed-other';
  }
  return undefined;
}

/**
 * Lists and loads (in full and with chunks elided) every acknowledged session of `store`, and
 * classifies each. `open` failing with a typed error marks every session detected.
 */
export async function inspectCopy(
  open: () => Promise<SessionStore>,
  acknowledged: AcknowledgedText,
): Promise<CopyOutcome> {
  const sessions = new Map<string, SessionOutcome>();
  const otherCodes: string[] = [];
  const notes: string[] = [];
  let store: SessionStore;
  try {
    store = await open();
  } catch (error) {
    const typed = typedOutcome(error, otherCodes);
    if (typed === undefined) notes.push(`untyped error at open: ${String(error)}`);
    for (const id of acknowledged.keys()) sessions.set(id, typed ?? 'untyped');
    return { sessions, otherCodes, notes };
  }
  try {
    const named = new Set<string>();
    let listFailed = false;
    try {
      const page = await store.list({ limit: 1000 });
      for (const summary of page.sessions) named.add(summary.header.id);
      for (const damaged of page.damaged ?? []) if (damaged.id !== undefined) named.add(damaged.id);
    } catch (error) {
      listFailed = true;
      if (typedOutcome(error, otherCodes) === undefined) {
        notes.push(`untyped error from list: ${String(error)}`);
        for (const id of acknowledged.keys()) sessions.set(id, 'untyped');
      }
    }
    for (const [id, expected] of acknowledged) {
      if (sessions.has(id)) continue;
      let worst: SessionOutcome = 'intact';
      for (const elide of [false, true]) {
        const outcome = await loadOutcome(store, id, expected, elide, otherCodes, notes);
        if (rank(outcome) > rank(worst)) worst = outcome;
      }
      if (!listFailed && !named.has(id) && (worst === 'intact' || worst === 'shorter')) {
        notes.push(`${id} is missing from the listing`);
        worst = 'vanished';
      }
      sessions.set(id, worst);
    }
  } finally {
    await store.close().catch(() => {});
  }
  return { sessions, otherCodes, notes };
}

/** Worse outcomes rank higher; a session's outcome is the worst of its loads. */
function rank(outcome: SessionOutcome): number {
  return [
    'intact',
    'torn-tail',
    'detected',
    'typed-other',
    'shorter',
    'vanished',
    'altered',
    'untyped',
    'hang',
  ].indexOf(outcome);
}

async function loadOutcome(
  store: SessionStore,
  id: string,
  acknowledged: AcknowledgedSession,
  elide: boolean,
  otherCodes: string[],
  notes: string[],
): Promise<SessionOutcome> {
  try {
    const loaded = await within(store.load(id, { elideFinishedChunks: elide }), 10_000);
    if (loaded === 'hang') {
      notes.push(`${id}: load did not finish in 10 s`);
      return 'hang';
    }
    const expected = acknowledged.events;
    if (JSON.stringify(loaded.header) !== acknowledged.header) {
      notes.push(`${id}: the header differs from the acknowledged one`);
      return 'altered';
    }
    const events = loaded.events;
    for (let i = 0; i < events.length; i++) {
      const event = events[i];
      const json = JSON.stringify(event);
      // An elided chunk is a stub of the acknowledged one: compare what it keeps.
      const same =
        json === expected[i] ||
        (elide &&
          event?.type === 'assistant/chunk' &&
          expected[i] !== undefined &&
          sameStub(event, expected[i] as string));
      if (!same) {
        notes.push(`${id}: event ${i} differs from the acknowledged one`);
        return 'altered';
      }
    }
    if (events.length > expected.length) {
      notes.push(`${id}: ${events.length - expected.length} events nobody acknowledged`);
      return 'altered';
    }
    if (events.length === expected.length)
      return loaded.tornTail === undefined ? 'intact' : 'torn-tail';
    return loaded.tornTail === undefined ? 'shorter' : 'torn-tail';
  } catch (error) {
    const typed = typedOutcome(error, otherCodes);
    if (typed !== undefined) return typed;
    notes.push(`${id}: untyped error from load: ${String(error)}`);
    return 'untyped';
  }
}

function sameStub(stub: { seq: number; time: number }, acknowledged: string): boolean {
  const full = JSON.parse(acknowledged) as { seq: number; time: number };
  return stub.seq === full.seq && stub.time === full.time;
}
