/**
 * Row edits on PostgreSQL (the corruption category of a database the store does not own the
 * files of): a pristine store of a real server is written once (six agent sessions, many
 * batches, chunk runs, compactions), and each trial makes one random edit of its rows with SQL
 * (lib/row-edits.ts: a value changed, a bit of a run flipped, seqs swapped, a row moved,
 * deleted or copied, a checksum changed), then reads every session by every path that reads
 * rows: the listing, a full load, a fast load, a salvaging load, a follower's tail read and the
 * summary. The store is restored from a copy after each trial.
 *
 * The promise: a session whose rows the edit touched is a typed error on every load path (a
 * salvaging load reports the damage, and gives only acknowledged events before it), and is
 * listed as damaged when its session row was touched; every other session comes back exactly
 * as acknowledged. A load that returns a touched session without an error is silent. The
 * summary reads only the rows of the types it counts: it is judged typed or exact, and an
 * edit it cannot see (a row's type changed away from those types, a row deleted) is counted
 * apart, as documented.
 *
 * The harness is shown to catch a loader that skips the row checksums, and a store that
 * silently changes a stored value.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PalimpsestError, type SessionEvent } from '../../src/core/index.js';
import type { SessionStats } from '../../src/store/contract/session-store.js';
import { CorruptLogError, LoadedSession, type SessionStore } from '../../src/store/index.js';
import { openPostgresStore } from '../../src/store/postgres/index.js';
import { type PgRunRow, RUN_COLUMNS, toRunRow } from '../../src/store/postgres/rows.js';
import { decodeEventColumns } from '../../src/store/sql/event-columns.js';
import { type PostgresServer, postgresBinaries, startPostgres } from '../postgres/server.js';
import { type AcknowledgedSession, recordAcknowledged, within } from './lib/damage.js';
import { mutantStore, override, uncheckedRunChunks } from './lib/mutants.js';
import { add, count, expectClean, fail, recordMutant, type Tally, tally } from './lib/results.js';
import { editRow, type RowEdit, type StoreRows, storeRows } from './lib/row-edits.js';
import { random } from './lib/workload.js';

const TRIALS = count(Number(process.env.PALIMPSEST_ROW_EDIT_TRIALS ?? 600));
const SESSIONS = 6;
const SCHEMA = 'edits';
const TABLES = ['sessions', 'events', 'chunk_runs'] as const;
const available = postgresBinaries() !== undefined || process.env.PALIMPSEST_REQUIRE_PG === '1';

/** What one path gave for one session. */
type PathOutcome = 'typed' | 'intact' | 'silent' | 'untyped' | 'hang';

/** The acknowledged state of the pristine store. */
interface Pristine {
  readonly sessions: ReadonlyMap<string, AcknowledgedSession>;
  readonly stats: ReadonlyMap<string, string>;
  readonly rows: StoreRows;
}

function classify(error: unknown): PathOutcome {
  return PalimpsestError.isInstance(error) ? 'typed' : 'untyped';
}

function same(events: readonly SessionEvent[], acknowledged: AcknowledgedSession): boolean {
  return (
    events.length === acknowledged.events.length &&
    events.every((event, i) => JSON.stringify(event) === acknowledged.events[i])
  );
}

/** A fast load's events against the acknowledged ones: a finished chunk as its stub. */
function sameOrStub(events: readonly SessionEvent[], acknowledged: AcknowledgedSession): boolean {
  return (
    events.length === acknowledged.events.length &&
    events.every((event, i) => {
      const json = acknowledged.events[i] as string;
      if (JSON.stringify(event) === json) return true;
      const full = JSON.parse(json) as SessionEvent;
      return (
        event.type === 'assistant/chunk' &&
        full.type === 'assistant/chunk' &&
        event.seq === full.seq &&
        event.time === full.time
      );
    })
  );
}

/** Runs `read`, bounded; a typed error, or the judge's verdict on what it returned. */
async function path<T>(read: () => Promise<T>, judge: (value: T) => boolean): Promise<PathOutcome> {
  try {
    const value = await within(read(), 10_000);
    if (value === 'hang') return 'hang';
    return judge(value) ? 'intact' : 'silent';
  } catch (error) {
    return classify(error);
  }
}

/** A follower of `id` from seq 0 until it has the acknowledged length. */
async function follow(store: SessionStore, id: string, length: number): Promise<SessionEvent[]> {
  const stop = new AbortController();
  const seen: SessionEvent[] = [];
  const timer = setTimeout(() => stop.abort(), 10_000);
  try {
    for await (const event of store.watch(id, { signal: stop.signal })) {
      seen.push(event);
      if (seen.length >= length) stop.abort();
    }
  } finally {
    clearTimeout(timer);
  }
  return seen;
}

