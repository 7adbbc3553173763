/**
 * The side-by-side benchmark: palimpsest on every backend, the peers (pi, LangGraph, the OpenAI
 * Agents SDK) and the floors record the same conversation, each measurement in a child process
 * of its own (bench/peers/child.ts), the systems in a rotated order each round so that drift on
 * this shared machine falls on all of them alike.
 *
 *   npm run bench            # full: 10, 1,000, 5,000 turns × 5 rounds; rewrites docs/benchmarks.md
 *   npm run bench -- --long  # the full sizes and 10,000 and 20,000 turns, resumes of 10,000 (2M
 *                            # events) too; rewrites docs/benchmarks.md (not measured in CI)
 *   npm run bench:smoke      # small sizes, 2 rounds, writes nothing: keeps the harness working
 *   npm run bench -- --only=JSONL,pi   # only the systems whose names contain one of these
 *   npm run bench -- --render=bench/.out/peers-full.json   # the report again, from a saved run
 *
 * The peers come from bench/package.json (`npm --prefix bench ci`). PostgreSQL rows need a
 * server: `PALIMPSEST_BENCH_PG_URL`, or the machine's binaries for a throwaway cluster.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  type PostgresServer,
  postgresBinaries,
  startPostgres,
} from '../../test/postgres/server.js';
import {
  type MachineInfo,
  machineInfo,
  progressReporter,
  renderMarkdown,
  renderText,
  writeSection,
} from '../report.js';
import type { AppendResult, ConcurrentResult, ResumeResult } from './child.js';
import { buildReport, type Results } from './figures.js';
import { PG_URL_ENV } from './pg.js';
import { FULL_PLAN, LONG_PLAN, type Plan, SMOKE_PLAN } from './plan.js';
import type { BenchSystem, ResumeTarget } from './system.js';
import { RESUMES, resumeNamed, SYSTEMS, systemNamed } from './systems/index.js';

const here = dirname(fileURLToPath(import.meta.url));
const CHILD = resolve(here, 'child.ts');
const DOCS = resolve(here, '../../docs');
const OUT = resolve(here, '../.out');
const startedNs = process.hrtime.bigint();
const progress = progressReporter(startedNs);

function rotate<T>(list: readonly T[], by: number): T[] {
  const k = list.length === 0 ? 0 : by % list.length;
  return [...list.slice(k), ...list.slice(0, k)];
}

function runChild<T>(args: readonly string[]): T {
  const result = spawnSync(
    process.execPath,
    ['--expose-gc', '--max-old-space-size=8192', '--import', 'tsx', CHILD, ...args],
    { encoding: 'utf8', maxBuffer: 256 * 2 ** 20, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  if (result.status !== 0) throw new Error(`child ${args.join(' ')} failed (${result.status})`);
  return JSON.parse(result.stdout.trim().split('\n').at(-1) ?? '') as T;
}

function turnsFor(system: BenchSystem, size: number): number {
  return Math.min(size, system.maxTurns ?? size);
}

function push<T>(map: Map<string, T[]>, key: string, value: T): void {
  const list = map.get(key);
  if (list === undefined) map.set(key, [value]);
  else list.push(value);
}

/** `name@turns`: results are kept per system and per the turns it actually ran. */
export function keyOf(name: string, turns: number): string {
  return `${name}@${turns}`;
}

async function measure(
  plan: Plan,
  systems: readonly BenchSystem[],
  resumes: readonly ResumeTarget[],
  root: string,
): Promise<Results> {
  const appends = new Map<string, AppendResult[]>();
  const resumed = new Map<string, ResumeResult[]>();
  const concurrent = new Map<string, ConcurrentResult[]>();
  const kept = new Map<string, string>();
  const keep = new Set(resumes.map((target) => target.from));
  let seq = 0;
  const fresh = (): string => {
    const dir = join(root, `r${seq++}`);
    mkdirSync(dir);
    return dir;
  };

  for (let run = 0; run < plan.runs; run++) {
    for (const size of plan.sizes) {
      const done = new Set<string>();
      for (const system of rotate(systems, run + size)) {
        const turns = turnsFor(system, size);
        const key = keyOf(system.name, turns);
        // A capped system runs its cap once per round, not once per larger size.
        if (done.has(key) || (turns < size && (appends.get(key)?.length ?? 0) > run)) continue;
        done.add(key);
        progress(`round ${run + 1}/${plan.runs}: ${system.name}, ${turns} turns`);
        const dir = fresh();
        push(appends, key, runChild<AppendResult>(['append', system.name, String(turns), dir]));
        if (run === 0 && keep.has(system.name) && !kept.has(key)) kept.set(key, dir);
        else rmSync(dir, { recursive: true, force: true });
      }
    }
  }

  for (let run = 0; run < plan.runs; run++) {
    for (const size of plan.resumeSizes) {
      for (const target of rotate(resumes, run)) {
        const from = systems.find((system) => system.name === target.from);
        if (from === undefined) continue;
        const turns = turnsFor(from, size);
        const dir = kept.get(keyOf(from.name, turns));
        if (
          dir === undefined ||
          (turns < size && plan.resumeSizes.some((s) => s < size && turnsFor(from, s) === turns))
        )
          continue;
        progress(`resume round ${run + 1}/${plan.runs}: ${target.name}, ${turns} turns`);
        push(
          resumed,
          keyOf(target.name, turns),
          runChild<ResumeResult>(['resume', target.name, dir]),
        );
      }
    }
  }
  for (const dir of kept.values()) rmSync(dir, { recursive: true, force: true });

  for (let run = 0; run < plan.runs; run++) {
    for (const system of rotate(systems, run)) {
      const turns = Math.min(
        plan.concurrentTurns,
        system.maxConcurrentTurns ?? plan.concurrentTurns,
      );
      progress(
        `concurrent round ${run + 1}/${plan.runs}: ${system.name}, ${plan.concurrentSessions} × ${turns} turns`,
      );
      const dir = fresh();
      push(
        concurrent,
        keyOf(system.name, turns),
        runChild<ConcurrentResult>([
          'concurrent',
          system.name,
          String(plan.concurrentSessions),
          String(turns),
          dir,
        ]),
      );
      rmSync(dir, { recursive: true, force: true });
    }
  }
  return { plan, systems, resumes, appends, resumed, concurrent };
}

