/**
 * Fixtures of the PostgreSQL tests: the server of the global setup, a fresh schema per test, and
 * raw queries that bypass the store (to damage what it wrote, or look at it).
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { describe, inject } from 'vitest';

/** The server's URL; '' when there is none. */
export const pgUrl: string = inject('pgUrl');

/** `describe`, or `describe.skip` with the reason when there is no server. */
export const describePg: typeof describe = (
  pgUrl === '' ? describe.skip : describe
) as typeof describe;

/** A schema name no other test uses. */
export function freshSchema(prefix = 't'): string {
  return `${prefix}_${randomBytes(6).toString('hex')}`;
}

/** Runs `work` with a raw client of its own, closed afterwards. */
export async function withClient<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: pgUrl });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** Drops a test's schema and everything in it. */
export function dropSchema(schema: string): Promise<void> {
  return withClient(async (client) => {
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  });
}
