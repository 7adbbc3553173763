/**
 * How many cases a property or fuzz test draws. `npm test` draws a tenth of each test's full
 * count (at least 20), so the fast suite stays fast and every property still runs;
 * `npm run test:all`, which CI runs, sets `PALIMPSEST_FULL_RUNS=1` (vitest.all.config.ts) and
 * draws the full count.
 */

/** True when the full counts are asked for (`PALIMPSEST_FULL_RUNS=1`). */
export const fullRuns: boolean = process.env.PALIMPSEST_FULL_RUNS === '1';

/**
 * The number of runs for a property whose full count is `full`: `full` under test:all, else
 * `fast` (by default a tenth of `full`, at least 20 and at most `full`).
 */
export function fuzzRuns(
  full: number,
  fast = Math.min(full, Math.max(20, Math.ceil(full / 10))),
): number {
  return fullRuns ? full : fast;
}
