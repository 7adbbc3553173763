/**
 * Timing helpers: monotonic nanosecond clock, medians, forced GC between phases, and a sink that
 * keeps the optimizer from discarding measured work.
 */

/** Nanoseconds `fn` takes, once. */
export function timeNs(fn: () => void): number {
  const start = process.hrtime.bigint();
  fn();
  return Number(process.hrtime.bigint() - start);
}

export function median(values: readonly number[]): number {
  if (values.length === 0) throw new RangeError('median of nothing');
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

/** The sorted sample's value at quantile `q` (nearest rank). */
export function quantile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? 0;
}

/** Relative spread of a sample: (max - min) / median. */
export function spread(values: readonly number[]): number {
  return (Math.max(...values) - Math.min(...values)) / median(values);
}

/** True when node runs with `--expose-gc`. */
export const gcAvailable = typeof globalThis.gc === 'function';

/** Runs a full GC when `--expose-gc` is on (twice, so weak tables and finalizers settle). */
export function collectGarbage(): void {
  const gc = globalThis.gc;
  if (gc === undefined) return;
  gc();
  gc();
}

let sinkValue = 0;

/** Feeds a value into a global sink so measured work cannot be optimized away. */
export function consume(value: number): void {
  sinkValue = (sinkValue + value) | 0;
}

/** The sink's value (print it once so the sink itself stays live). */
export function sink(): number {
  return sinkValue;
}

/** Samples of a paired measurement: `ours` and `floor` alternate, each after a forced GC. */
export interface PairedSamples {
  readonly ours: number[];
  readonly floor: number[];
}

/**
 * Runs `ours` and `floor` alternately `reps` times (after `warmup` untimed rounds of each) and
 * returns their wall times in ns. Alternation spreads drift (thermal, other tenants) evenly.
 */
export function paired(
  reps: number,
  warmup: number,
  ours: () => void,
  floor: () => void,
): PairedSamples {
  for (let i = 0; i < warmup; i++) {
    ours();
    floor();
  }
  const samples: PairedSamples = { ours: [], floor: [] };
  for (let i = 0; i < reps; i++) {
    collectGarbage();
    samples.ours.push(timeNs(ours));
    collectGarbage();
    samples.floor.push(timeNs(floor));
  }
  return samples;
}

/** Overhead of one `process.hrtime.bigint()` pair, median of many (included in per-op timings). */
export function timerOverheadNs(): number {
  const samples: number[] = [];
  for (let i = 0; i < 10_001; i++) {
    const start = process.hrtime.bigint();
    samples.push(Number(process.hrtime.bigint() - start));
  }
  return median(samples);
}

/**
 * {@link paired} for asynchronous work with untimed setup: `ours` and `floor` each run their own
 * setup, time only the measured part (for example with {@link timeNsAsync}) and resolve to those
 * nanoseconds. They alternate `reps` times after `warmup` rounds, each after a forced GC.
 */
export async function pairedTimed(
  reps: number,
  warmup: number,
  ours: () => Promise<number>,
  floor: () => Promise<number>,
): Promise<PairedSamples> {
  for (let i = 0; i < warmup; i++) {
    await ours();
    await floor();
  }
  const samples: PairedSamples = { ours: [], floor: [] };
  for (let i = 0; i < reps; i++) {
    collectGarbage();
    samples.ours.push(await ours());
    collectGarbage();
    samples.floor.push(await floor());
  }
  return samples;
}

/** Medians of {@link pairedRounds}: each side's time in ns, and the median of the rounds' ratios. */
export interface PairedFigures {
  readonly ours: number;
  readonly floor: number;
  /** Median of the rounds' ours / floor. */
  readonly ratio: number;
}

/**
 * `ours` and `floor`, each resolving to the nanoseconds it measured, run `reps` rounds after one
 * warm-up round, each after a forced GC, alternating which runs first so drift falls on both.
 */
export async function pairedRounds(
  reps: number,
  ours: () => Promise<number>,
  floor: () => Promise<number>,
): Promise<PairedFigures> {
  const oursNs: number[] = [];
  const floorNs: number[] = [];
  const ratios: number[] = [];
  for (let round = -1; round < reps; round++) {
    collectGarbage();
    const first = round % 2 === 0 ? await ours() : await floor();
    collectGarbage();
    const second = round % 2 === 0 ? await floor() : await ours();
    const [o, f] = round % 2 === 0 ? [first, second] : [second, first];
    if (round < 0) continue;
    oursNs.push(o);
    floorNs.push(f);
    ratios.push(o / f);
  }
  return { ours: median(oursNs), floor: median(floorNs), ratio: median(ratios) };
}

/** Nanoseconds `fn` takes until its promise settles, once. */
export async function timeNsAsync(fn: () => Promise<void>): Promise<number> {
  const start = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - start);
}
