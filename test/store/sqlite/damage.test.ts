/**
 * Media damage to real SQLite files: flipped bytes in the database and in a live WAL, a WAL cut
 * short, WAL frames zeroed. Every case must give each session's exact acknowledged events, or a
 * typed `CorruptLogError` (a typed refusal at open counts too): never altered content, never a
 * shorter session or a vanished one without an error. Seeded, so a failure is reproducible.
 */
import { copyFileSync, existsSync, readFileSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PalimpsestError, type SessionEvent } from '../../../src/core/index.js';
import { CorruptLogError } from '../../../src/store/index.js';
import { openSqliteStore } from '../../../src/store/sqlite/index.js';
import { LEDGER_SUFFIX } from '../../../src/store/sqlite/ledger.js';
import { random } from '../../reliability/lib/workload.js';
import { events, header, useTempDir } from './helpers.js';

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
 * Opens a damaged copy read-only and checks every acknowledged session: its exact events, or a
 * typed error. Throws on a silent loss or alteration, or an untyped error.
 */
async function check(file: string, acknowledged: Acknowledged, what: string): Promise<Outcome> {
  let store: Awaited<ReturnType<typeof openSqliteStore>>;
  try {
    store = await openSqliteStore(file, { readOnly: true });
  } catch (error) {
    if (PalimpsestError.isInstance(error)) return 'detected';
    throw new Error(`${what}: untyped error at open: ${String(error)}`);
  }
  let detected = false;
  try {
    const listed = new Set<string>();
    try {
      const page = await store.list();
      for (const summary of page.sessions) {
        listed.add(summary.header.id);
        const expected = acknowledged.get(summary.header.id);
        if (expected !== undefined && summary.eventCount !== expected.length) {
          throw new Error(`${what}: ${summary.header.id} listed with ${summary.eventCount} events`);
        }
      }
      for (const damaged of page.damaged ?? []) {
        if (damaged.id !== undefined) listed.add(damaged.id);
        detected = true;
      }
      for (const id of acknowledged.keys()) {
        if (!listed.has(id) && (page.damaged ?? []).length === 0) {
          throw new Error(`${what}: ${id} vanished from the listing without a damaged entry`);
        }
      }
    } catch (error) {
      if (!CorruptLogError.isInstance(error)) throw error;
      detected = true;
    }
    for (const [id, expected] of acknowledged) {
      for (const elide of [false, true]) {
        try {
          const loaded = await store.load(id, { elideFinishedChunks: elide });
          if (JSON.stringify(loaded.events) !== JSON.stringify(expected)) {
            throw new Error(
              `${what}: ${id} loaded ${loaded.events.length} of ${expected.length} events, or altered`,
            );
          }
        } catch (error) {
          if (!CorruptLogError.isInstance(error)) throw error;
          detected = true;
        }
      }
    }
  } finally {
    await store.close();
  }
  return detected ? 'detected' : 'intact';
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

function flip(next: () => number): (bytes: Buffer) => Buffer {
  return (bytes) => {
    const at = Math.floor(next() * bytes.length);
    bytes[at] = (bytes[at] as number) ^ (1 << Math.floor(next() * 8));
    return bytes;
  };
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

  for (const [kind, live, seed] of [
    ['-wal', true, 0x5eed1],
    ['', false, 0x5eed2],
  ] as const) {
    it(`a campaign of 300 seeded byte flips in the ${kind === '' ? 'database' : 'WAL'} finds no silent loss or alteration`, async () => {
      const { dir, acknowledged } = await pristine(live);
      const next = random(seed);
      const tally = { intact: 0, detected: 0 };
      for (let n = 0; n < 300; n++) {
        const file = damagedCopy(dir, n, kind, flip(next));
        tally[await check(file, acknowledged, `${kind || 'db'} flip ${n} (seed ${seed})`)]++;
      }
      expect(tally.intact + tally.detected).toBe(300);
      expect(tally.detected).toBeGreaterThan(0);
    }, 60_000);
  }
});
