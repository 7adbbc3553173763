import { configDefaults, defineConfig } from 'vitest/config';

/**
 * Every test but the reliability suite (`npm run test:all`, what CI runs): the fast suite with
 * its property and fuzz tests at their full counts, and the slow files of test/suites.ts, against
 * a throwaway PostgreSQL server (test/postgres/global-setup.ts) and Debian's Chromium.
 */
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The reliability harnesses run in their own suite (vitest.reliability.config.ts), once.
    exclude: [...configDefaults.exclude, 'test/reliability/**'],
    testTimeout: 60_000,
    globalSetup: ['test/build-once.ts', 'test/postgres/global-setup.ts'],
    env: { PALIMPSEST_FULL_RUNS: '1' },
  },
});
