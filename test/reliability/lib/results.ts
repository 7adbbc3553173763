/**
 * The counts every reliability harness records. A harness adds to one tally per category and
 * backend; each tally is written to the results directory the global setup made (one JSON file
 * per category and backend), and the final step of the run renders docs/reliability.md from
 * them. A tally that lost, altered, hid an untyped error or hung fails its test: the report
 * only ever shows zeros there for a green run.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, expect, inject } from 'vitest';

export const CATEGORIES = [
  'crash',
  'power-loss',
  'corruption',
  'disk-faults',
  'concurrency',
  'hostile-input',
  'ledger-copies',
] as const;
export type Category = (typeof CATEGORIES)[number];

/** The backends a category runs on, where not every embedded one (no ledger elsewhere). */
export const CATEGORY_BACKENDS: Partial<Record<Category, readonly string[]>> = {
  'ledger-copies': ['sqlite'],
};

/** What one category of harness found on one backend. */
export interface Tally {
  readonly category: Category;
  readonly backend: string;
  /** Cases run: processes killed, images opened, damaged copies checked, commands run... */
  runs: number;
  /** Faults injected (kills, flips, truncations, I/O errors, hostile inputs). */
  faults: number;
  /** Acknowledged events compared with what the store gave back. */
  acked: number;
  /** Acknowledged events missing, or a session shorter than acknowledged, without an error. */
  lost: number;
  /** Events that came back different from what was acknowledged. */
  altered: number;
  /** Errors that were not a typed PalimpsestError (or, for the CLI, not a documented exit code). */
  untyped: number;
  /** Cases that did not finish within their bound. */
  hangs: number;
  /** Cases the store reported as damaged with a typed error (the expected outcome of damage). */
  detected: number;
  /** Deliberately broken components run through the harness, and how many it caught. */
  mutantsRun: number;
  mutantsKilled: number;
  /** Other measured figures, by name (summed when numbers, replaced when text). */
  figures: Record<string, number | string>;
  /** The first few broken promises, for the failure message. */
  failures: string[];
}

export function tally(category: Category, backend: string): Tally {
  return {
    category,
    backend,
    runs: 0,
    faults: 0,
    acked: 0,
    lost: 0,
    altered: 0,
    untyped: 0,
    hangs: 0,
    detected: 0,
    mutantsRun: 0,
    mutantsKilled: 0,
    figures: {},
    failures: [],
  };
}

/** Notes a broken promise of kind `kind` (lost, altered, untyped or hangs). */
export function fail(
  t: Tally,
  kind: 'lost' | 'altered' | 'untyped' | 'hangs',
  message: string,
  count = 1,
): void {
  t[kind] += count;
  if (t.failures.length < 10) t.failures.push(`${kind}: ${message}`);
}

/** Adds `value` to a numeric figure. */
export function add(t: Tally, figure: string, value = 1): void {
  const current = t.figures[figure];
  t.figures[figure] = (typeof current === 'number' ? current : 0) + value;
}

/** The broken promises of a tally (empty when it kept all of them). */
export function brokenPromises(t: Tally): string[] {
  const broken = t.lost + t.altered + t.untyped + t.hangs;
  return broken === 0 ? [] : t.failures.length > 0 ? t.failures : [`${broken} broken promises`];
}

/** Fails the test unless the tally lost, altered, hid and hung nothing; then records it. */
export function expectClean(t: Tally): void {
  record(t);
  expect(brokenPromises(t), `${t.category} on ${t.backend}`).toEqual([]);
  expect({ lost: t.lost, altered: t.altered, untyped: t.untyped, hangs: t.hangs }).toEqual({
    lost: 0,
    altered: 0,
    untyped: 0,
    hangs: 0,
  });
}

/** Records that a harness caught (or missed) a deliberately broken component. */
export function recordMutant(category: Category, backend: string, killed: boolean): void {
  const t = tally(category, backend);
  t.mutantsRun = 1;
  t.mutantsKilled = killed ? 1 : 0;
  record(t);
}

/** Merges the tally into its category's results file. */
export function record(t: Tally): void {
  const file = join(resultsDir(), `${t.category}--${t.backend}.json`);
  const merged = existsSync(file) ? merge(JSON.parse(readFileSync(file, 'utf8')) as Tally, t) : t;
  writeFileSync(file, `${JSON.stringify(merged, null, 2)}\n`);
}

function merge(a: Tally, b: Tally): Tally {
  const figures: Record<string, number | string> = { ...a.figures };
  for (const [name, value] of Object.entries(b.figures)) {
    const current = figures[name];
    figures[name] =
      typeof value === 'number' && typeof current === 'number' && !name.startsWith('max ')
        ? current + value
        : typeof value === 'number' && typeof current === 'number'
          ? Math.max(current, value)
          : value;
  }
  return {
    category: a.category,
    backend: a.backend,
    runs: a.runs + b.runs,
    faults: a.faults + b.faults,
    acked: a.acked + b.acked,
    lost: a.lost + b.lost,
    altered: a.altered + b.altered,
    untyped: a.untyped + b.untyped,
    hangs: a.hangs + b.hangs,
    detected: a.detected + b.detected,
    mutantsRun: a.mutantsRun + b.mutantsRun,
    mutantsKilled: a.mutantsKilled + b.mutantsKilled,
    figures,
    failures: [...a.failures, ...b.failures].slice(0, 10),
  };
}

declare module 'vitest' {
  export interface ProvidedContext {
    /** Where the harnesses write their tallies (made by test/reliability/setup.ts). */
    reliabilityResults: string;
    /** The bundled child processes (writer.mjs, contender.mjs). */
    reliabilityBundle: string;
  }
}

export function resultsDir(): string {
  return inject('reliabilityResults');
}

/** The path of a bundled child script (see setup.ts). */
export function childScript(name: 'writer' | 'contender' | 'pg-writer'): string {
  return join(inject('reliabilityBundle'), `${name}.mjs`);
}

/**
 * The count multiplier: 1 in CI, 10 with PALIMPSEST_SOAK=1 (`npm run test:soak`), or any
 * PALIMPSEST_SOAK_SCALE.
 */
export const SCALE = Number(
  process.env.PALIMPSEST_SOAK_SCALE ?? (process.env.PALIMPSEST_SOAK === '1' ? 10 : 1),
);

/** `n` scaled for a soak run. */
export function count(n: number): number {
  return Math.max(1, Math.round(n * SCALE));
}

/** A scratch root in memory when the machine has one (/dev/shm), else the temp directory. */
export function scratchRoot(): string {
  return existsSync('/dev/shm') ? '/dev/shm' : (process.env.TMPDIR ?? '/tmp');
}

/**
 * Temporary directories removed after the calling file's tests: `scratch(name)` makes one
 * under `base` (memory-backed /dev/shm by default).
 */
export function useScratch(base: string = scratchRoot()): (name: string) => string {
  const made: string[] = [];
  afterAll(() => {
    for (const dir of made) rmSync(dir, { recursive: true, force: true });
  });
  return (name) => {
    const dir = mkdtempSync(join(base, `palimpsest-${name}-`));
    made.push(dir);
    return dir;
  };
}
