/**
 * Corruption (reliability plan T5, media damage): per backend, a pristine store is written once
 * (six agent sessions, many batches), its files are read into memory, and at least 2,000 cases
 * each damage one file of a fresh copy in /dev/shm: a flipped bit, a burst of random bytes, a
 * zeroed range, or a cut. JSONL damages the session logs; SQLite the database, the WAL (of a
 * copy taken while the writer was live) and the ledger sidecar. Each copy is opened read-only,
 * and every fourth also for writing, and every session listed and loaded (lib/damage.ts): each
 * must give its exact acknowledged events or a typed error; never altered content, a shorter or
 * vanished session without an error, an untyped error, a hang, or more than 2 GB of memory.
 *
 * JSONL keeps no length outside the log, so two outcomes are allowed there and counted apart
 * (docs/durability.md): damage inside the last batch, and a log cut or destroyed up to its end
 * (its last commit line gone), read as the prefix before the damage, with a torn tail reported
 * unless the cut fell on a batch boundary.
 *
 * The harness is shown to catch loaders that skip checksum verification, and stores that drop
 * or silently change the last event.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { SessionEvent, SessionHeader } from '../../src/core/index.js';
import { CorruptLogError, LoadedSession, type SessionStore } from '../../src/store/index.js';
import type { RunRow } from '../../src/store/sql/chunk-runs.js';
import { loadDriver } from '../../src/store/sqlite/schema.js';
import { BACKENDS, type BackendUnderTest } from './lib/backends.js';
import {
  type AcknowledgedText,
  inspectCopy,
  recordAcknowledged,
  type SessionOutcome,
} from './lib/damage.js';
import { mutantStore, override, uncheckedRunChunks } from './lib/mutants.js';
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

const CASES = count(Number(process.env.PALIMPSEST_CORRUPTION_CASES ?? 2000));
const SESSIONS = 6;
const MAX_RSS = 2 * 1024 ** 3;

const scratch = useScratch();

/** The files of a pristine store, in memory, and what was acknowledged. */
interface Pristine {
  /** Images of the store's files: file name → bytes. */
  readonly images: readonly ReadonlyMap<string, Buffer>[];
  readonly acknowledged: AcknowledgedText;
  /** JSONL: per log file, the offset where its last batch starts. */
  readonly lastBatch: ReadonlyMap<string, number>;
}

async function writePristine(backend: BackendUnderTest, dir: string): Promise<Pristine> {
  const location = backend.location(dir);
  const store = await backend.open(location);
  const acknowledged = await recordAcknowledged(store, 'damage', SESSIONS);
  const image = (): Map<string, Buffer> =>
    new Map(backend.files(location).map((file) => [basename(file), readFileSync(file)]));
  // SQLite: one image while the writer is live (the data in the WAL), one after it checkpointed.
  const images = [image()];
  await store.close();
  if (backend.name === 'sqlite') images.push(image());
  const lastBatch = new Map<string, number>();
  if (backend.name === 'jsonl') {
    for (const [name, bytes] of images[0] ?? []) lastBatch.set(name, lastBatchStart(bytes));
  }
  return { images, acknowledged, lastBatch };
}

