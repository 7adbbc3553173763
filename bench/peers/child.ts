/**
 * One measurement of the side-by-side benchmark in a process of its own (bench/peers/run.ts
 * starts it): a clean heap, its own peak RSS, and only the modules of the system it drives.
 * Prints one JSON line on stdout.
 *
 *   node --expose-gc --import tsx bench/peers/child.ts append <system> <turns> <dir>
 *   node --expose-gc --import tsx bench/peers/child.ts resume <target> <dir>
 *   node --expose-gc --import tsx bench/peers/child.ts concurrent <system> <sessions> <turns> <dir>
 */
import { collectGarbage, consume } from '../measure.js';
import { resumeNamed, systemNamed } from './systems/index.js';

/** The session id of every measured run. */
export const SESSION = 'bench';
/** Turns at the end of an append run after each of which the next request is derived. */
export const DERIVE_TURNS = 5;

export interface AppendResult {
  /** Per-turn ns, from the turn's first append to the system's acknowledgement. */
  readonly turnNs: number[];
  /** ns of deriving the next request after each of the last {@link DERIVE_TURNS} turns. */
  readonly deriveNs: number[];
  readonly bytes: number;
  readonly maxRss: number;
  readonly rssBefore: number;
}

export interface ResumeResult {
  readonly ns: number;
  /** CPU time (user + system, every thread) of the same span: steadier on a shared machine. */
  readonly cpuNs: number;
  readonly messages: number;
  readonly maxRss: number;
  readonly rssBefore: number;
}

export interface ConcurrentResult {
  /** ns of each round, in which every session appends one turn (all at once). */
  readonly roundNs: number[];
  readonly maxRss: number;
  readonly rssBefore: number;
}

const now = (): bigint => process.hrtime.bigint();
const maxRss = (): number => process.resourceUsage().maxRSS * 1024;

async function append(name: string, turns: number, dir: string): Promise<AppendResult> {
  const store = await systemNamed(name).open(dir);
  const session = await store.openSession(SESSION);
  collectGarbage();
  const rssBefore = process.memoryUsage().rss;
  const turnNs: number[] = [];
  const deriveNs: number[] = [];
  for (let turn = 0; turn < turns; turn++) {
    session.prepareTurn?.();
    const start = now();
    await session.appendTurn();
    turnNs.push(Number(now() - start));
    if (session.derive !== undefined && turn >= turns - DERIVE_TURNS) {
      const at = now();
      consume(await session.derive());
      deriveNs.push(Number(now() - at));
    }
  }
  const peak = maxRss();
  await session.close();
  await store.close();
  const bytes = (await store.bytes?.()) ?? 0;
  return { turnNs, deriveNs, bytes, maxRss: peak, rssBefore };
}

async function resume(name: string, dir: string): Promise<ResumeResult> {
  const run = await resumeNamed(name).prepare(dir, SESSION);
  collectGarbage();
  const rssBefore = process.memoryUsage().rss;
  const cpu = process.cpuUsage();
  const start = now();
  const resumed = await run();
  const ns = Number(now() - start);
  const used = process.cpuUsage(cpu);
  const peak = maxRss();
  await resumed.close();
  const cpuNs = (used.user + used.system) * 1000;
  return { ns, cpuNs, messages: resumed.messages, maxRss: peak, rssBefore };
}

async function concurrent(
  name: string,
  sessions: number,
  turns: number,
  dir: string,
): Promise<ConcurrentResult> {
  const store = await systemNamed(name).open(dir);
  const recorders = await Promise.all(
    Array.from({ length: sessions }, (_, i) => store.openSession(`s${i}`)),
  );
  collectGarbage();
  const rssBefore = process.memoryUsage().rss;
  const roundNs: number[] = [];
  for (let turn = 0; turn < turns; turn++) {
    for (const recorder of recorders) recorder.prepareTurn?.();
    const start = now();
    await Promise.all(recorders.map((recorder) => recorder.appendTurn()));
    roundNs.push(Number(now() - start));
  }
  const peak = maxRss();
  for (const recorder of recorders) await recorder.close();
  await store.close();
  return { roundNs, maxRss: peak, rssBefore };
}

async function main(): Promise<void> {
  const [mode, name, ...rest] = process.argv.slice(2);
  const arg = (i: number): string => {
    const value = rest[i];
    if (value === undefined || name === undefined) throw new Error(`${mode}: missing argument`);
    return value;
  };
  let result: AppendResult | ResumeResult | ConcurrentResult;
  if (mode === 'append') result = await append(String(name), Number(arg(0)), arg(1));
  else if (mode === 'resume') result = await resume(String(name), arg(0));
  else if (mode === 'concurrent') {
    result = await concurrent(String(name), Number(arg(0)), Number(arg(1)), arg(2));
  } else throw new Error(`unknown mode ${String(mode)}`);
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
