/**
 * How big a side-by-side run is: the full benchmark, the long one (past 16,384 derived messages
 * and 2M events, where V8's large arrays would show), or the smoke run CI keeps working.
 */

export interface Plan {
  readonly label: 'full' | 'long' | 'smoke';
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

/**
 * The full plan and 10,000 and 20,000 turns (about 40,000 and 80,000 derived messages), resuming
 * 10,000 turns (2.04M events) too. The peers with a `maxTurns` stop where they do in the full plan.
 */
export const LONG_PLAN: Plan = {
  ...FULL_PLAN,
  label: 'long',
  sizes: [...FULL_PLAN.sizes, 10_000, 20_000],
  resumeSizes: [...FULL_PLAN.resumeSizes, 10_000],
};

export const SMOKE_PLAN: Plan = {
  label: 'smoke',
  sizes: [60],
  resumeSizes: [60],
  runs: 1,
  concurrentSessions: 20,
  concurrentTurns: 3,
};
