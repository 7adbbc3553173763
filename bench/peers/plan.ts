/** How big a side-by-side run is: the full benchmark, or the smoke run CI keeps working. */

export interface Plan {
  readonly label: 'full' | 'smoke';
  /** Turns of the recorded session. */
  readonly sizes: readonly number[];
  /** Sizes resumed in fresh processes (their sessions recorded in the first append round). */
  readonly resumeSizes: readonly number[];
  /** Rounds of every measurement, the systems in a rotated order each round. */
  readonly runs: number;
  readonly concurrentSessions: number;
  readonly concurrentTurns: number;
}

export const FULL_PLAN: Plan = {
  label: 'full',
  sizes: [10, 1_000, 5_000],
  resumeSizes: [5_000],
  runs: 5,
  concurrentSessions: 20,
  concurrentTurns: 20,
};

export const SMOKE_PLAN: Plan = {
  label: 'smoke',
  sizes: [60],
  resumeSizes: [60],
  runs: 1,
  concurrentSessions: 20,
  concurrentTurns: 3,
};
