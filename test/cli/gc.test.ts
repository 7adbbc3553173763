/**
 * `palimpsest gc`, `archive` and `restore` (issue 37), the built binary run as a process on a
 * JSONL and a SQLite store, and on PostgreSQL with the slow suite's server: a dry run shows what
 * would go and why, changes nothing and says how to apply; `--delete` and `--archive DIR` apply it, and a run with nothing to remove exits 9;
 * archived sessions come back with `restore` and verify; a session a live writer holds is left
 * in place (exit 5); bad input is a usage error (exit 2) saying what was expected and found.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { Session } from '../../src/core/index.js';
import { openStore } from '../../src/store/index.js';
import { recordToolTurn } from '../core/builders.js';
import { describePg, dropSchema, freshSchema, pgUrl } from '../postgres/helpers.js';
import { untilOutput } from '../store/child-output.js';
import { cli, tempStores } from './helpers.js';

const HOLDER = join(import.meta.dirname, '..', 'store', 'fixtures', 'lock-holder.ts');
const stores = tempStores();
afterAll(() => stores.remove());
const children: ChildProcess[] = [];
afterEach(async () => {
  for (const child of children.splice(0)) {
    const exited = once(child, 'exit');
    child.kill('SIGKILL');
    await exited;
  }
});

/** Sessions `old` (created first, a parent), `fork` of it, and `new`, each one finished turn. */
async function seed(url: string): Promise<void> {
  const store = await openStore(url);
  for (const [id, parentSession] of [['old'], ['fork', 'old'], ['new']] as const) {
    const session = Session.create({
      header: { version: 1, id, createdAt: 1, ...(parentSession ? { parentSession } : {}) },
    });
    recordToolTurn(session, 1);
    await store.create(session.header);
    await store.append(id, session.events, { expectedSeq: 0 });
    // Last activity orders the sessions: one written a few ms after the other.
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  await store.close();
}

describe.each(['jsonl', 'sqlite'] as const)('palimpsest gc on a %s store', (backend) => {
  const store = stores.urls[backend];
  const run = (...args: string[]) => cli([...args, '--store', store], { cwd: stores.dir });
  const ids = () =>
    (JSON.parse(run('ls', '--json').stdout) as Array<{ id: string }>).map((row) => row.id).sort();

  it('shows what a policy removes and why, changes nothing, and says how to apply', async () => {
    await seed(store);
    const dry = run('gc', '--keep', '1');
    expect(dry.code).toBe(0);
    expect(dry.stdout).toMatch(/^would delete 2 of 3 session\(s\), \d+ of \d+ bytes$/m);
    expect(dry.stdout).toMatch(/^ {2}old {2}last active .* \d+ bytes {2}\(count\)$/m);
    expect(dry.stdout).toContain('dry run: nothing was changed; add --delete, or --archive DIR');
    expect(ids()).toEqual(['fork', 'new', 'old']);

    const never = join(stores.dir, `${backend}-never`);
    expect(run('gc', '--keep', '5', '--archive', never).code).toBe(9);
    expect(existsSync(never)).toBe(false);

    const json = JSON.parse(run('gc', '--keep', '1', '--keep-forks', '--json').stdout);
    expect(json).toMatchObject({ dryRun: true, action: 'delete', kept: 1 });
    expect(json.remove.map((entry: { id: string }) => entry.id)).toEqual(['old', 'fork']);
  });

  it('archives what it removes, restores it whole, and deletes for good', async () => {
    const archive = join(stores.dir, `${backend}-archive`);
    const archived = run('gc', '--keep', '2', '--archive', archive);
    expect(archived.code).toBe(0);
    expect(archived.stdout).toMatch(/^archived 1 of 3 session\(s\)/m);
    expect(ids()).toEqual(['fork', 'new']);
    expect(run('gc', '--keep', '2', '--archive', archive).code).toBe(9);

    const restored = run('restore', 'old', '--from', archive);
    expect(restored.stdout).toContain("restored 'old' (13 events) from jsonl:");
    expect(restored.code).toBe(0);
    expect(run('verify', 'old').code).toBe(0);

    const deleted = run('gc', '--older-than', '0m', '--delete');
    expect(deleted.stdout).toMatch(/^deleted 3 of 3 session\(s\)/m);
    expect(ids()).toEqual([]);
    expect(run('gc', '--older-than', '0m', '--delete').code).toBe(9);
  });

  it('leaves a session a live writer holds in place, and says so (exit 5)', async () => {
    await seed(store);
    const child = spawn(process.execPath, ['--import', 'tsx', HOLDER, store, 'old', '5000'], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    children.push(child);
    await untilOutput(child, 'LOCKED');
    const applied = run('gc', '--keep', '0', '--delete');
    expect(applied.code).toBe(5);
    expect(applied.stdout).toMatch(/^deleted 2 of 3 session\(s\)/m);
    expect(applied.stdout).toMatch(
      /^left in place: old: session 'old' is locked by pid .* \[LOCKED\]$/m,
    );
    expect(ids()).toEqual(['old']);
  }, 30_000);

  it('refuses bad input with a usage error saying what it expected and found', () => {
    const refusals: Array<[string[], string]> = [
      [
        ['gc', '--older-than', '90days'],
        "expected a duration as a whole number and a unit (m, h, d or w, as in 90d, 12h, 30m, 2w), found '90days'",
      ],
      [['gc', '--max-size', '1.5GiB'], "found '1.5GiB'"],
      [
        ['gc', '--keep', '1', '--delete', '--archive', 'x'],
        'expected at most one of --archive DIR and --delete, found both',
      ],
      [
        ['gc'],
        'expected at least one of --older-than DURATION, --keep N or --max-size SIZE, found none',
      ],
    ];
    if (backend === 'jsonl') {
      const itself = store.slice('jsonl:'.length);
      refusals.push([
        ['gc', '--keep', '0', '--archive', itself],
        'expected an archive directory other than the store, found jsonl:',
      ]);
    }
    for (const [args, message] of refusals) {
      const refused = run(...args);
      expect(refused.code, args.join(' ')).toBe(2);
      expect(refused.stderr).toContain(message);
    }
  });

  it('archives and restores only sessions that exist (exit 3 otherwise)', () => {
    const archive = join(stores.dir, `${backend}-named`);
    const missing = run('archive', 'old', 'nope', '--to', archive);
    expect(missing.code).toBe(3);
    expect(missing.stdout).toContain("archived 'old' (13 events)");
    expect(missing.stderr).toContain("session 'nope' does not exist");
    expect(run('restore', 'old', '--from', join(stores.dir, 'no-archive')).code).toBe(3);
    expect(run('restore', 'old', '--from', archive).code).toBe(0);
    if (backend === 'jsonl') {
      const itself = run('archive', 'old', '--to', store.slice('jsonl:'.length));
      expect(itself.code).toBe(2);
      expect(itself.stderr).toContain('expected an archive directory other than the store');
    }
  });
});

describePg('palimpsest gc, archive and restore on a postgres:// store', () => {
  const schema = freshSchema('cli_gc');
  const parsed = new URL(pgUrl || 'postgres://unused');
  parsed.searchParams.set('schema', schema);
  const store = parsed.toString();
  const run = (...args: string[]) => cli([...args, '--store', store], { cwd: stores.dir });
  afterAll(() => dropSchema(schema));

  it('plans, archives, restores and deletes as on a file store', async () => {
    const setup = await openStore(store, { postgres: { create: true } });
    await setup.close();
    await seed(store);
    expect(run('gc', '--keep', '1', '--max-size', '1GiB').stdout).toMatch(
      /^would delete 2 of 3 session\(s\)/m,
    );
    const archive = join(stores.dir, 'postgres-archive');
    expect(run('gc', '--keep', '1', '--archive', archive).code).toBe(0);
    expect(run('restore', 'old', 'fork', '--from', archive).code).toBe(0);
    expect(run('verify', 'old', 'fork').code).toBe(0);
    expect(run('gc', '--keep', '0', '--delete').stdout).toMatch(/^deleted 3 of 3 session\(s\)/m);
  });
});
