/**
 * The crash harness: runs the child writer (writer.ts) against a real store, kills it with
 * SIGKILL at a named failpoint or at a random time, then checks the store the way a restarted
 * application would see it.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { checkInvariants, type SessionEvent } from '../../src/core/index.js';
import { openSession, type SessionStore } from '../../src/store/index.js';

export type Backend = 'jsonl' | 'sqlite';

/** What one kill produced. */
export interface KillOutcome {
  readonly failpoint: string;
  /** The failpoint was reached (false: killed at a random time or after the timeout). */
  readonly hit: boolean;
  readonly ackedEvents: number;
}

const writerPath = join(import.meta.dirname, 'writer.ts');

/**
 * Runs one child until it reaches `failpoint` (its `hit`-th time) or, for `random`, until a
 * random delay after it opened; then SIGKILLs it. `acked` collects every event the child
 * acknowledged, by seq.
 */
export async function runAndKill(options: {
  backend: Backend;
  location: string;
  failpoint: string;
  hit: number;
  seed: number;
  randomDelayMs: number;
  acked: Map<number, string>;
  /** Runs a deliberately broken store in the child (see writer.ts). */
  mutant?: string;
}): Promise<KillOutcome> {
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      writerPath,
      options.backend,
      options.location,
      options.failpoint,
      String(options.hit),
      String(options.seed),
    ],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
      env:
        options.mutant === undefined
          ? process.env
          : { ...process.env, PALIMPSEST_MUTANT: options.mutant },
    },
  );
  let hit = false;
  let acked = 0;
  let stderr = '';
  let buffer = '';
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  await new Promise<void>((resolve, reject) => {
    // A failpoint the child never reaches (nothing to repair, say) ends as a timed kill.
    const timeout = setTimeout(() => kill(child, resolve), 2_000);
    child.stdout?.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      let newline = buffer.indexOf('\n');
      while (newline !== -1) {
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + 1);
        newline = buffer.indexOf('\n');
        if (line.startsWith('ACK ')) {
          const json = line.slice(4);
          const seq = (JSON.parse(json) as SessionEvent).seq;
          options.acked.set(seq, json);
          acked++;
        } else if (line.startsWith('FAILPOINT ')) {
          hit = true;
          clearTimeout(timeout);
          kill(child, resolve);
        } else if (line.startsWith('OPEN ') && options.failpoint === 'random') {
          clearTimeout(timeout);
          setTimeout(() => kill(child, resolve), Math.floor(options.randomDelayMs));
        }
      }
    });
    exited.then((code) => {
      clearTimeout(timeout);
      if (code !== null)
        reject(
          new Error(`the writer exited by itself with code ${code}: ${stderr.slice(0, 2000)}`),
        );
      resolve();
    });
  });
  await exited;
  return { failpoint: options.failpoint, hit, ackedEvents: acked };
}

function kill(child: ChildProcess, done: () => void): void {
  child.kill('SIGKILL');
  done();
}

/** What the checks after a kill found. */
export interface Verification {
  readonly events: number;
  readonly repairedEvents: number;
  readonly tornBytesDropped: number;
}

/**
 * Copies a store's files (a JSONL directory, or a SQLite database with its WAL) so the checks
 * run on the copy and the next child still finds, and repairs, what the killed one left.
 */
export function copyLocation(
  backend: Backend,
  location: string,
): { location: string; remove: () => void } {
  const root = mkdtempSync(join(tmpdir(), 'palimpsest-crash-copy-'));
  const target = join(root, basename(location));
  if (backend === 'jsonl') {
    if (existsSync(location)) cpSync(location, target, { recursive: true });
  } else {
    for (const suffix of ['', '-wal', '-shm']) {
      if (existsSync(location + suffix)) cpSync(location + suffix, target + suffix);
    }
  }
  return { location: target, remove: () => rmSync(root, { recursive: true, force: true }) };
}

/**
 * Reopens the session as a restarted writer would and checks: every acknowledged event is
 * present and unchanged, seqs are contiguous and the log validates (openSession seeds it), the
 * repaired log passes the invariant checker (every tool call paired on the surface, turns
 * closed), and a second open writes nothing.
 */
export async function verifyAfterKill(
  openStore: () => Promise<SessionStore>,
  acked: ReadonlyMap<number, string>,
  artifact: string | undefined,
): Promise<Verification> {
  const store = await openStore();
  try {
    const live = await openSession(store, 'crash');
    const events = live.events;
    const report = live.openReport;
    await live.close();
    for (const [seq, json] of acked) {
      const stored = events[seq];
      if (stored === undefined || JSON.stringify(stored) !== json) {
        throw new Error(
          `acknowledged event ${seq} is ${stored === undefined ? 'missing' : 'different'} after the crash`,
        );
      }
    }
    events.forEach((event, index) => {
      if (event.seq !== index) throw new Error(`seq ${event.seq} at index ${index}`);
    });
    const violations = checkInvariants(events, { requireClosed: true });
    if (violations.length > 0)
      throw new Error(`invariants: ${JSON.stringify(violations.slice(0, 3))}`);
    const before = fingerprint(artifact);
    const again = await openSession(store, 'crash');
    const second = again.openReport;
    await again.close();
    if (second.repairedEvents !== 0 || second.tornBytesDropped !== 0) {
      throw new Error(`the second open wrote: ${JSON.stringify(second)}`);
    }
    if (fingerprint(artifact) !== before) throw new Error('the second open changed the log file');
    const reloaded = await store.load('crash');
    if (reloaded.events.length !== events.length)
      throw new Error('the second open changed the event count');
    return {
      events: events.length,
      repairedEvents: report.repairedEvents,
      tornBytesDropped: report.tornBytesDropped,
    };
  } finally {
    await store.close();
  }
}

function fingerprint(file: string | undefined): string | undefined {
  if (file === undefined) return undefined;
  try {
    return createHash('sha256').update(readFileSync(file)).digest('hex');
  } catch {
    return 'absent';
  }
}
