import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The reliability harnesses run in their own suite (vitest.reliability.config.ts), once.
    exclude: [...configDefaults.exclude, 'test/reliability/**'],
    testTimeout: 60_000,
    globalSetup: ['test/build-once.ts', 'test/postgres/global-setup.ts'],
  },
});
