/**
 * The CLI on a PostgreSQL store, through the built binary against the real server: the same
 * commands work with a `postgres://` URL as with a file store, and a store that is not there is
 * exit code 3 with nothing created.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describePg, dropSchema, freshSchema, pgUrl, withClient } from '../postgres/helpers.js';
import { cli, binary as cliBinary, tempStores } from './helpers.js';

const files = tempStores();
const schema = freshSchema('cli');
const url = () => {
  const parsed = new URL(pgUrl);
  parsed.searchParams.set('schema', schema);
  return parsed.toString();
};

describePg('the CLI on postgres://', () => {
  beforeAll(() => {
    expect(
      cli(['--store', files.urls.jsonl, 'run', '--model', 'scripted', 'list the files']).code,
    ).toBe(0);
  });
  afterAll(async () => {
    files.remove();
    await dropSchema(schema);
  });

  it('refuses a store that is not there with exit code 3 and creates nothing', async () => {
    const listed = cli(['--store', url(), 'ls']);
    expect(listed.code).toBe(3);
    expect(listed.stderr).toContain('there is no store at');
    const { rows } = await withClient((client) =>
      client.query('SELECT 1 FROM information_schema.schemata WHERE schema_name = $1', [schema]),
    );
    expect(rows).toEqual([]);
  });

  it('converts sessions into it, lists, verifies, shows and logs them', () => {
    const converted = cli(['--store', files.urls.jsonl, 'convert', '--all', '--to', url()]);
    expect(converted.code).toBe(0);
    const [session] = JSON.parse(cli(['--store', url(), 'ls', '--json']).stdout) as {
      id: string;
    }[];
    expect(session?.id).toBeDefined();
    const id = session?.id as string;
    expect(cli(['--store', url(), 'verify', '--all']).code).toBe(0);
    expect(cli(['--store', url(), 'show', id]).stdout).toContain('list the files');
    expect(cli(['--store', url(), 'log', id, '--type', 'turn']).stdout).toContain('turn/end');
    const back = cli(['--store', url(), 'convert', id, '--to', `sqlite:${files.dir}/back.db`]);
    expect(back.code).toBe(0);
    expect(cli(['--store', `sqlite:${files.dir}/back.db`, 'show', id]).stdout).toContain(
      'list the files',
    );
  });

  it('never prints the password of the store URL: run, ls, ls of an empty store, view', async () => {
    const secret = 's3cret-PW';
    const withPassword = (name: string) => {
      const parsed = new URL(pgUrl);
      parsed.password = secret;
      parsed.searchParams.set('schema', name);
      return parsed.toString();
    };
    const empty = freshSchema('cli_empty');
    const stores = [withPassword(schema), withPassword(empty)];
    const outputs = [
      cli(['--store', stores[0] as string, 'run', '--model', 'scripted', 'a secret-free turn']),
      cli(['--store', stores[0] as string, 'ls']),
      cli(['--store', stores[0] as string, 'ls', '--json']),
    ];
    // An empty store: created by an import of nothing, then listed.
    const emptyDir = mkdtempSync(join(tmpdir(), 'cli-empty-'));
    writeFileSync(join(emptyDir, 'empty.jsonl'), '');
    outputs.push(cli(['--store', stores[1] as string, 'import', '--from', 'pi', emptyDir]));
    const listed = cli(['--store', stores[1] as string, 'ls']);
    expect(listed.stdout + listed.stderr).toContain('no sessions in postgres://postgres:***@');
    outputs.push(listed);
    const viewer = spawn(process.execPath, [cliBinary, '--store', stores[0] as string, 'view'], {
      env: { ...process.env, NO_COLOR: '1' },
    });
    let served = '';
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`view said: ${served}`)), 30_000);
      const take = (data: Buffer) => {
        served += data.toString();
        if (served.includes('until Ctrl-C')) {
          clearTimeout(timer);
          resolve();
        }
      };
      viewer.stdout.on('data', take);
      viewer.stderr.on('data', take);
    });
    viewer.kill();
    expect(served).toContain('serving postgres://postgres:***@');
    for (const output of [...outputs.map((run) => run.stdout + run.stderr), served]) {
      expect(output).not.toContain(secret);
    }
    expect(outputs[0]?.code).toBe(0);
    await dropSchema(empty);
  });

  it('runs a turn into it', () => {
    const ran = cli(['--store', url(), 'run', '--model', 'scripted', 'hello from the fleet']);
    expect(ran.code).toBe(0);
    const sessions = JSON.parse(cli(['--store', url(), 'ls', '--json']).stdout) as { id: string }[];
    expect(sessions).toHaveLength(3);
  });
});
