/**
 * Writers killed with SIGKILL inside the windows the ledger's pairing opens (a real process, a
 * real kill): between an append's commit and its ledger record, again and again on one session;
 * between a new ledger's identity and the database naming it; between an adoption's ledger
 * records and its commit. None may make the next open fail, nor a session read as anything but
 * what was committed.
 */
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { adoptSqliteLedger, openSqliteStore } from '../../../src/store/sqlite/index.js';
import { event } from '../../core/builders.js';
import { untilOutput } from '../child-output.js';
import { rejection, useTempDir } from './helpers.js';

const WRITER = fileURLToPath(new URL('../fixtures/sqlite-ledger-writer.ts', import.meta.url));
const tempDir = useTempDir();

/** Runs the child until it reaches `failpoint`, then kills it; fails if it never does. */
async function killAt(file: string, failpoint: string, mode: 'append' | 'adopt'): Promise<void> {
  const child = spawn(process.execPath, ['--import', 'tsx', WRITER, file, failpoint, mode], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  await untilOutput(child, `FAILPOINT ${failpoint}`);
  child.kill('SIGKILL');
  await exited;
}

/** The tick events of session `s`, read through a read-only store. */
async function ticks(file: string): Promise<number> {
  const store = await openSqliteStore(file, { readOnly: true });
  try {
    const { events } = await store.load('s');
    return events.filter((event) => event.type === 'app/tick').length;
  } finally {
    await store.close();
  }
}

describe('a SQLite writer killed inside a window of the ledger', () => {
  it('between a commit and its ledger record, three times running on one session: no false alarm', async () => {
    const file = join(tempDir(), 'sessions.db');
    for (let kill = 1; kill <= 3; kill++) {
      await killAt(file, 'append:before-ledger', 'append');
      // Each batch committed before the kill: the ledger is behind, never a loss.
      expect(await ticks(file)).toBe(kill);
    }
    const store = await openSqliteStore(file);
    const seq = (await store.load('s')).events.length;
    await store.append('s', [event(seq, 'app/x', {})], { expectedSeq: seq });
    await store.close();
  }, 60_000);

  it('between a new ledger’s identity and the database naming it: the next open pairs them', async () => {
    const file = join(tempDir(), 'sessions.db');
    await killAt(file, 'pair:before-commit', 'append');
    const store = await openSqliteStore(file);
    await store.create({ version: 1, id: 'after', createdAt: 1 });
    await store.close();
  }, 60_000);

  it('between an adoption’s ledger records and its commit: a typed refusal, and adopting again works', async () => {
    const file = join(tempDir(), 'sessions.db');
    await killAt(file, 'append:after-commit', 'append');
    rmSync(`${file}-lengths`);
    await killAt(file, 'adopt:before-commit', 'adopt');
    // The new ledger names an identity the database does not (yet) name.
    expect(await rejection(openSqliteStore(file))).toMatchObject({ code: 'LEDGER_MISMATCH' });
    expect((await adoptSqliteLedger(file)).found).toBe('foreign');
    expect(await ticks(file)).toBe(1);
  }, 60_000);
});
