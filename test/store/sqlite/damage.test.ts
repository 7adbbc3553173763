/**
 * Media damage to real SQLite files, the deterministic cases: a WAL cut short, WAL frames
 * zeroed, a vanished session. Every case must give each session's exact acknowledged events, or
 * a typed `CorruptLogError` (a typed refusal at open counts too): never altered content, never a
 * shorter session or a vanished one without an error. The random campaigns (flips, bursts, cuts
 * in the database, the WAL and the ledger) are the reliability suite's corruption harness.
 */
import { copyFileSync, existsSync, readFileSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { SessionEvent } from '../../../src/core/index.js';
import { CorruptLogError } from '../../../src/store/index.js';
import { openSqliteStore } from '../../../src/store/sqlite/index.js';
import { LEDGER_SUFFIX } from '../../../src/store/sqlite/ledger.js';
import { inspectCopy } from '../../reliability/lib/damage.js';
import { events, header, useTempDir, withRaw } from './helpers.js';

const tempDir = useTempDir();

const SESSIONS = 6;
const BATCHES = 4;
const BATCH = 5;

/** What the writer was told is durable: per session id, its events. */
type Acknowledged = Map<string, SessionEvent[]>;

/**
 * Writes sessions in interleaved batches and copies the database, its WAL and its ledger while
 * the writer still holds them (`live`), or after it closed and checkpointed (not `live`).
 */
async function pristine(live: boolean): Promise<{ dir: string; acknowledged: Acknowledged }> {
  const dir = tempDir();
  const file = join(dir, 'live.db');
  const store = await openSqliteStore(file);
  const acknowledged: Acknowledged = new Map();
  for (let s = 0; s < SESSIONS; s++) {
    await store.create(header(`session-${s}`, 1000 + s));
    acknowledged.set(`session-${s}`, []);
  }
  for (let b = 0; b < BATCHES; b++) {
    for (let s = 0; s < SESSIONS; s++) {
      const id = `session-${s}`;
      const batch = events(b * BATCH, BATCH).map((event) =>
        event.type === 'app/note'
          ? { ...event, data: { n: event.seq, note: `${id} batch ${b}` } }
          : event,
      ) as SessionEvent[];
      await store.append(id, batch, { expectedSeq: b * BATCH });
      acknowledged.get(id)?.push(...batch);
    }
  }
  if (!live) await store.close();
  for (const suffix of ['', '-wal', LEDGER_SUFFIX]) {
    if (existsSync(`${file}${suffix}`))
      copyFileSync(`${file}${suffix}`, join(dir, `pristine.db${suffix}`));
  }
  if (live) {
    expect(existsSync(`${file}-wal`)).toBe(true);
    await store.close();
  }
  return { dir, acknowledged };
}

type Outcome = 'intact' | 'detected';

/**
 * Opens a damaged copy read-only and checks every acknowledged session with the reliability
 * suite's damage oracle: its exact events, or a typed error. Throws on a silent loss or
 * alteration, a vanished session, or an untyped error.
 */
async function check(file: string, acknowledged: Acknowledged, what: string): Promise<Outcome> {
  const text = new Map(
    [...acknowledged].map(([id, events]) => [
      id,
      {
        header: JSON.stringify(header(id, 1000 + Number(id.slice('session-'.length)))),
        events: events.map((event) => JSON.stringify(event)),
      },
    ]),
  );
  const outcome = await inspectCopy(() => openSqliteStore(file, { readOnly: true }), text);
  const results = [...outcome.sessions.values()];
  const broken = results.filter(
    (result) => !['intact', 'detected', 'typed-other'].includes(result),
  );
  if (broken.length > 0)
    throw new Error(`${what}: ${broken.join(', ')}: ${outcome.notes.join('; ')}`);
  return results.every((result) => result === 'intact') ? 'intact' : 'detected';
}

/** A damaged copy of the pristine files, made by `damage` on the bytes of one of them. */
function damagedCopy(
  dir: string,
  n: number,
  kind: '' | '-wal',
  damage: (bytes: Buffer) => Buffer,
): string {
  const file = join(dir, `case-${n}.db`);
  for (const suffix of ['', '-wal', LEDGER_SUFFIX]) {
    const source = join(dir, `pristine.db${suffix}`);
    if (existsSync(source)) copyFileSync(source, `${file}${suffix}`);
  }
  const target = `${file}${kind}`;
  writeFileSync(target, damage(readFileSync(target)));
  return file;
}

describe('SQLite media damage is detected, never silent', () => {
  it('a WAL cut short loses no acknowledged event silently', async () => {
    const { dir, acknowledged } = await pristine(true);
    const size = readFileSync(join(dir, 'pristine.db-wal')).length;
    const outcomes: Outcome[] = [];
    for (const [n, keep] of [0.9, 0.6, 0.3, 0.05].entries()) {
      const file = damagedCopy(dir, n, '', (bytes) => bytes);
      truncateSync(`${file}-wal`, Math.floor(size * keep));
      outcomes.push(await check(file, acknowledged, `WAL cut to ${keep}`));
    }
    expect(outcomes).toEqual(['detected', 'detected', 'detected', 'detected']);
  });

  it('zeroed WAL frames (sessions whose frames are gone) are a CorruptLogError', async () => {
    const { dir, acknowledged } = await pristine(true);
    const frame = 24 + 8192;
    const frames = Math.floor((readFileSync(join(dir, 'pristine.db-wal')).length - 32) / frame);
    for (const index of [1, Math.floor(frames / 2), frames - 1]) {
      const file = damagedCopy(dir, index, '-wal', (bytes) => {
        bytes.fill(0, 32 + index * frame, 32 + (index + 1) * frame);
        return bytes;
      });
      expect(await check(file, acknowledged, `frame ${index} zeroed`)).toBe('detected');
    }
  });

  it('a vanished session stays listed as damaged', async () => {
    const { dir, acknowledged } = await pristine(true);
    const file = damagedCopy(dir, 0, '', (bytes) => bytes);
    truncateSync(`${file}-wal`, 0);
    const store = await openSqliteStore(file, { readOnly: true });
    try {
      const page = await store.list();
      const named = new Set([
        ...page.sessions.map((summary) => summary.header.id),
        ...(page.damaged ?? []).map((damaged) => damaged.id),
      ]);
      for (const id of acknowledged.keys()) expect(named.has(id)).toBe(true);
      expect(page.damaged?.length).toBeGreaterThan(0);
      expect(await store.load('session-0').catch((error: unknown) => error)).toBeInstanceOf(
        CorruptLogError,
      );
    } finally {
      await store.close();
    }
  });

  it('a zeroed index page leaves every session listed and loadable, and names the damage', async () => {
    const { dir, acknowledged } = await pristine(false);
    const pristineFile = join(dir, 'pristine.db');
    const { pageSize, rootpage } = await withRaw(pristineFile, (db) => ({
      pageSize: db.pragma('page_size', { simple: true }) as number,
      ...(db
        .prepare("SELECT rootpage FROM sqlite_master WHERE name = 'sessions_by_created'")
        .get() as { rootpage: number }),
    }));
    const file = damagedCopy(dir, 1, '', (bytes) => {
      bytes.fill(0, (rootpage - 1) * pageSize, rootpage * pageSize);
      return bytes;
    });
    const store = await openSqliteStore(file, { readOnly: true });
    try {
      const page = await store.list();
      expect(page.sessions.map((summary) => summary.header.id)).toEqual(
        [...acknowledged.keys()].reverse(),
      );
      expect(page.damaged).toHaveLength(1);
      expect(page.damaged?.[0]?.id).toBeUndefined();
      expect(page.damaged?.[0]?.error).toBeInstanceOf(CorruptLogError);
      expect(page.damaged?.[0]?.error.message).toContain('index');
      for (const [id, events] of acknowledged) {
        expect((await store.load(id)).events).toEqual(events);
      }
    } finally {
      await store.close();
    }
  });

  // The seeded campaigns of random flips, cuts and zeroed ranges in the database, the WAL and
  // the ledger are the corruption harness of the reliability suite (test/reliability).
});
