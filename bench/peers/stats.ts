/** Summaries of repeated measurements: min/median/max over rounds, windows of a per-turn series. */
import { median, quantile } from '../measure.js';
import { formatDuration } from '../report.js';

export interface Spread {
  readonly min: number;
  readonly median: number;
  readonly max: number;
}

export function spreadOf(values: readonly number[]): Spread {
  return { min: Math.min(...values), median: median(values), max: Math.max(...values) };
}

/** `median (min–max)` in the unit `format` gives. */
export function formatSpread(
  spread: Spread,
  format: (value: number) => string = formatDuration,
): string {
  return `${format(spread.median)} (${format(spread.min)}–${format(spread.max)})`;
}

/** The per-turn median over rounds: element i is the median of turn i across the rounds. */
export function perTurnMedian(rounds: readonly (readonly number[])[]): number[] {
  const length = Math.min(...rounds.map((round) => round.length));
  return Array.from({ length }, (_, i) => median(rounds.map((round) => round[i] ?? 0)));
}

/** Median of turns `from`..`to` (1-based, inclusive) of a per-turn series. */
export function windowMedian(series: readonly number[], from: number, to: number): number {
  const slice = series.slice(Math.max(0, from - 1), Math.min(series.length, to));
  return slice.length === 0 ? Number.NaN : median(slice);
}

export { median, quantile };
