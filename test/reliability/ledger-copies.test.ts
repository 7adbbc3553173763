/**
 * Ledger-less or mismatched copies (SQLite only: the other backends keep no ledger). A store is
 * written over several generations (each one open of a writer: sessions created and grown by a
 * random number of commits), and its database and ledger are kept after each. Every trial puts a
 * database beside a ledger it does not pair with, the way a backup or a copy can:
 *
 * - no ledger at all (a database copied without it);
 * - another store's ledger;
 * - an older copy of its own ledger (a generation before the database's);
 * - a newer copy of its own ledger beside an older database (a database restored from a backup);
 *
 * and opens it read-only, then for writing. The promise: no session the ledger beside it cannot
 * vouch for is listed or loads without a typed error ("silent", counted as lost, must be 0); a
 * writable open never makes or changes a ledger to fit the database; a writer cannot re-vouch a
 * stale session by appending to it; and a session that should load is never refused ("false
 * alarms", must be 0). Allowed, and counted apart: a session one write transaction ahead of an
 * older ledger (what a crash between a commit and its ledger record leaves), or two made back to
 * back in one open (what a power cut can leave while the ledger's background fsync runs), loads
 * as it is.
 *
 * The harness catches an open that adopts the database whenever its ledger does not pair up:
 * the silent rebuild the pairing exists to prevent.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PalimpsestError, type SessionEvent } from '../../src/core/index.js';
import { LedgerError, type SessionStore } from '../../src/store/index.js';
import { adoptSqliteLedger, openSqliteStore } from '../../src/store/sqlite/index.js';
import { event } from '../core/builders.js';
import {
  add,
  count,
  expectClean,
  fail,
  recordMutant,
  type Tally,
  tally,
  useScratch,
} from './lib/results.js';
import { random } from './lib/workload.js';

const TRIALS = count(Number(process.env.PALIMPSEST_LEDGER_COPY_TRIALS ?? 400));
const GENERATIONS = 8;
const SESSIONS = 6;

const scratch = useScratch();

/** What a session held after a generation. */
interface SessionState {
  /** Its events, as JSON. */
  readonly events: readonly string[];
  /** The generation of each write transaction that made it, its create first. */
  readonly writes: readonly number[];
}

/** One generation of a store: its closed files' bytes and what each session held. */
interface Generation {
  readonly database: Buffer;
  readonly ledger: Buffer;
  readonly sessions: ReadonlyMap<string, SessionState>;
}

const note = (seq: number, session: string): SessionEvent =>
  event(
    seq,
    'app/note',
    { session, seq, text: `event ${seq} of ${session}` },
    { time: 1_000 + seq },
  );

/** Writes `GENERATIONS` generations of a store at `file`; returns a copy of each. */
async function writeHistory(file: string, seed: number): Promise<Generation[]> {
  const next = random(seed);
  const state = new Map<string, { events: string[]; writes: number[] }>();
  const generations: Generation[] = [];
  for (let g = 0; g < GENERATIONS; g++) {
    const store = await openSqliteStore(file);
    for (let s = 0; s < SESSIONS; s++) {
      const id = `s${s}`;
      let session = state.get(id);
      // Sessions appear over the generations; each grows by 0 to 3 commits per generation.
      if (session === undefined) {
        if (next() < 0.5) continue;
        await store.create({ version: 1, id, createdAt: 1 + s });
        session = { events: [], writes: [g] };
        state.set(id, session);
      }
      for (let commits = Math.floor(next() * 4); commits > 0; commits--) {
        const from = session.events.length;
        const batch = Array.from({ length: 1 + Math.floor(next() * 4) }, (_, i) =>
          note(from + i, id),
        );
        await store.append(id, batch, { expectedSeq: from });
        session.events.push(...batch.map((event) => JSON.stringify(event)));
        session.writes.push(g);
      }
    }
    await store.close();
    generations.push({
      database: readFileSync(file),
      ledger: readFileSync(`${file}-lengths`),
      sessions: new Map(
        [...state].map(([id, session]) => [
          id,
          { events: [...session.events], writes: [...session.writes] },
        ]),
      ),
    });
  }
  return generations;
}

const KINDS = [
  'no ledger',
  'another store’s ledger',
  'an older ledger',
  'an older database',
] as const;
type Kind = (typeof KINDS)[number];

/** What a session must give: a typed error, its events, or either (the one-commit slack). */
type Expectation = 'typed' | 'loads' | 'either';

