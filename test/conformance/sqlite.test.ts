/** The SessionStore contract suite against SQLite; a "restart" is a new store on the same file. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteStore } from '../../src/store/sqlite/index.js';
import { runStoreContract } from './contract.js';

runStoreContract('sqlite', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'palimpsest-sqlite-contract-'));
  const file = join(dir, 'sessions.db');
  return {
    store: await openSqliteStore(file),
    reopen: () => openSqliteStore(file),
    cleanup: async () => rmSync(dir, { recursive: true, force: true }),
  };
});
