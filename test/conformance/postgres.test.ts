/** The SessionStore contract suite against PostgreSQL: a fresh schema of a real server per test. */
import { openPostgresStore } from '../../src/store/postgres/index.js';
import { describePg, dropSchema, freshSchema, pgUrl, withClient } from '../postgres/helpers.js';
import { runStoreContract } from './contract.js';

describePg('postgres', () => {
  runStoreContract('postgres', async () => {
    const schema = freshSchema('conformance');
    const open = () => openPostgresStore({ connectionString: pgUrl, schema, maxConnections: 4 });
    const sql = (text: string, values: unknown[]) =>
      withClient(async (client) => {
        await client.query(text, values);
      });
    return {
      store: await open(),
      reopen: open,
      cleanup: () => dropSchema(schema),
      plantVersion: async (id, version) => {
        await withClient(async (client) => {
          const { rows } = await client.query(
            `SELECT header FROM "${schema}".sessions WHERE id = $1`,
            [id],
          );
          const header = JSON.parse(rows[0].header as string) as Record<string, unknown>;
          await client.query(`UPDATE "${schema}".sessions SET header = $1 WHERE id = $2`, [
            JSON.stringify({ ...header, version }),
            id,
          ]);
        });
      },
      plantDamagedHeader: (id) =>
        sql(`UPDATE "${schema}".sessions SET header = '{' WHERE id = $1`, [id]),
      // A changed time, which only the row's checksum finds. A finished chunk lives in a run:
      // damage the run's time for it.
      plantDamagedEvent: async (id, seq) => {
        const key = `(SELECT key FROM "${schema}".sessions WHERE id = $2)`;
        await sql(
          `UPDATE "${schema}".events SET time = time + 1 WHERE seq = $1 AND session_key = ${key}`,
          [seq, id],
        );
        await sql(
          `UPDATE "${schema}".chunk_runs SET time = time + 1 WHERE $1 BETWEEN first_seq AND first_seq + count - 1 AND session_key = ${key}`,
          [seq, id],
        );
      },
      fingerprint: (id) =>
        withClient(async (client) => {
          const session = await client.query(`SELECT * FROM "${schema}".sessions WHERE id = $1`, [
            id,
          ]);
          const events = await client.query(
            `SELECT * FROM "${schema}".events WHERE session_key = (SELECT key FROM "${schema}".sessions WHERE id = $1) ORDER BY seq`,
            [id],
          );
          const runs = await client.query(
            `SELECT * FROM "${schema}".chunk_runs WHERE session_key = (SELECT key FROM "${schema}".sessions WHERE id = $1) ORDER BY first_seq`,
            [id],
          );
          return JSON.stringify([session.rows, events.rows, runs.rows]);
        }),
    };
  });
});