interface Copy {
  readonly file: string;
  readonly kind: Kind;
  /** The generation the database is of: what each session holds. */
  readonly database: Generation;
  readonly expected: ReadonlyMap<string, Expectation>;
}

/** Places one mismatched copy in `dir`. */
function placeCopy(
  dir: string,
  kind: Kind,
  own: readonly Generation[],
  other: readonly Generation[],
  next: () => number,
): Copy {
  const file = join(dir, 'sessions.db');
  const newer = 1 + Math.floor(next() * (GENERATIONS - 1));
  const older = Math.floor(next() * newer);
  const at = (generation: number) => own[generation] as Generation;
  const database = kind === 'an older database' ? at(older) : at(newer);
  writeFileSync(file, database.database);
  if (kind === 'another store’s ledger') {
    writeFileSync(
      `${file}-lengths`,
      (other[Math.floor(next() * GENERATIONS)] as Generation).ledger,
    );
  } else if (kind !== 'no ledger') {
    writeFileSync(`${file}-lengths`, at(kind === 'an older ledger' ? older : newer).ledger);
  }
  const expected = new Map<string, Expectation>();
  for (const [id, session] of database.sessions) {
    if (kind === 'no ledger' || kind === 'another store’s ledger') {
      expected.set(id, 'typed');
    } else if (kind === 'an older ledger') {
      const seen = at(older).sessions.get(id)?.writes.length ?? 0;
      expected.set(id, staleness(session.writes.slice(seen)));
    } else {
      const later = at(newer).sessions.get(id);
      expected.set(
        id,
        later !== undefined && later.events.length > session.events.length ? 'typed' : 'loads',
      );
    }
  }
  if (kind === 'an older database') {
    // Created after the database's copy: the ledger knows them, the database lost them.
    for (const id of at(newer).sessions.keys()) {
      if (!database.sessions.has(id)) expected.set(id, 'typed');
    }
  }
  return { file, kind, database, expected };
}

/**
 * What a session must give beside a ledger that has not seen `unseen` of its writes (their
 * generations). A row vouches for the write before its last, or for the last one before that
 * when both came in one open, back to back (docs/durability.md, "A ledger older than the
 * database"): three unseen writes, or two in different opens, are a stale ledger; one is what a
 * crash leaves; two in one open are either.
 */
function staleness(unseen: readonly number[]): Expectation {
  if (unseen.length === 0) return 'loads';
  if (unseen.length >= 3) return 'typed';
  return unseen.length === 2 && unseen[0] !== unseen[1] ? 'typed' : 'either';
}

type Open = (file: string, readOnly: boolean) => Promise<SessionStore>;

/** Opens `copy` (read-only or not), lists and loads every session, and judges each. */
async function inspect(t: Tally, copy: Copy, readOnly: boolean, open: Open): Promise<void> {
  const where = `${copy.kind} (${readOnly ? 'read-only' : 'writable'})`;
  let store: SessionStore;
  try {
    store = await open(copy.file, readOnly);
  } catch (error) {
    if (!PalimpsestError.isInstance(error)) {
      fail(t, 'untyped', `${where}: open: ${String(error)}`);
      return;
    }
    add(t, `open refused: ${error.code}`);
    for (const expectation of copy.expected.values()) {
      if (expectation === 'loads') add(t, 'false alarms');
      else t.detected++;
    }
    return;
  }
  try {
    const page = await store.list({ limit: 1000 });
    const listed = new Set(page.sessions.map((summary) => summary.header.id));
    const damaged = new Set((page.damaged ?? []).map((entry) => entry.id));
    for (const [id, expectation] of copy.expected) {
      if (expectation === 'typed' && listed.has(id)) {
        fail(t, 'lost', `${where}: ${id} listed as intact`);
      }
      if (expectation === 'typed' && !listed.has(id) && !damaged.has(id)) {
        fail(t, 'lost', `${where}: ${id} neither listed nor listed as damaged`);
      }
      await loadOne(t, store, copy, id, expectation, where);
      if (!readOnly && copy.kind === 'an older ledger' && expectation === 'typed') {
        await appendOne(t, store, copy, id, where);
      }
    }
  } finally {
    await store.close().catch(() => {});
  }
}

