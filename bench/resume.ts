/**
 * A narrow benchmark for iterating on resume: only figure 4 of bench:store (full replay, the
 * fast path that elides finished chunks, and their floors), on a log it writes once and keeps.
 *
 *   node --expose-gc --max-old-space-size=8192 --import tsx bench/resume.ts [dir] [reps] [modes] [turns]
 *
 * `dir` (default, or when given as '': a `palimpsest-resume-bench` directory under the OS temp directory, suffixed
 * with the turns when they are not 4,900) holds the log of `turns` turns (default 4,900, about
 * 1M events; 9,804 is 2M) of bench:store's workload; it is written on the first run and reused
 * after, so one directory serves one size.
 * `modes` is a comma-separated subset of resume-ours, resume-fast, resume-open, resume-open-fast,
 * resume-memory, resume-parse, resume-scan (default: all but resume-memory); see
 * bench/store-child.ts. Prints medians of wall and CPU time (CPU time is steadier on a shared
 * machine) and memory; writes no docs.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SESSION_FORMAT_VERSION, Session, type SessionEvent } from '../src/core/index.js';
import { openJsonlStore } from '../src/store/jsonl/index.js';
import { encodeSessionId, LOG_SUFFIX } from '../src/store/jsonl/paths.js';
import { median } from './measure.js';
import type { ResumeChildResult } from './store-child.js';
import {
  appendTurnEvent,
  BENCH_TIME0,
  benchClock,
  EVENTS_PER_TURN,
  TurnSource,
} from './store-workload.js';

const here = dirname(fileURLToPath(import.meta.url));
const CHILD = resolve(here, 'store-child.ts');
const SESSION = 'bench';
const TURNS = 4_900;
const ALL_MODES = [
  'resume-ours',
  'resume-fast',
  'resume-open',
  'resume-open-fast',
  'resume-parse',
  'resume-scan',
];

/** Writes the log: one batch (one store.append) per turn, as a live session's recorder would. */
async function writeLog(dir: string, turns: number): Promise<void> {
  mkdirSync(dir, { recursive: true });
  const store = await openJsonlStore(dir, { fsync: false });
  await store.create({ version: SESSION_FORMAT_VERSION, id: SESSION, createdAt: BENCH_TIME0 });
  const session = Session.create({ id: SESSION, clock: benchClock() });
  const source = new TurnSource();
  for (let turn = 0; turn < turns; turn++) {
    const first = session.seq;
    for (const append of source.turn(turn, first)) appendTurnEvent(session, append);
    const events: SessionEvent[] = [];
    for (let seq = first; seq < session.seq; seq++) events.push(session.event(seq) as SessionEvent);
    await store.append(SESSION, events, { expectedSeq: first });
  }
  await store.close();
}

function runChild(args: readonly string[]): ResumeChildResult {
  const result = spawnSync(process.execPath, [...process.execArgv, CHILD, ...args], {
    encoding: 'utf8',
    maxBuffer: 64 * 2 ** 20,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  if (result.status !== 0) throw new Error(`child ${args.join(' ')} failed`);
  return JSON.parse(result.stdout.trim().split('\n').at(-1) ?? '') as ResumeChildResult;
}

async function main(): Promise<void> {
  const turns = Number(process.argv[5] ?? TURNS);
  const given = process.argv[2] ?? '';
  const dir =
    given === ''
      ? join(tmpdir(), `palimpsest-resume-bench${turns === TURNS ? '' : `-${turns}`}`)
      : given;
  const reps = Number(process.argv[3] ?? 3);
  const modes = (process.argv[4] ?? ALL_MODES.join(',')).split(',');
  const file = join(dir, `${encodeSessionId(SESSION)}${LOG_SUFFIX}`);
  if (!existsSync(file)) {
    process.stderr.write(`writing ${turns} turns to ${file}...\n`);
    await writeLog(dir, turns);
  }
  process.stderr.write(
    `${file}: ${(statSync(file).size / 2 ** 20).toFixed(1)} MiB, ${turns * EVENTS_PER_TURN} events\n`,
  );
  const samples = new Map<string, ResumeChildResult[]>(modes.map((mode) => [mode, []]));
  for (let rep = 0; rep < reps; rep++) {
    for (const mode of modes) {
      const args = mode === 'resume-parse' || mode === 'resume-scan' ? [file] : [dir, SESSION];
      samples.get(mode)?.push(runChild([mode, ...args]));
    }
  }
  const parse = samples.get('resume-parse');
  const floor =
    parse === undefined || parse.length === 0 ? undefined : median(parse.map((s) => s.ns));
  const cpuFloor =
    parse === undefined || parse.length === 0 ? undefined : median(parse.map((s) => s.cpuNs ?? 0));
  for (const [mode, list] of samples) {
    const ns = median(list.map((s) => s.ns));
    const cpu = median(list.map((s) => s.cpuNs ?? 0));
    const parts = Object.keys(list[0]?.parts ?? {})
      .map((key) => `${key} ${(median(list.map((s) => s.parts[key] ?? 0)) / 1e6).toFixed(0)}`)
      .join(', ');
    const rss = median(list.map((s) => s.maxRss)) / 2 ** 20;
    const growth = median(list.map((s) => s.maxRss - s.rssBefore)) / 2 ** 20;
    const heap = median(list.map((s) => s.sessionHeap ?? 0)) / 2 ** 20;
    const surface = median(list.map((s) => s.surfaceHeap ?? 0)) / 2 ** 20;
    const derives = list.flatMap((s) => (s.deriveNs ? [s.deriveNs] : []));
    const derive =
      derives.length === 0
        ? ''
        : `  then deriveMessages() ${(median(derives) / 1e6).toFixed(2)} ms`;
    const memory =
      heap > 0
        ? `  growth ${growth.toFixed(0)} MiB, heap ${heap.toFixed(0)} MiB, surface ${surface.toFixed(0)} MiB`
        : '';
    process.stdout.write(
      `${mode.padEnd(18)} ${(ns / 1e6).toFixed(0).padStart(6)} ms${floor === undefined ? '' : `  ${(ns / floor).toFixed(2)}× parse`}  cpu ${(cpu / 1e6).toFixed(0)} ms${cpuFloor === undefined ? '' : ` ${(cpu / cpuFloor).toFixed(2)}×`}  rss ${rss.toFixed(0)} MiB${memory}${derive}  [${list.map((s) => (s.ns / 1e6).toFixed(0)).join(', ')}]  ${parts}\n`,
    );
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
