/**
 * Global setup of the reliability suite: bundles the child processes once (a bundled child
 * starts in ~60 ms where `node --import tsx` takes ~300 ms, and the crash harness starts
 * hundreds), makes the results directory the harnesses write their tallies to, and at the end
 * renders docs/reliability.md from those tallies.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildSync } from 'esbuild';
import type { TestProject } from 'vitest/node';
import { renderReport } from './report.js';

const root = join(import.meta.dirname, '..', '..');

export default function setup(project: TestProject): () => void {
  // Inside node_modules so the bundle resolves better-sqlite3 (left external: it is native). A
  // directory of this run's own: checkouts that share one node_modules (worktrees) may run the
  // suite at once, and must not run each other's children.
  const cache = join(root, 'node_modules', '.cache');
  mkdirSync(cache, { recursive: true });
  const bundle = mkdtempSync(join(cache, 'palimpsest-reliability-'));
  buildSync({
    entryPoints: {
      writer: join(import.meta.dirname, 'lib', 'writer.ts'),
      contender: join(import.meta.dirname, 'lib', 'contender.ts'),
      'pg-writer': join(import.meta.dirname, '..', 'store', 'postgres', 'fleet-worker.ts'),
    },
    outdir: bundle,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    external: ['better-sqlite3', 'pg'],
    logLevel: 'warning',
  });
  const results = mkdtempSync(join(tmpdir(), 'palimpsest-reliability-results-'));
  project.provide('reliabilityBundle', bundle);
  project.provide('reliabilityResults', results);
  const started = Date.now();
  return () => {
    try {
      renderReport(results, { seconds: (Date.now() - started) / 1000 });
    } finally {
      rmSync(results, { recursive: true, force: true });
      rmSync(bundle, { recursive: true, force: true });
    }
  };
}
