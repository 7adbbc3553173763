import { configDefaults, defineConfig } from 'vitest/config';
import { slowTests } from './test/suites.js';

/**
 * The fast suite (`npm test`): core, stores on temporary directories, model, the agent loop
 * against in-process models, compaction, import, the adapters in-process, with property and fuzz
 * tests at a tenth of their counts (test/fuzz-runs.ts). It starts no PostgreSQL server and no
 * browser. `npm run test:all` (vitest.all.config.ts) adds the slow files of test/suites.ts.
 */
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The reliability harnesses run in their own suite (vitest.reliability.config.ts), once.
    exclude: [...configDefaults.exclude, 'test/reliability/**', ...slowTests],
    testTimeout: 60_000,
    // Some tests load the built package (dist/), so it is built first when it is stale.
    globalSetup: ['test/build-once.ts'],
  },
});