/** Every path's outcome for session `id`. */
async function readSession(
  store: SessionStore,
  id: string,
  acknowledged: AcknowledgedSession,
  stats: string,
): Promise<Record<string, PathOutcome>> {
  const header = (value: { header: unknown }) =>
    JSON.stringify(value.header) === acknowledged.header;
  return {
    'full load': await path(
      () => store.load(id),
      (loaded) => header(loaded) && same(loaded.events, acknowledged),
    ),
    'fast load': await path(
      () => store.load(id, { elideFinishedChunks: true }),
      (loaded) => header(loaded) && sameOrStub(loaded.events, acknowledged),
    ),
    // A salvaging load that reports damage has detected it: what it gives must be acknowledged.
    salvage: await path(
      async () => {
        const loaded = await store.load(id, { salvage: true });
        if (loaded.damage === undefined) return loaded;
        const prefix = loaded.events.every(
          (event, i) => JSON.stringify(event) === acknowledged.events[i],
        );
        if (!prefix) return loaded;
        throw loaded.damage;
      },
      (loaded) =>
        header(loaded) && loaded.damage === undefined && same(loaded.events, acknowledged),
    ),
    watch: await path(
      () => follow(store, id, acknowledged.events.length),
      (events) => same(events, acknowledged),
    ),
    summarize: await path(
      () => store.summarize(id),
      (summary: SessionStats) => JSON.stringify(summary) === stats,
    ),
  };
}

/** One trial's reads of every session, judged and added to `t`. */
async function judgeTrial(
  t: Tally,
  store: SessionStore,
  pristine: Pristine,
  edit: RowEdit,
): Promise<void> {
  const page = await store.list({ limit: 1000 }).catch((error: unknown) => error);
  if (!Array.isArray((page as { sessions?: unknown }).sessions)) {
    fail(t, classify(page) === 'typed' ? 'lost' : 'untyped', `list failed: ${String(page)}`);
    return;
  }
  const { sessions: listed, damaged = [] } = page as Awaited<ReturnType<SessionStore['list']>>;
  const listedIds = new Set(listed.map((summary) => summary.header.id));
  const damagedIds = new Set(damaged.map((entry) => entry.id));
  let detected = false;
  for (const [id, acknowledged] of pristine.sessions) {
    const touched = edit.touched.includes(id);
    const outcomes = await readSession(store, id, acknowledged, pristine.stats.get(id) as string);
    t.acked += acknowledged.events.length;
    for (const [name, outcome] of Object.entries(outcomes)) {
      if (outcome === 'untyped') fail(t, 'untyped', `${edit.kind}: ${id}: ${name}`);
      else if (outcome === 'hang') fail(t, 'hangs', `${edit.kind}: ${id}: ${name}`);
      else if (outcome === 'silent' && name !== 'summarize') {
        add(t, 'silent loads');
        fail(
          t,
          'altered',
          `${edit.kind}: ${id}: ${name} gave a different session without an error`,
        );
      } else if (touched && name !== 'summarize') {
        add(
          t,
          `${name}: ${outcome === 'typed' ? 'typed' : 'read the edited session whole (undetected)'}`,
        );
      } else if (touched) {
        add(
          t,
          `summarize: ${outcome === 'silent' ? 'other stats (an edit of a row it does not read)' : outcome}`,
        );
      } else if (outcome !== 'intact') {
        fail(
          t,
          outcome === 'typed' ? 'lost' : 'altered',
          `${edit.kind}: untouched ${id}: ${name} ${outcome}`,
        );
      }
    }
    if (touched && outcomes['full load'] === 'typed') {
      t.detected++;
      detected = true;
    }
    const named = listedIds.has(id) || damagedIds.has(id);
    if (!touched && !listedIds.has(id)) fail(t, 'lost', `${edit.kind}: untouched ${id} not listed`);
    if (touched && edit.kind.startsWith('session')) {
      const shown =
        edit.renamedTo === undefined ? damagedIds.has(id) : damagedIds.has(edit.renamedTo);
      add(t, `list: ${shown ? 'named as damaged' : 'listed as it was (undetected)'}`);
    } else if (touched && !named) {
      fail(t, 'lost', `${edit.kind}: ${id} vanished from the listing`);
    }
  }
  add(t, detected ? 'trials typed' : 'trials not typed');
}

/** A loader that reads the rows as they are: no row checksum, no run checksum, no length. */
function uncheckedLoad(client: pg.Client) {
  return async (id: string): Promise<LoadedSession> => {
    const s = `"${SCHEMA}"`;
    const session = await client.query<{ key: string; header: string }>(
      `SELECT key, header FROM ${s}.sessions WHERE id = $1`,
      [id],
    );
    const row = session.rows[0];
    if (row === undefined) throw new CorruptLogError({ file: SCHEMA, reason: 'no session' });
    const events = (
      await client.query<{
        seq: string;
        type: string;
        time: string;
        data: string;
        source_event_seqs: string | null;
        surface_op: string | null;
      }>(`SELECT * FROM ${s}.events WHERE session_key = $1 ORDER BY seq`, [row.key])
    ).rows.map((event) =>
      decodeEventColumns(
        { file: SCHEMA, id },
        Number(event.seq),
        event.type,
        Number(event.time),
        event,
      ),
    );
    const runs = await client.query<PgRunRow>(
      `SELECT ${RUN_COLUMNS} FROM ${s}.chunk_runs WHERE session_key = $1`,
      [row.key],
    );
    for (const run of runs.rows) events.push(...uncheckedRunChunks(toRunRow(run)));
    events.sort((a, b) => a.seq - b.seq);
    return LoadedSession.fromEvents(JSON.parse(row.header), events);
  };
}

