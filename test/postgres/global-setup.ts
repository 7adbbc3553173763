/**
 * Vitest global setup: a PostgreSQL server for the tests that need one. `PALIMPSEST_PG_URL`
 * names one to use; otherwise a throwaway server is started here and stopped after the run.
 * Without PostgreSQL binaries the tests are skipped, loudly, unless `PALIMPSEST_REQUIRE_PG=1`
 * (set by `.ci/run`) makes that a failure.
 */
import type { TestProject } from 'vitest/node';
import { type PostgresServer, startPostgres } from './server.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The server's URL, or '' when there is none (the PostgreSQL tests then skip). */
    pgUrl: string;
  }
}

let server: PostgresServer | undefined;

export async function setup(project: TestProject): Promise<void> {
  const given = process.env.PALIMPSEST_PG_URL;
  if (given !== undefined && given !== '') {
    project.provide('pgUrl', given);
    return;
  }
  try {
    server = await startPostgres();
    project.provide('pgUrl', server.url);
  } catch (error) {
    if (process.env.PALIMPSEST_REQUIRE_PG === '1') throw error;
    console.warn(
      `\n*** PostgreSQL tests are SKIPPED: ${(error as Error).message}. Set PALIMPSEST_PG_URL or install PostgreSQL (initdb, pg_ctl). ***\n`,
    );
    project.provide('pgUrl', '');
  }
}

export function teardown(): void {
  server?.stop();
  server = undefined;
}
