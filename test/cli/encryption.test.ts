/**
 * An encrypted store from the command line: commands read it with `--key-vault` and the master
 * key, refuse it without them (exit 10, never printing a key), `verify --integrity` checks its
 * chain without keys, and `shred` makes a session unreadable for good.
 */
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  EncryptedStore,
  FileKeyVault,
  masterKeyFromFile,
  openStore,
} from '../../src/store/index.js';
import { MARKER, recordGovernedSession } from '../store/governed-session.js';
import { storedBytes } from '../store/stored-bytes.js';
import { cli, tempStores } from './helpers.js';

const stores = tempStores();
const store = stores.urls.jsonl;
const vault = join(stores.dir, 'keys');
const keyFile = join(stores.dir, 'master.key');
const masterKey = randomBytes(32).toString('hex');
const withKeys = ['--store', store, '--key-vault', vault, '--key-file', keyFile];

beforeAll(async () => {
  writeFileSync(keyFile, `${masterKey}\n`, { mode: 0o600 });
  const encrypted = new EncryptedStore(await openStore(store), {
    keys: await masterKeyFromFile(keyFile),
    vault: new FileKeyVault(vault),
  });
  await recordGovernedSession(encrypted, 'support-9');
  await recordGovernedSession(encrypted, 'support-10');
  await encrypted.close();
});
afterAll(() => stores.remove());

describe('an encrypted store', () => {
  it('holds no plaintext, and shows its sessions to whoever gives the keys', () => {
    expect([...storedBytes(store).values()].some((text) => text.includes(MARKER))).toBe(false);
    const run = cli([...withKeys, 'show', 'support-9']);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(MARKER);
    const env = cli(['--store', store, 'show', 'support-9'], {
      env: { PALIMPSEST_KEY_VAULT: vault, PALIMPSEST_MASTER_KEY: masterKey },
    });
    expect(env.code).toBe(0);
    expect(env.stdout).toContain(MARKER);
  });

  it('is listed without keys, but its content is refused with exit 10', () => {
    const ls = cli(['--store', store, 'ls']);
    expect(ls.code).toBe(0);
    expect(ls.stdout).toContain('support-9');
    const show = cli(['--store', store, 'show', 'support-9']);
    expect(show.code).toBe(10);
    expect(show.stderr).toContain('is encrypted');
    expect(show.stderr).toContain('--key-vault');
    expect(show.stdout).not.toContain(MARKER);
  });

  it('verifies its hash chain without keys, and its content only with them', () => {
    const keyless = cli(['--store', store, 'verify', 'support-9', '--integrity']);
    expect(keyless.code).toBe(0);
    expect(keyless.stdout).toContain('the hash chain was checked, the content was not');
    expect(cli(['--store', store, 'verify', 'support-9']).code).toBe(7);
    const full = cli([...withKeys, 'verify', 'support-9', '--integrity']);
    expect(full.code).toBe(0);
    expect(full.stdout).not.toContain('the content was not');
  });

  it('refuses a wrong master key, or half of the keys, without printing any key', () => {
    const wrong = randomBytes(32).toString('hex');
    const run = cli(['--store', store, '--key-vault', vault, 'show', 'support-9'], {
      env: { PALIMPSEST_MASTER_KEY: wrong },
    });
    expect(run.code).toBe(10);
    expect(run.stderr).toContain('does not unwrap');
    expect(run.stderr + run.stdout).not.toContain(wrong);
    const noKey = cli(['--store', store, '--key-vault', vault, 'show', 'support-9']);
    expect(noKey.code).toBe(2);
    expect(noKey.stderr).toContain('without the master key');
    const noVault = cli(['--store', store, '--key-file', keyFile, 'show', 'support-9']);
    expect(noVault.code).toBe(2);
    const bad = cli(['--store', store, '--key-vault', vault, 'show', 'support-9'], {
      env: { PALIMPSEST_MASTER_KEY: 'hunter2-not-a-key' },
    });
    expect(bad.code).toBe(2);
    expect(bad.stderr).not.toContain('hunter2');
  });

  it('converts to another backend sealed as it was, readable there with the same keys', () => {
    const target = stores.urls.sqlite;
    const run = cli([...withKeys, 'convert', 'support-9', '--to', target]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect([...storedBytes(target).values()].some((text) => text.includes(MARKER))).toBe(false);
    const shown = cli([
      '--store',
      target,
      '--key-vault',
      vault,
      '--key-file',
      keyFile,
      'show',
      'support-9',
    ]);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain(MARKER);
    expect(cli(['--store', target, 'show', 'support-9']).code).toBe(10);
  });

  it('shreds a key so the session can no longer be read, and says when there was none', () => {
    const shred = cli(['--store', store, '--key-vault', vault, 'shred', 'support-10']);
    expect(shred.code).toBe(0);
    expect(shred.stdout).toContain('support-10: key shredded');
    const again = cli(['--store', store, '--key-vault', vault, 'shred', 'support-10']);
    expect(again.code).toBe(9);
    const show = cli([...withKeys, 'show', 'support-10']);
    expect(show.code).toBe(10);
    expect(show.stderr).toContain('was shredded');
    // The other session still reads, and the shredded one's chain still checks.
    expect(cli([...withKeys, 'show', 'support-9']).code).toBe(0);
    const ls = cli([...withKeys, 'ls']);
    expect(ls.code).toBe(0);
    expect(ls.stdout).toMatch(/UNREADABLE support-10: .*shredded/);
    expect(ls.stdout).toMatch(/support-9 +\S+ \S+ +3 /);
    expect(cli(['--store', store, 'verify', 'support-10', '--integrity']).code).toBe(0);
    const shredded = cli([...withKeys, 'verify', 'support-10', '--integrity']);
    expect(shredded.code).toBe(0);
    expect(shredded.stdout).toContain('its key was shredded: the hash chain was checked');
    expect(cli([...withKeys, 'verify', 'support-10']).code).toBe(7);
    // Retention measures what is stored, so a shredded session is planned like any other.
    const plan = cli([...withKeys, 'gc', '--keep', '1']);
    expect(plan.stderr).toBe('');
    expect(plan.code).toBe(0);
    expect(cli(['--store', store, 'shred', 'support-9']).code).toBe(2);
  });
});
