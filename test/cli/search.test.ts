/**
 * `palimpsest search` as a user runs it: over sessions imported from real Claude Code files, on
 * JSONL and SQLite, with its exit codes (0 found, 9 nothing found, 2 a query it cannot read),
 * `--json`, `--rebuild`, and over an encrypted store, whose clear text is never indexed.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  EncryptedStore,
  FileKeyVault,
  masterKeyFromFile,
  openStore,
} from '../../src/store/index.js';
import { SEARCH_INDEX_FILE as SEARCH_FILE_NAME } from '../../src/store/jsonl/paths.js';
import { MARKER, recordGovernedSession } from '../store/governed-session.js';
import { cli, tempStores } from './helpers.js';

const stores = tempStores();
afterAll(() => stores.remove());
const corpus = join(
  import.meta.dirname,
  '..',
  'import',
  'corpus',
  'claude-code',
  'spotter--short.jsonl',
);

describe.each(['jsonl', 'sqlite'] as const)('palimpsest search on %s', (backend) => {
  const store = stores.urls[backend];

  it('finds words of an imported session, with its seq, and prints JSON with --json', () => {
    const imported = cli(['--store', store, 'import', corpus, '--from', 'claude-code']);
    expect(imported.code, imported.stderr).toBe(0);
    const found = cli(['--store', store, 'search', 'phx.server', 'start']);
    expect(found.stderr).toBe('');
    expect(found.code).toBe(0);
    expect(found.stdout).toMatch(/^SESSION +SEQ +ROLE +TIME +MATCH$/m);
    expect(found.stdout).toContain('«phx.server»');
    const json = cli(['--store', store, '--json', 'search', '"phx.server"', '--limit', '1']);
    expect(json.code).toBe(0);
    const result = JSON.parse(json.stdout) as {
      hits: { session: string; seq: number; role: string }[];
      method: string;
    };
    expect(result.method).toBe('index');
    expect(result.hits).toHaveLength(1);
    expect(result.hits[0]?.session).toMatch(/^claude-code-/);
    const shown = cli(['--store', store, 'show', result.hits[0]?.session as string]);
    expect(shown.stdout).toContain(`#${result.hits[0]?.seq} `);
  });

  it('exits 9 when nothing matches and 2 for a query it cannot read', () => {
    const none = cli(['--store', store, 'search', 'xylophonequartz']);
    expect(none.code).toBe(9);
    expect(none.stderr).toContain('no message matches');
    const bad = cli(['--store', store, 'search', '"unclosed']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('expected every " of the query to be closed');
    const since = cli(['--store', store, 'search', 'start', '--since', 'yesterday-ish']);
    expect(since.code).toBe(2);
    const nothing = cli(['--store', store, 'search']);
    expect(nothing.code).toBe(2);
  });

  it('rebuilds the index with --rebuild and filters by project and time', () => {
    const rebuilt = cli(['--store', store, 'search', '--rebuild']);
    expect(rebuilt.code).toBe(0);
    expect(rebuilt.stderr).toContain('search index rebuilt: 1 session(s) indexed');
    const project = cli([
      '--store',
      store,
      'search',
      'start',
      '--project',
      '/home/marco/projects/spotter',
    ]);
    expect(project.code).toBe(0);
    expect(cli(['--store', store, 'search', 'start', '--project', '/elsewhere']).code).toBe(9);
    expect(cli(['--store', store, 'search', 'start', '--until', '2026-01-01']).code).toBe(9);
    expect(cli(['--store', store, 'search', 'start', '--since', '2026-01-01']).code).toBe(0);
  });
});

describe('palimpsest search on an encrypted store', () => {
  it('finds sealed sessions for whoever gives the keys, and writes no index of their clear text', async () => {
    const url = `jsonl:${join(stores.dir, 'sealed')}`;
    const vault = join(stores.dir, 'keys');
    const keyFile = join(stores.dir, 'master.key');
    writeFileSync(keyFile, `${randomBytes(32).toString('hex')}\n`, { mode: 0o600 });
    const encrypted = new EncryptedStore(await openStore(url), {
      keys: await masterKeyFromFile(keyFile),
      vault: new FileKeyVault(vault),
    });
    await recordGovernedSession(encrypted, 'support-9');
    await encrypted.close();
    const run = cli([
      '--store',
      url,
      '--key-vault',
      vault,
      '--key-file',
      keyFile,
      '--json',
      'search',
      MARKER,
    ]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const result = JSON.parse(run.stdout) as { method: string; hits: unknown[] };
    expect(result.method).toBe('scan');
    expect(result.hits.length).toBeGreaterThan(0);
    expect(existsSync(join(stores.dir, 'sealed', SEARCH_FILE_NAME))).toBe(false);
  });
});
