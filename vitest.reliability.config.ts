import { defineConfig } from 'vitest/config';

/**
 * The standing reliability suite (`npm run test:reliability`; `npm run test:soak` for larger
 * counts): crash, power loss, corruption, disk faults, concurrency, hostile input and mutants,
 * per backend. Its global setup bundles the child writer and, at the end, renders
 * docs/reliability.md from the counts each harness recorded.
 */
export default defineConfig({
  test: {
    include: ['test/reliability/**/*.test.ts'],
    testTimeout: 10 * 60_000,
    hookTimeout: 120_000,
    globalSetup: ['test/build-once.ts', 'test/reliability/setup.ts'],
    // Two cores: one file at a time keeps the kill timings and takeover measurements honest.
    fileParallelism: false,
  },
});