async function loadOne(
  t: Tally,
  store: SessionStore,
  copy: Copy,
  id: string,
  expectation: Expectation,
  where: string,
): Promise<void> {
  const held = copy.database.sessions.get(id)?.events ?? [];
  try {
    const loaded = await store.load(id);
    t.acked += held.length;
    const json = loaded.events.map((event) => JSON.stringify(event));
    if (json.length !== held.length || json.some((event, i) => event !== held[i])) {
      fail(t, 'altered', `${where}: ${id} loaded other events than the database holds`);
    }
    if (expectation === 'typed') fail(t, 'lost', `${where}: ${id} loaded silently`);
    else add(t, expectation === 'either' ? 'loads within the slack' : 'sessions intact');
  } catch (error) {
    if (!PalimpsestError.isInstance(error)) {
      fail(t, 'untyped', `${where}: ${id}: ${String(error)}`);
    } else if (expectation === 'loads') {
      add(t, 'false alarms');
    } else {
      t.detected++;
      add(t, `typed: ${error.code}`);
    }
  }
}

/** An append to a stale session must be refused: it would vouch for it anew. */
async function appendOne(
  t: Tally,
  store: SessionStore,
  copy: Copy,
  id: string,
  where: string,
): Promise<void> {
  const seq = copy.database.sessions.get(id)?.events.length ?? 0;
  try {
    await store.append(id, [note(seq, id)], { expectedSeq: seq });
    fail(t, 'lost', `${where}: an append to ${id} was accepted`);
  } catch (error) {
    if (LedgerError.isInstance(error)) add(t, 'appends to a stale session refused');
    else fail(t, 'untyped', `${where}: append to ${id}: ${String(error)}`);
  }
}

/** Runs `trials` trials through `open`; returns the tally. */
async function campaign(
  own: readonly Generation[],
  other: readonly Generation[],
  trials: number,
  seed: number,
  open: Open,
): Promise<Tally> {
  const t = tally('ledger-copies', 'sqlite');
  const root = scratch('ledger-copies');
  const next = random(seed);
  for (let n = 0; n < trials; n++) {
    const kind = KINDS[n % KINDS.length] as Kind;
    const dir = join(root, `trial-${n}`);
    mkdirSync(dir);
    const copy = placeCopy(dir, kind, own, other, next);
    const ledger = `${copy.file}-lengths`;
    const before = existsSync(ledger) ? readFileSync(ledger) : undefined;
    t.runs++;
    t.faults++;
    add(t, `trials: ${kind}`);
    await inspect(t, copy, true, open);
    await inspect(t, copy, false, open);
    if (kind === 'no ledger' || kind === 'another store’s ledger') {
      const after = existsSync(ledger) ? readFileSync(ledger) : undefined;
      if (
        after === undefined ? before !== undefined : before === undefined || !after.equals(before)
      ) {
        fail(t, 'lost', `${kind}: a writable open made or changed the ledger`);
      }
    }
    rmSync(dir, { recursive: true, force: true });
  }
  return t;
}

describe('ledger-less or mismatched copies: sqlite', () => {
  let own: Generation[];
  let other: Generation[];
  const ready = (async () => {
    own = await writeHistory(join(scratch('ledger-history'), 'sessions.db'), 1);
    other = await writeHistory(join(scratch('ledger-other'), 'sessions.db'), 2);
  })();

  it(`lets no session its ledger cannot vouch for load silently, in ${TRIALS} copies`, async () => {
    await ready;
    const started = Date.now();
    const t = await campaign(own, other, TRIALS, 0x1ed9e, (file, readOnly) =>
      openSqliteStore(file, { readOnly }),
    );
    add(t, 'seconds', Math.round((Date.now() - started) / 1000));
    add(t, 'silent loads', t.lost);
    console.log(`ledger copies sqlite: ${JSON.stringify(t)}`);
    expectClean(t);
    expect(t.runs).toBe(TRIALS);
    expect(t.figures['false alarms'] ?? 0).toBe(0);
    expect(t.detected).toBeGreaterThan(TRIALS);
    for (const kind of KINDS) expect(t.figures[`trials: ${kind}`]).toBeGreaterThan(0);
  });

  it('catches an open that adopts the database whenever its ledger does not pair up', async () => {
    await ready;
    const t = await campaign(own, other, 40, 0xbad, async (file, readOnly) => {
      try {
        return await openSqliteStore(file, { readOnly });
      } catch (error) {
        if (!LedgerError.isInstance(error)) throw error;
        await adoptSqliteLedger(file);
        return openSqliteStore(file, { readOnly });
      }
    });
    const caught = t.lost > 0;
    recordMutant('ledger-copies', 'sqlite', caught);
    expect(caught, JSON.stringify(t.figures)).toBe(true);
  });
});