/** Where the last batch of a JSONL log starts: just after its second-to-last commit line. */
function lastBatchStart(bytes: Buffer): number {
  const text = bytes.toString('latin1');
  const commits = [...text.matchAll(/\n\{"commit":[^\n]*\n/g)].map(
    (match) => (match.index ?? 0) + match[0].length,
  );
  return commits.at(-2) ?? text.indexOf('\n') + 1;
}

type DamageKind = 'flip' | 'burst' | 'zero' | 'cut';

interface Damage {
  readonly kind: DamageKind;
  readonly file: string;
  readonly offset: number;
  /** Whether the damage runs to the end of the file (a cut always does). */
  readonly toEnd: boolean;
}

/** Damages a copy of `bytes` in place; returns what was done. */
function damage(
  bytes: Buffer,
  file: string,
  next: () => number,
): { bytes: Buffer; damage: Damage } {
  const roll = next();
  const offset = Math.floor(next() * bytes.length);
  if (roll < 0.5) {
    bytes[offset] = (bytes[offset] as number) ^ (1 << Math.floor(next() * 8));
    return { bytes, damage: { kind: 'flip', file, offset, toEnd: offset === bytes.length - 1 } };
  }
  if (roll < 0.65) {
    const end = Math.min(bytes.length, offset + 2 + Math.floor(next() * 15));
    for (let i = offset; i < end; i++) bytes[i] = Math.floor(next() * 256);
    return { bytes, damage: { kind: 'burst', file, offset, toEnd: end === bytes.length } };
  }
  if (roll < 0.8) {
    const end = Math.min(bytes.length, offset + 1 + Math.floor(next() * 4096));
    bytes.fill(0, offset, end);
    return { bytes, damage: { kind: 'zero', file, offset, toEnd: end === bytes.length } };
  }
  return { bytes: bytes.subarray(0, offset), damage: { kind: 'cut', file, offset, toEnd: true } };
}

/** Which file of an image a case damages: SQLite weighs database, WAL and ledger. */
function target(image: ReadonlyMap<string, Buffer>, next: () => number): string {
  const names = [...image.keys()].filter((name) => (image.get(name)?.length ?? 0) > 0);
  return names[Math.floor(next() * names.length)] as string;
}

/**
 * Judges one session's outcome against the promise, adding to `t`. JSONL's two documented
 * exceptions are allowed only where the damage makes them so: a torn tail when the damage lies
 * in the last batch of that session's own log, a shorter log when that log was cut.
 */
function judge(
  t: Tally,
  backend: BackendUnderTest,
  id: string,
  outcome: SessionOutcome,
  hit: Damage,
  lastBatch: ReadonlyMap<string, number>,
  notes: readonly string[],
): void {
  const own = hit.file === `${id}.jsonl`;
  const where = `${hit.kind} at ${hit.file}:${hit.offset}`;
  const detail = notes.find((note) => note.includes(id)) ?? notes[0] ?? '';
  switch (outcome) {
    case 'intact':
      add(t, 'intact');
      return;
    case 'detected':
    case 'typed-other':
      t.detected++;
      return;
    case 'torn-tail':
      if (backend.name === 'jsonl' && own && hit.offset >= (lastBatch.get(hit.file) ?? 0)) {
        add(t, 'damage in the last batch read as a torn tail (documented)');
        return;
      }
      if (backend.name === 'jsonl' && own && hit.toEnd) {
        add(t, 'log cut or destroyed to its end read as its prefix (documented)');
        return;
      }
      fail(
        t,
        'lost',
        `${id}: ${where} (its last batch starts at ${lastBatch.get(hit.file)}) read as a torn tail`,
      );
      return;
    case 'shorter':
      if (backend.name === 'jsonl' && own && hit.toEnd) {
        add(t, 'log cut or destroyed to its end read as its prefix (documented)');
        return;
      }
      fail(t, 'lost', `${id}: ${where} gave a shorter session without an error`);
      return;
    case 'vanished':
      fail(t, 'lost', `${id}: ${where}: ${detail}`);
      return;
    case 'altered':
      fail(t, 'altered', `${id}: ${where}: ${detail}`);
      return;
    case 'untyped':
      fail(t, 'untyped', `${id}: ${where}: ${detail}`);
      return;
    case 'hang':
      fail(t, 'hangs', `${id}: ${where}`);
      return;
  }
}

/**
 * Runs `cases` damage cases through `open` (the backend, or a mutant of it) and returns the
 * tally. Each case gets a fresh directory; its files are written from the images in memory.
 */
async function campaign(
  backend: BackendUnderTest,
  pristine: Pristine,
  cases: number,
  seed: number,
  open: (location: string, readOnly: boolean) => Promise<SessionStore>,
): Promise<Tally> {
  const t = tally('corruption', backend.name);
  const caseRoot = scratch(`corruption-${backend.name}`);
  const next = random(seed);
  let maxRss = 0;
  for (let n = 0; n < cases; n++) {
    const image = pristine.images[n % pristine.images.length] as ReadonlyMap<string, Buffer>;
    const file = target(image, next);
    const damaged = damage(Buffer.from(image.get(file) as Buffer), file, next);
    const dir = join(caseRoot, `case-${n}`);
    mkdirSync(dir);
    const location = backend.location(dir);
    if (backend.name === 'jsonl') mkdirSync(location);
    const base = backend.name === 'jsonl' ? location : dir;
    for (const [name, bytes] of image) {
      writeFileSync(join(base, name), name === file ? damaged.bytes : bytes);
    }
    const readOnly = n % 4 !== 3;
    const outcome = await inspectCopy(() => open(location, readOnly), pristine.acknowledged);
    t.runs++;
    t.faults++;
    add(t, `damage: ${damaged.damage.kind}`);
    add(t, `damaged file: ${file.replace(/^damage-\d+/, '<session>')}`);
    for (const code of outcome.otherCodes) add(t, `typed error ${code}`);
    for (const [id, result] of outcome.sessions) {
      t.acked += pristine.acknowledged.get(id)?.events.length ?? 0;
      judge(t, backend, id, result, damaged.damage, pristine.lastBatch, outcome.notes);
    }
    rmSync(dir, { recursive: true, force: true });
    maxRss = Math.max(maxRss, process.memoryUsage().rss);
  }
  t.figures['max RSS MB'] = Math.round(maxRss / 1024 ** 2);
  if (maxRss > MAX_RSS) fail(t, 'hangs', `memory reached ${Math.round(maxRss / 1024 ** 2)} MB`);
  return t;
}

/** A JSONL loader that parses every event line and skips the commit lines' checksums. */
function uncheckedJsonlLoad(location: string, id: string) {
  const lines = readFileSync(join(location, `${id}.jsonl`), 'utf8').split('\n');
  const parse = (line: string): unknown => {
    try {
      return JSON.parse(line);
    } catch {
      throw new CorruptLogError({ file: id, line: 0, offset: 0, reason: 'does not parse' });
    }
  };
  const header = parse(lines[0] ?? '') as SessionHeader;
  const events = lines
    .slice(1)
    .filter((line) => line !== '' && !line.startsWith('{"commit":'))
    .map(parse) as SessionEvent[];
  return LoadedSession.fromEvents(header, events);
}

/** A SQLite loader that reads the rows as they are: no row checksum, no ledger. */
async function uncheckedSqliteLoad(location: string, id: string) {
  const Database = await loadDriver();
  const db = new Database(location, { readonly: true }) as unknown as {
    prepare(sql: string): { get(...a: unknown[]): unknown; all(...a: unknown[]): unknown[] };
    close(): void;
  };
  try {
    const session = db.prepare('SELECT key, header FROM sessions WHERE id = ?').get(id) as
      | { key: number; header: string }
      | undefined;
    if (session === undefined)
      throw new CorruptLogError({ file: location, line: 0, offset: 0, reason: 'no session' });
    const rows = db
      .prepare(
        `SELECT e.seq, e.time, t.type, e.data, e.source_event_seqs AS s, e.surface_op AS o
         FROM events e JOIN event_types t ON t.code = e.type WHERE e.session_id = ? ORDER BY e.seq`,
      )
      .all(session.key) as {
      seq: number;
      time: number;
      type: string;
      data: string;
      s: string | null;
      o: string | null;
    }[];
    const events = rows.map((row) => ({
      seq: row.seq,
      time: row.time,
      type: row.type,
      data: JSON.parse(row.data),
      ...(row.s === null ? {} : { sourceEventSeqs: JSON.parse(row.s) }),
      ...(row.o === null ? {} : { surfaceOp: JSON.parse(row.o) }),
    })) as SessionEvent[];
    // The runs of finished chunks, decoded without their checksum.
    const runs = db
      .prepare(
        'SELECT first_seq, count, time, times, sizes, data, crc FROM chunk_runs WHERE session_id = ?',
      )
      .all(session.key) as RunRow[];
    for (const run of runs) events.push(...uncheckedRunChunks(run));
    events.sort((a, b) => a.seq - b.seq);
    return LoadedSession.fromEvents(JSON.parse(session.header) as SessionHeader, events);
  } catch (error) {
    if (CorruptLogError.isInstance(error)) throw error;
    throw new CorruptLogError({ file: location, line: 0, offset: 0, reason: String(error) });
  } finally {
    db.close();
  }
}

for (const backend of BACKENDS) {
  describe(`corruption: ${backend.name}`, () => {
    let pristine: Pristine;
    const pristineReady = (async () => {
      const dir = scratch(`pristine-${backend.name}`);
      pristine = await writePristine(backend, dir);
    })();

    it(`gives the acknowledged events or a typed error in each of ${CASES} damaged copies`, async () => {
      await pristineReady;
      const started = Date.now();
      const t = await campaign(backend, pristine, CASES, 0xc0ffee, (location, readOnly) =>
        backend.open(location, { readOnly }),
      );
      add(t, 'seconds', Math.round((Date.now() - started) / 1000));
      console.log(`corruption ${backend.name}: ${JSON.stringify(t)}`);
      expectClean(t);
      expect(t.runs).toBe(CASES);
      expect(t.detected).toBeGreaterThan(CASES / 10);
    });

    const unchecked = backend.name === 'jsonl' ? uncheckedJsonlLoad : uncheckedSqliteLoad;
    const mutants: [string, (store: SessionStore, location: string) => SessionStore][] = [
      [
        'a loader that skips checksum verification',
        (store, location) =>
          override(store, { load: async (id: string) => unchecked(location, id) }),
      ],
      [
        'a store that drops the last acknowledged event',
        (store) => mutantStore(store, 'drop-last-event'),
      ],
      [
        'a store that silently changes a stored value',
        (store) => mutantStore(store, 'alter-last-event'),
      ],
    ];
    for (const [what, mutate] of mutants) {
      it(`catches ${what}`, async () => {
        await pristineReady;
        const t = await campaign(backend, pristine, 60, 0xbad, async (location, readOnly) =>
          mutate(await backend.open(location, { readOnly }), location),
        );
        const caught = t.lost + t.altered > 0;
        recordMutant('corruption', backend.name, caught);
        expect(caught, JSON.stringify(t.figures)).toBe(true);
      });
    }
  });
}
