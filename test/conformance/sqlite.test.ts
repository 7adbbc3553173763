/** The SessionStore contract suite against SQLite; a "restart" is a new store on the same file. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteStore } from '../../src/store/sqlite/index.js';
import { withRaw } from '../store/sqlite/helpers.js';
import { runStoreContract } from './contract.js';

interface Statement {
  run(...values: unknown[]): unknown;
  all(...values: unknown[]): unknown[];
}

runStoreContract('sqlite', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'palimpsest-sqlite-contract-'));
  const file = join(dir, 'sessions.db');
  const statement = (db: { prepare(sql: string): unknown }, sql: string): Statement =>
    db.prepare(sql) as Statement;
  return {
    store: await openSqliteStore(file),
    reopen: () => openSqliteStore(file),
    cleanup: async () => rmSync(dir, { recursive: true, force: true }),
    plantVersion: (id, version) =>
      withRaw(file, (db) => {
        statement(
          db,
          "UPDATE sessions SET header = json_set(header, '$.version', ?) WHERE id = ?",
        ).run(version, id);
      }),
    plantDamagedHeader: (id) =>
      withRaw(file, (db) => {
        statement(db, "UPDATE sessions SET header = '{' WHERE id = ?").run(id);
      }),
    plantDamagedEvent: (id, seq) =>
      withRaw(file, (db) => {
        const key = '(SELECT key FROM sessions WHERE id = ?)';
        statement(
          db,
          `UPDATE events SET time = time + 1 WHERE seq = ? AND session_id = ${key}`,
        ).run(seq, id);
        // A finished chunk lives in a run: damage the run's time for it.
        statement(
          db,
          `UPDATE chunk_runs SET time = time + 1 WHERE ? BETWEEN first_seq AND first_seq + count - 1 AND session_id = ${key}`,
        ).run(seq, id);
      }),
    fingerprint: (id) =>
      withRaw(file, (db) =>
        JSON.stringify([
          statement(db, 'SELECT * FROM sessions WHERE id = ?').all(id),
          statement(
            db,
            'SELECT * FROM events WHERE session_id = (SELECT key FROM sessions WHERE id = ?) ORDER BY seq',
          ).all(id),
          statement(
            db,
            'SELECT * FROM chunk_runs WHERE session_id = (SELECT key FROM sessions WHERE id = ?) ORDER BY first_seq',
          ).all(id),
        ]),
      ),
  };
});
