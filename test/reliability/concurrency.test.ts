/**
 * Concurrency (reliability plan T4): per backend, 2 to 8 writer processes (lib/contender.ts) on
 * one session, through the single-writer lock and through optimistic appends with
 * `expectedSeq`, and 4 to 8 writers on sessions of their own in one store. Afterwards every
 * session is loaded: seqs contiguous, each acknowledged event present exactly once at the seq it
 * was acknowledged at, each batch contiguous, and no two writers' lock windows overlapping (one
 * holder at a time). The takeover time of a dead writer's lock is measured: a holder is killed
 * with SIGKILL and the time until another open succeeds recorded.
 *
 * The harness is shown to catch a store that ignores `expectedSeq` and a lock that always grants.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { LockedError, openSession } from '../../src/store/index.js';
import { BACKENDS, type BackendUnderTest } from './lib/backends.js';
import type { StoreMutant } from './lib/mutants.js';
import {
  add,
  childScript,
  count,
  expectClean,
  fail,
  recordMutant,
  type Tally,
  tally,
  useScratch,
} from './lib/results.js';

const RUN_MS = count(1500);
const TAKEOVERS = count(10);

const scratch = useScratch();

interface WriterReport {
  readonly acks: { seq: number; tag: string; batch: string }[];
  readonly windows: [bigint, bigint][];
  readonly stats: {
    attempts: number;
    commits: number;
    conflicts: number;
    errors: number;
    errorCodes: string[];
  };
  readonly untyped?: string;
}

function runWriter(args: string[], mutant?: StoreMutant): Promise<WriterReport> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [childScript('contender'), ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: mutant === undefined ? process.env : { ...process.env, PALIMPSEST_MUTANT: mutant },
    });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      err += chunk;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), RUN_MS + 30_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      const report: WriterReport = {
        acks: [],
        windows: [],
        stats: { attempts: 0, commits: 0, conflicts: 0, errors: 0, errorCodes: [] },
      };
      for (const line of out.split('\n')) {
        if (line.startsWith('ACK ')) {
          const [, seq, ...rest] = line.split(' ');
          const tag = rest.join(' ');
          const data = JSON.parse(tag) as { writer: string; batch: number };
          report.acks.push({ seq: Number(seq), tag, batch: `${data.writer}/${data.batch}` });
        } else if (line.startsWith('WINDOW ')) {
          const [, start, end] = line.split(' ');
          report.windows.push([BigInt(start ?? 0), BigInt(end ?? 0)]);
        } else if (line.startsWith('STATS ')) {
          Object.assign(report.stats, JSON.parse(line.slice(6)));
        } else if (line.startsWith('UNTYPED ')) {
          Object.assign(report, { untyped: line.slice(8) });
        }
      }
      if (code !== 0 && report.untyped === undefined)
        Object.assign(report, { untyped: `exit ${code}: ${err.slice(0, 500)}` });
      resolve(report);
    });
  });
}

/**
 * Runs `writers` processes in `mode` on `sessions` (one shared, or one each) and checks the
 * result, adding to `t`.
 */
async function scenario(
  t: Tally,
  backend: BackendUnderTest,
  mode: 'lock' | 'append',
  writers: number,
  shared: boolean,
  mutant?: StoreMutant,
): Promise<void> {
  const dir = scratch(`concurrency-${backend.name}`);
  const location = backend.location(dir);
  if (backend.name === 'jsonl') mkdirSync(location, { recursive: true });
  // The store (the database file) exists before the writers race to open it.
  await (await backend.open(location)).close();
  const sessionOf = (w: number) => (shared ? 'shared' : `own-${w}`);
  const reports = await Promise.all(
    Array.from({ length: writers }, (_, w) =>
      runWriter([mode, backend.name, location, sessionOf(w), `w${w}`, String(RUN_MS)], mutant),
    ),
  );
  const label = `${mode} ${writers} writers on ${shared ? 'one session' : 'own sessions'}`;
  t.runs++;
  t.faults += writers;
  for (const report of reports) {
    add(t, 'append attempts', report.stats.attempts);
    add(t, 'batches committed', report.stats.commits);
    add(t, 'conflicts (LockedError, ConflictError)', report.stats.conflicts);
    if (report.stats.errors > 0)
      add(t, `other typed errors ${report.stats.errorCodes.join(',')}`, report.stats.errors);
    if (report.untyped !== undefined) fail(t, 'untyped', `${label}: ${report.untyped}`);
  }
  const store = await backend.open(location, { readOnly: true });
  try {
    for (const id of new Set(Array.from({ length: writers }, (_, w) => sessionOf(w)))) {
      let events: readonly { seq: number; data: unknown }[];
      try {
        events = (await store.load(id)).events;
      } catch (error) {
        fail(t, 'lost', `${label}: ${id} does not load: ${String(error)}`);
        continue;
      }
      const tags = events.map((event) => JSON.stringify(event.data));
      const seen = new Map<string, number>();
      events.forEach((event, index) => {
        if (event.seq !== index) fail(t, 'altered', `${label}: seq ${event.seq} at index ${index}`);
        const tag = tags[index] as string;
        if (seen.has(tag))
          fail(t, 'altered', `${label}: ${tag} stored twice (seq ${seen.get(tag)} and ${index})`);
        seen.set(tag, index);
      });
      const mine = reports.flatMap((report, w) => (sessionOf(w) === id ? report.acks : []));
      t.acked += mine.length;
      const batchSeqs = new Map<string, number[]>();
      for (const ack of mine) {
        const stored = tags[ack.seq];
        if (stored === undefined) fail(t, 'lost', `${label}: acknowledged seq ${ack.seq} missing`);
        else if (stored !== ack.tag)
          fail(t, 'altered', `${label}: seq ${ack.seq} holds ${stored}, acknowledged ${ack.tag}`);
        batchSeqs.set(ack.batch, [...(batchSeqs.get(ack.batch) ?? []), ack.seq]);
      }
      for (const [name, seqs] of batchSeqs) {
        if (seqs.some((seq, i) => i > 0 && seq !== (seqs[i - 1] as number) + 1))
          fail(t, 'altered', `${label}: batch ${name} is not contiguous: ${seqs.join(',')}`);
      }
      add(t, 'events checked', events.length);
    }
  } finally {
    await store.close();
  }
  if (shared && mode === 'lock') {
    const windows = reports
      .flatMap((report) => report.windows)
      .sort((a, b) => (a[0] < b[0] ? -1 : 1));
    let overlaps = 0;
    for (let i = 1; i < windows.length; i++) {
      if ((windows[i]?.[0] as bigint) < (windows[i - 1]?.[1] as bigint)) overlaps++;
    }
    add(t, 'lock windows checked', windows.length);
    if (overlaps > 0)
      fail(t, 'altered', `${label}: ${overlaps} lock windows overlap (two holders at once)`);
  }
}

