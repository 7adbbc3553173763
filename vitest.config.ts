import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    globalSetup: ['test/build-once.ts', 'test/postgres/global-setup.ts'],
  },
});