/** The measurements of a run as JSON (maps as entry lists), to render again later. */
interface SavedRun {
  readonly plan: Plan;
  readonly systems: readonly string[];
  readonly resumes: readonly string[];
  readonly appends: [string, AppendResult[]][];
  readonly resumed: [string, ResumeResult[]][];
  readonly concurrent: [string, ConcurrentResult[]][];
  readonly durationSeconds: number;
  readonly withPg: boolean;
  /** The measuring process's machine facts (its flags and date, not the renderer's). */
  readonly machine?: MachineInfo;
}

function save(file: string, results: Results, durationSeconds: number, withPg: boolean): void {
  const saved: SavedRun = {
    plan: results.plan,
    systems: results.systems.map((system) => system.name),
    resumes: results.resumes.map((target) => target.name),
    appends: [...results.appends],
    resumed: [...results.resumed],
    concurrent: [...results.concurrent],
    durationSeconds,
    withPg,
    machine: machineInfo(),
  };
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, JSON.stringify(saved));
}

interface Restored {
  readonly results: Results;
  readonly durationSeconds: number;
  readonly withPg: boolean;
  readonly machine: MachineInfo;
}

function restore(file: string): Restored {
  const saved = JSON.parse(readFileSync(file, 'utf8')) as SavedRun;
  return {
    results: {
      plan: saved.plan,
      systems: saved.systems.map(systemNamed),
      resumes: saved.resumes.map(resumeNamed),
      appends: new Map(saved.appends),
      resumed: new Map(saved.resumed),
      concurrent: new Map(saved.concurrent),
    },
    durationSeconds: saved.durationSeconds,
    withPg: saved.withPg,
    // A run saved before machine facts were kept: the flags of `npm run bench`, the file's date.
    machine: saved.machine ?? {
      ...machineInfo(),
      flags: '--expose-gc --max-old-space-size=8192 --import tsx',
      date: statSync(file).mtime.toISOString(),
    },
  };
}

function publish(run: Restored, write: boolean): void {
  const { report, svg } = buildReport(run.results, run.durationSeconds, run.withPg, run.machine);
  process.stdout.write(`${renderText(report)}\n`);
  if (!write) return;
  writeFileSync(join(DOCS, 'benchmarks-per-turn.svg'), svg);
  writeSection(join(DOCS, 'benchmarks.md'), 'peers', renderMarkdown(report));
  progress('wrote docs/benchmarks.md (side-by-side section) and docs/benchmarks-per-turn.svg');
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const rendered = args.find((arg) => arg.startsWith('--render='))?.slice('--render='.length);
  if (rendered !== undefined) {
    const run = restore(rendered);
    publish(run, run.results.plan.label !== 'smoke');
    return;
  }
  const plan = args.includes('--smoke')
    ? SMOKE_PLAN
    : args.includes('--long')
      ? LONG_PLAN
      : FULL_PLAN;
  const only = args
    .find((arg) => arg.startsWith('--only='))
    ?.slice('--only='.length)
    .split(',');
  const matches = (name: string): boolean =>
    only === undefined || only.some((part) => name.includes(part));

  let server: PostgresServer | undefined;
  if ((process.env[PG_URL_ENV] ?? '') === '' && postgresBinaries() !== undefined) {
    progress('starting a throwaway PostgreSQL server');
    server = await startPostgres();
    process.env[PG_URL_ENV] = server.url;
  }
  const withPg = (process.env[PG_URL_ENV] ?? '') !== '';
  const usable = (name: string): boolean => withPg || !/PostgreSQL|pg /.test(name);
  const systems = SYSTEMS.filter((system) => matches(system.name) && usable(system.name));
  const resumes = RESUMES.filter(
    (target) => usable(target.name) && systems.some((system) => system.name === target.from),
  );
  const root = mkdtempSync(join(tmpdir(), 'palimpsest-bench-'));
  try {
    const results = await measure(plan, systems, resumes, root);
    const durationSeconds = Number(process.hrtime.bigint() - startedNs) / 1e9;
    // Kept so that the report can be rendered again (`--render=FILE`) without measuring.
    const file = join(OUT, `peers-${plan.label}${only === undefined ? '' : '-partial'}.json`);
    save(file, results, durationSeconds, withPg);
    progress(`measurements saved in ${file}`);
    publish(
      { results, durationSeconds, withPg, machine: machineInfo() },
      plan.label !== 'smoke' && only === undefined,
    );
  } finally {
    rmSync(root, { recursive: true, force: true });
    server?.stop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