/** Kills a lock holder with SIGKILL and measures how long until the next open succeeds. */
async function takeover(backend: BackendUnderTest, location: string, id: string): Promise<number> {
  const child: ChildProcess = spawn(
    process.execPath,
    [childScript('contender'), 'hold', backend.name, location, id],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  await new Promise<void>((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('LOCKED')) resolve();
    });
    child.on('exit', (code) => reject(new Error(`the holder exited with ${code}`)));
  });
  const store = await backend.open(location);
  try {
    await expect(openSession(store, id)).rejects.toBeInstanceOf(LockedError);
    const exited = new Promise((resolve) => child.on('exit', resolve));
    const killed = performance.now();
    child.kill('SIGKILL');
    await exited;
    for (;;) {
      try {
        const live = await openSession(store, id);
        const ms = performance.now() - killed;
        await live.close();
        return ms;
      } catch (error) {
        if (!(error instanceof LockedError)) throw error;
        if (performance.now() - killed > 60_000) return Number.POSITIVE_INFINITY;
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
    }
  } finally {
    await store.close();
  }
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

for (const backend of BACKENDS) {
  describe(`concurrency: ${backend.name}`, () => {
    it('one holder at a time, no duplicate or missing seq, with 2 to 8 writer processes', async () => {
      const t = tally('concurrency', backend.name);
      for (const writers of [2, 4, 8]) await scenario(t, backend, 'lock', writers, true);
      await scenario(t, backend, 'append', 4, true);
      for (const writers of [4, 8]) await scenario(t, backend, 'lock', writers, false);
      console.log(`concurrency ${backend.name}: ${JSON.stringify(t)}`);
      expectClean(t);
      expect(t.figures['batches committed']).toBeGreaterThan(0);
    });

    it(`takes over a dead writer's lock (${TAKEOVERS} kills of the holder)`, async () => {
      const t = tally('concurrency', backend.name);
      const dir = scratch(`takeover-${backend.name}`);
      const location = backend.location(dir);
      const times: number[] = [];
      for (let n = 0; n < TAKEOVERS; n++)
        times.push(await takeover(backend, location, `held-${n % 3}`));
      t.runs += TAKEOVERS;
      t.faults += TAKEOVERS;
      t.figures['takeover p50 ms'] = Math.round(percentile(times, 50) * 10) / 10;
      t.figures['max takeover ms'] = Math.round(Math.max(...times) * 10) / 10;
      const stuck = times.filter((ms) => !Number.isFinite(ms)).length;
      if (stuck > 0) fail(t, 'hangs', `${stuck} dead writers' locks were never taken over`, stuck);
      console.log(`takeover ${backend.name}: ${times.map((ms) => ms.toFixed(1)).join(' ')}`);
      expectClean(t);
    });

    for (const [mutant, mode] of [
      ['ignore-expected-seq', 'append'],
      ['always-grant-lock', 'lock'],
    ] as const) {
      it(`catches a store with the mutation ${mutant}`, async () => {
        const t = tally('concurrency', backend.name);
        await scenario(t, backend, mode, 4, true, mutant);
        const caught = t.lost + t.altered + t.untyped > 0;
        recordMutant('concurrency', backend.name, caught);
        expect(caught, JSON.stringify(t)).toBe(true);
      });
    }
  });
}