(available ? describe : describe.skip)('corruption: postgres (row edits by SQL)', () => {
  let server: PostgresServer;
  let client: pg.Client;
  let pristine: Pristine;
  const s = `"${SCHEMA}"`;

  beforeAll(async () => {
    server = await startPostgres();
    const store = await openPostgresStore({ connectionString: server.url, schema: SCHEMA });
    const stats = new Map<string, string>();
    let sessions: Map<string, AcknowledgedSession>;
    try {
      sessions = await recordAcknowledged(store, 'edit', SESSIONS);
      for (const id of sessions.keys()) stats.set(id, JSON.stringify(await store.summarize(id)));
    } finally {
      await store.close();
    }
    client = new pg.Client({ connectionString: server.url });
    await client.connect();
    await client.query('CREATE SCHEMA pristine');
    for (const table of TABLES) {
      await client.query(`CREATE TABLE pristine.${table} AS TABLE ${s}.${table}`);
    }
    await client.query(`DELETE FROM ${s}.leases`);
    pristine = { sessions, stats, rows: await storeRows(client, s) };
  });

  afterAll(async () => {
    await client?.end();
    server?.stop();
  });

  async function restore(): Promise<void> {
    await client.query(
      `TRUNCATE ${TABLES.map((table) => `${s}.${table}`).join(', ')};
       ${TABLES.map((table) => `INSERT INTO ${s}.${table} SELECT * FROM pristine.${table};`).join('\n')}`,
    );
  }

  /** Runs `trials` edits, each read through `open` (the store, or a mutant of it). */
  async function campaign(
    trials: number,
    seed: number,
    open: () => Promise<SessionStore>,
  ): Promise<Tally> {
    const t = tally('corruption', 'postgres');
    // Shown in the report even when it stays 0, which is the promise.
    add(t, 'silent loads', 0);
    const next = random(seed);
    for (let n = 0; n < trials; n++) {
      const edit = await editRow(client, s, pristine.rows, next);
      t.runs++;
      if (edit === 'refused') {
        add(t, 'edits the server refused (a key taken)');
        continue;
      }
      t.faults++;
      add(t, `edit: ${edit.kind}`);
      const store = await open();
      try {
        await judgeTrial(t, store, pristine, edit);
      } finally {
        await store.close();
        await restore();
      }
    }
    return t;
  }

  const openStore = () =>
    openPostgresStore({
      connectionString: server.url,
      schema: SCHEMA,
      readOnly: true,
      maxConnections: 2,
    });

  it(`reports every one of ${TRIALS} random SQL edits of rows as a typed error, and loads no edited session silently`, async () => {
    const started = Date.now();
    const t = await campaign(TRIALS, 0x5eed, openStore);
    add(t, 'seconds', Math.round((Date.now() - started) / 1000));
    console.log(`corruption postgres (row edits): ${JSON.stringify(t)}`);
    expectClean(t);
    expect(t.figures['silent loads'] ?? 0).toBe(0);
    const undetected = Object.entries(t.figures).filter(([name]) => name.endsWith('(undetected)'));
    expect(undetected).toEqual([]);
    expect(t.faults).toBeGreaterThan(TRIALS / 2);
  });

  const mutants: [string, (store: SessionStore) => SessionStore][] = [
    [
      'a loader that skips the row checksums',
      (store) => override(store, { load: uncheckedLoad(client) }),
    ],
    [
      'a store that silently changes a stored value',
      (store) => mutantStore(store, 'alter-last-event'),
    ],
  ];
  for (const [what, mutate] of mutants) {
    it(`catches ${what}`, async () => {
      const t = await campaign(40, 0xbad, async () => mutate(await openStore()));
      const caught = t.lost + t.altered > 0;
      recordMutant('corruption', 'postgres', caught);
      expect(caught, JSON.stringify(t.figures)).toBe(true);
    });
  }

  it('restores the pristine store between trials', async () => {
    const store = await openStore();
    try {
      for (const [id, acknowledged] of pristine.sessions) {
        expect((await store.load(id)).events.map((event) => JSON.stringify(event))).toEqual(
          acknowledged.events,
        );
      }
    } finally {
      await store.close();
    }
  });
});
