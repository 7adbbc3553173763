/**
 * Exit codes and messages for damage the CLI meets on open, with real damaged files: a SQLite
 * database whose schema or header is damaged is corrupt (exit 4), not a usage mistake (2) or an
 * unexpected failure (1); a file that is not a palimpsest database at all stays a usage mistake.
 * And a read-only command lists a store in a directory its user cannot write.
 */
import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  copyFileSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/index.js';
import { event } from '../core/builders.js';
import { binary, cli, tempStores } from './helpers.js';

const stores = tempStores();
afterAll(() => stores.remove());
const pristine = join(stores.dir, 'pristine.db');

beforeAll(async () => {
  const store = await openStore(`sqlite:${pristine}`);
  await store.create({ version: 1, id: 's', createdAt: 1 });
  await store.append('s', [event(0, 'app/x', {}, { time: 1 })], { expectedSeq: 0 });
  await store.close();
});

let cases = 0;
/** A copy of the database (and its ledger), damaged by `damage`. */
async function damaged(damage: (file: string) => void | Promise<void>): Promise<string> {
  const file = join(stores.dir, `case-${++cases}.db`);
  copyFileSync(pristine, file);
  copyFileSync(`${pristine}-lengths`, `${file}-lengths`);
  await damage(file);
  return file;
}

function flip(file: string, offset: number): void {
  const bytes = readFileSync(file);
  bytes[offset] = (bytes[offset] as number) ^ 0x10;
  writeFileSync(file, bytes);
}

/**
 * Replaces text of the schema in the file's bytes, as flipped bytes in the schema table would
 * (same length, so the page stays well-formed; SQLite refuses to write its schema table).
 */
function rewriteSchema(from: string, to: string): (file: string) => void {
  return (file) => {
    const bytes = readFileSync(file);
    const at = bytes.indexOf(from);
    expect(at).toBeGreaterThan(0);
    bytes.write(to, at, 'latin1');
    writeFileSync(file, bytes);
  };
}

describe('a damaged SQLite database on open', () => {
  const run = (file: string, ...args: string[]) => cli([...args, '--store', `sqlite:${file}`]);

  it('a table whose columns differ from the schema version it claims is corrupt (exit 4)', async () => {
    const file = await damaged(rewriteSchema('header TEXT', 'heaXer TEXT'));
    for (const args of [['ls'], ['show', 's'], ['verify', '--all']]) {
      const result = run(file, ...args);
      expect(result.code).toBe(4);
      expect(result.stderr).toContain(`corrupt session log ${file}: the schema is damaged`);
      expect(result.stderr).toContain("table 'sessions' has columns");
    }
  });

  it('a schema SQLite cannot use is corrupt (exit 4), not an unexpected failure', async () => {
    // The view's SQL names a table that is not there: SQLITE_ERROR when a statement uses it.
    const file = await damaged(rewriteSchema('JOIN sessions ON', 'JOIN sessionX ON'));
    const result = run(file, 'ls');
    expect(result.code).toBe(4);
    expect(result.stderr).toContain('the schema is damaged: SQLite cannot use it');
    expect(result.stderr).not.toContain('[STORAGE]');
    // An index whose table is misnamed: SQLite itself reports the schema malformed.
    const index = await damaged(
      rewriteSchema('events_surface ON events', 'events_surface ON evXnts'),
    );
    expect(run(index, 'ls').code).toBe(4);
  });

  it('a damaged header field is corrupt (exit 4)', async () => {
    // Byte 21: the maximum embedded payload fraction, which must be 64.
    const file = await damaged((path) => flip(path, 21));
    expect(run(file, 'ls').code).toBe(4);
  });

  it('a damaged magic string beside palimpsest’s ledger is corrupt; without one it is not a database (exit 2)', async () => {
    const file = await damaged((path) => flip(path, 3));
    const ours = run(file, 'ls');
    expect(ours.code).toBe(4);
    expect(ours.stderr).toContain('the database header is damaged');
    rmSync(`${file}-lengths`);
    const foreign = run(file, 'ls');
    expect(foreign.code).toBe(2);
    expect(foreign.stderr).toContain('is not a SQLite database');
  });
});

