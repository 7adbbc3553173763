/**
 * The benchmark's PostgreSQL: the server URL the parent hands its children, one schema per
 * recorded directory (so runs never share tables), and the bytes a schema's relations take.
 */
import { basename } from 'node:path';
import pg from 'pg';

/** The environment variable that carries the server's URL to the child processes. */
export const PG_URL_ENV = 'PALIMPSEST_BENCH_PG_URL';

export function pgUrl(): string {
  const url = process.env[PG_URL_ENV];
  if (url === undefined || url === '') throw new Error(`${PG_URL_ENV} is not set`);
  return url;
}

export function hasPg(): boolean {
  return (process.env[PG_URL_ENV] ?? '') !== '';
}

/** A schema name for a run directory: its basename, folded to what an identifier allows. */
export function schemaFor(dir: string): string {
  return `b_${basename(dir)
    .toLowerCase()
    .replace(/[^a-z0-9_]/g, '_')}`.slice(0, 60);
}

/** Σ pg_total_relation_size (heap, TOAST, indexes) over the tables of `schema`. */
export async function schemaBytes(schema: string): Promise<number> {
  const client = new pg.Client({ connectionString: pgUrl() });
  await client.connect();
  try {
    const result = await client.query<{ bytes: string | null }>(
      `SELECT sum(pg_total_relation_size(c.oid))::text AS bytes FROM pg_class c
       JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relkind = 'r'`,
      [schema],
    );
    return Number(result.rows[0]?.bytes ?? 0);
  } finally {
    await client.end();
  }
}
