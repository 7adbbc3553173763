/**
 * How the CLI finds what a person names: a session by a unique prefix of its id in every
 * command that reads one, the candidates listed when a prefix is ambiguous, and a store given as
 * a bare directory or SQLite file path. The built binary runs as a separate process.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/index.js';
import { user } from '../core/builders.js';
import { cli, tempStores } from './helpers.js';

const stores = tempStores();
afterAll(() => stores.remove());

const MANY = Array.from({ length: 12 }, (_, index) => `many-${String(index).padStart(2, '0')}`);
const IDS = ['alpha-1', 'alpha-2', 'beta-77', 'gamma', 'gamma-2', ...MANY];

async function seed(url: string): Promise<void> {
  const store = await openStore(url);
  try {
    for (const [index, id] of IDS.entries()) {
      await store.create({ version: 1, id, createdAt: 1_700_000_000_000 + index });
      await store.append(
        id,
        [
          {
            seq: 0,
            time: 1_700_000_000_000 + index,
            type: 'user/message',
            data: user(`u-${id}`, `hello from ${id}`),
            surfaceOp: 'append',
          },
        ],
        { expectedSeq: 0 },
      );
    }
  } finally {
    await store.close();
  }
}

beforeAll(async () => {
  await seed(stores.urls.jsonl);
  await seed(stores.urls.sqlite);
});

describe.each(['jsonl', 'sqlite'] as const)('session ids on a %s store', (backend) => {
  const run = (...args: string[]) =>
    cli([...args, '--store', stores.urls[backend]], { cwd: stores.dir });

  it('reads a session named by a unique prefix of its id, in every command that reads one', () => {
    expect(run('show', 'beta').stdout).toContain('hello from beta-77');
    expect(run('surface', 'bet', '--json').stdout).toContain('hello from beta-77');
    expect(run('log', 'be', '--json').stdout).toContain('hello from beta-77');
    expect(run('verify', 'beta').code).toBe(0);
    expect(run('export', 'beta', '--format', 'json').stdout).toContain('hello from beta-77');
  });

  it('takes an exact id over the longer ids it is a prefix of', () => {
    const shown = run('show', 'gamma');
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain('hello from gamma');
    expect(shown.stdout).not.toContain('hello from gamma-2');
  });

  it('lists the candidates of an ambiguous prefix and exits 2 without doing anything', () => {
    const ambiguous = run('show', 'alpha');
    expect(ambiguous.code).toBe(2);
    expect(ambiguous.stdout).toBe('');
    expect(ambiguous.stderr).toMatch(
      /session id prefix 'alpha' matches 2 sessions: alpha-\d, alpha-\d; give more of the id/,
    );
    const forked = run('fork', 'alpha', '--at', '0', '--id', 'copy');
    expect(forked.code).toBe(2);
    expect(run('show', 'copy').code).toBe(3);
  });

  it('names ten candidates of a prefix more ids share, and says there are more', () => {
    const ambiguous = run('cost', 'many');
    expect(ambiguous.code).toBe(2);
    expect(ambiguous.stderr).toContain("session id prefix 'many' matches more than 10 sessions: ");
    expect(ambiguous.stderr.match(/many-\d\d/g)).toHaveLength(10);
    expect(ambiguous.stderr).toContain(', …; give more of the id');
    expect(run('show', 'many-07').code).toBe(0);
  });

  it('passes an id nothing starts with on to the command, which says it was not found', () => {
    const missing = run('show', 'delta');
    expect(missing.code).toBe(3);
    expect(missing.stderr).toContain('delta');
  });

  it('resolves each id of a command that takes several', () => {
    const verified = run('verify', 'beta', 'alpha-2', '--json');
    expect(verified.code).toBe(0);
    expect(verified.stdout).toContain('beta-77');
    expect(verified.stdout).toContain('alpha-2');
  });
});

describe('a store given as a bare path', () => {
  it('reads a directory as a JSONL store and a .db file as an SQLite store', () => {
    for (const path of [join(stores.dir, 'sessions'), join(stores.dir, 'sessions.db')]) {
      const listed = cli(['ls', '--json', '--store', path], { cwd: stores.dir });
      expect(listed.code).toBe(0);
      expect((JSON.parse(listed.stdout) as { id: string }[]).map((row) => row.id).sort()).toEqual(
        [...IDS].sort(),
      );
    }
  });

  it('reads an SQLite database by its first bytes whatever its name', () => {
    const listed = cli(['show', 'beta', '--store', 'sessions.db'], { cwd: stores.dir });
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain('hello from beta-77');
  });

  it('refuses a file that is neither a store directory nor an SQLite database', () => {
    const notes = join(stores.dir, 'notes.txt');
    writeFileSync(notes, 'not a store');
    const refused = cli(['ls', '--store', notes], { cwd: stores.dir });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('is neither a store directory nor an SQLite database');
  });

  it('converts between two stores given as bare paths', () => {
    const converted = cli(
      [
        'convert',
        'beta',
        '--from',
        join(stores.dir, 'sessions'),
        '--to',
        join(stores.dir, 'copy.db'),
      ],
      { cwd: stores.dir },
    );
    expect(converted.code).toBe(0);
    expect(
      cli(['show', 'beta-77', '--store', join(stores.dir, 'copy.db')], { cwd: stores.dir }).stdout,
    ).toContain('hello from beta-77');
  });
});