describe('a SQLite database without the ledger it was paired with', () => {
  const run = (file: string, ...args: string[]) => cli([...args, '--store', `sqlite:${file}`]);

  it('is refused by every command (exit 4), no ledger is made, and repair --adopt-ledger adopts it, saying what it vouches for', () => {
    const file = join(stores.dir, `case-${++cases}.db`);
    copyFileSync(pristine, file);
    for (const args of [['ls'], ['verify', '--all'], ['show', 's'], ['repair', 's']]) {
      const result = run(file, ...args);
      expect(result.code, args.join(' ')).toBe(4);
      expect(result.stderr).toContain(`there is no ledger at ${file}-lengths`);
      expect(result.stderr).toContain('palimpsest repair --adopt-ledger');
    }
    expect(readdirSync(stores.dir)).not.toContain(`case-${cases}.db-lengths`);
    const adopted = run(file, 'repair', '--adopt-ledger');
    expect(adopted.code).toBe(0);
    expect(adopted.stdout).toContain(
      `there was no ledger beside it; a new one is at ${file}-lengths`,
    );
    expect(adopted.stdout).toContain(
      'a loss among their events before now can no longer be detected',
    );
    expect(adopted.stdout).toContain('s: 1 events (unknown to the ledger)');
    expect(run(file, 'verify', '--all').code).toBe(0);
    const again = run(file, '--json', 'repair', '--adopt-ledger', 's');
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({
      id: 's',
      adoption: { found: 'own', sessions: 1, newlyVouched: [], stillDamaged: [] },
    });
  });

  it('repair --adopt-ledger refuses a store that keeps no ledger (exit 2), and needs a session id or the option', () => {
    const jsonl = cli(['repair', '--adopt-ledger', '--store', stores.urls.jsonl]);
    expect(jsonl.code).toBe(2);
    expect(jsonl.stderr).toContain('only a sqlite: store keeps a ledger');
    const neither = cli(['repair', '--store', `sqlite:${pristine}`]);
    expect(neither.code).toBe(2);
    expect(neither.stderr).toContain('name the session to repair, or pass --adopt-ledger');
  });
});

const root = process.platform === 'linux' && process.getuid?.() === 0;
/**
 * The unprivileged user must be able to run the built binary: a checkout in a directory closed to
 * others (a `mktemp -d` clone, mode 0700) rules this test out, and it says so.
 */
const nobodyRuns =
  root &&
  spawnSync(process.execPath, [binary, '--version'], { uid: 65534, gid: 65534 }).status === 0;
if (root && !nobodyRuns) {
  console.warn(
    `*** skipped: the user nobody cannot run ${binary} (a parent directory is closed to others) ***`,
  );
}

describe.runIf(nobodyRuns)('a store in a directory its user cannot write', () => {
  it.each(['jsonl', 'sqlite'] as const)(
    '%s: ls and verify work read-only, creating nothing',
    async (backend) => {
      const url = stores.urls[backend];
      const store = await openStore(url);
      await store.create({ version: 1, id: 'ro', createdAt: 1 });
      await store.append('ro', [event(0, 'app/x', {}, { time: 5 })], { expectedSeq: 0 });
      await store.close();
      // The store's directory, given to an unprivileged user and made read-only for it.
      const dir =
        backend === 'jsonl' ? join(stores.dir, 'sessions') : join(stores.dir, 'sqlite-ro');
      let storeUrl = url;
      if (backend === 'sqlite') {
        rmSync(dir, { recursive: true, force: true });
        spawnSync('mkdir', [dir]);
        copyFileSync(join(stores.dir, 'sessions.db'), join(dir, 's.db'));
        copyFileSync(join(stores.dir, 'sessions.db-lengths'), join(dir, 's.db-lengths'));
        storeUrl = `sqlite:${join(dir, 's.db')}`;
      }
      const before = readdirSync(dir).sort();
      chmodSync(stores.dir, 0o755);
      for (const name of before) chownSync(join(dir, name), 65534, 65534);
      chownSync(dir, 65534, 65534);
      chmodSync(dir, 0o555);
      const asNobody = (...args: string[]) =>
        spawnSync(process.execPath, [binary, ...args, '--store', storeUrl], {
          encoding: 'utf8',
          uid: 65534,
          gid: 65534,
          env: { ...process.env, NO_COLOR: '1' },
        });
      const listed = asNobody('ls', '--json');
      expect(listed.stderr).toBe('');
      expect(listed.status).toBe(0);
      expect(JSON.parse(listed.stdout)).toMatchObject([{ id: 'ro', events: 1 }]);
      expect(asNobody('verify', '--all').status).toBe(0);
      expect(readdirSync(dir).sort()).toEqual(before);
      chmodSync(dir, 0o755);
    },
  );
});
