/**
 * `palimpsest import` end to end, through the built binary: the summary table, idempotency, the
 * exit codes of what cannot be imported, and the commands that read sessions working on what it
 * wrote; `--watch` following a file as it grows.
 */
import { spawn } from 'node:child_process';
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { foldSurface } from '../../src/core/index.js';
import type { ImportReport } from '../../src/import/index.js';
import { openStore } from '../../src/store/index.js';
import { binary, cli, tempStores } from '../cli/helpers.js';

const fixture = (name: string): string => join(import.meta.dirname, 'fixtures', name);
const stores = tempStores();
afterAll(() => stores.remove());

describe.each(['claude-code', 'codex', 'pi'] as const)('palimpsest import --from %s', (harness) => {
  const url = `jsonl:${join(stores.dir, harness)}`;
  const run = (...args: string[]) => cli(['--store', url, ...args], { cwd: stores.dir });

  it('prints a table of the sessions and skipped entries, then adds nothing the second time', () => {
    const first = run('import', '--from', harness, fixture(`${harness}.jsonl`));
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(/^ID +RESULT +EVENTS +ADDED +MESSAGES +PARENT +FILE/);
    expect(first.stdout).toContain('created');
    expect(first.stdout).toMatch(/SKIPPED +REASON/);
    const again = run('--json', 'import', '--from', harness, fixture(`${harness}.jsonl`));
    expect(again.code).toBe(0);
    const report = JSON.parse(again.stdout) as ImportReport;
    expect(report.sessions.length).toBeGreaterThan(0);
    expect(report.sessions.every((s) => s.result === 'up to date' && s.added === 0)).toBe(true);
  });

  it('leaves sessions that verify, show, surface, why and export read', async () => {
    const verify = run('verify', '--all');
    expect(verify.stdout).not.toContain('DAMAGED');
    expect(verify.code).toBe(0);
    const store = await openStore(url, { readOnly: true });
    const { sessions } = await store.list();
    for (const { header } of sessions) {
      const { events } = await store.load(header.id);
      const replaced = foldSurface(events).replacements[0]?.seq ?? events.length - 1;
      for (const args of [
        ['show', header.id],
        ['surface', header.id],
        ['why', header.id, String(replaced)],
        ['export', header.id, '--format', 'markdown'],
        ['export', header.id, '--format', 'json'],
        ['export', header.id, '--format', 'openai'],
        ['export', header.id, '--format', 'anthropic'],
      ]) {
        const result = run(...args);
        expect([args.join(' '), result.code, result.stderr]).toEqual([args.join(' '), 0, '']);
        expect(result.stdout).not.toBe('');
      }
    }
    await store.close();
  });
});

describe('what palimpsest import refuses', () => {
  const url = `jsonl:${join(stores.dir, 'refused')}`;
  const run = (...args: string[]) => cli(['--store', url, ...args], { cwd: stores.dir });

  it('a file of another harness is a usage error naming the right --from', () => {
    const result = run('import', '--from', 'pi', fixture('codex.jsonl'));
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('pass --from codex');
  });

  it('a missing --from, or one naming no harness, is a usage error', () => {
    expect(run('import', fixture('pi.jsonl')).code).toBe(2);
    expect(run('import', '--from', 'cursor', fixture('pi.jsonl')).code).toBe(2);
  });

  it('a path that does not exist is exit code 3', () => {
    const result = run('import', '--from', 'pi', join(stores.dir, 'missing.jsonl'));
    expect(result.code).toBe(3);
    expect(result.stderr).toContain('does not exist');
  });

  it('a malformed line is exit code 4, naming the file and line', () => {
    const path = join(stores.dir, 'broken.jsonl');
    const lines = readFileSync(fixture('codex.jsonl'), 'utf8').split('\n');
    lines[4] = 'not json';
    writeFileSync(path, lines.join('\n'));
    const result = run('import', '--from', 'codex', path);
    expect(result.code).toBe(4);
    expect(result.stderr).toContain(`${path}, line 5`);
  });

  it('a pi line that is not JSON is skipped and counted, as pi itself skips it', () => {
    const path = join(stores.dir, 'glitch.jsonl');
    const lines = readFileSync(fixture('pi.jsonl'), 'utf8').split('\n');
    lines[4] = 'not json';
    writeFileSync(path, lines.join('\n'));
    const result = run('import', '--from', 'pi', path);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(
      /1\s+line that is not JSON \(pi skips it when it reads the file\)/,
    );
  });

  it('a file without any conversation is exit code 9, said on stderr', () => {
    const path = join(stores.dir, 'titles.jsonl');
    writeFileSync(path, '{"type":"summary","summary":"x","leafUuid":"u"}\n');
    const result = run('import', '--from', 'claude-code', path);
    expect(result.code).toBe(9);
    expect(result.stderr).toContain('nothing imported');
  });
});

describe('palimpsest import --watch', () => {
  it('imports what is appended to the file as it is written, until Ctrl-C', async () => {
    const url = `jsonl:${join(stores.dir, 'watched')}`;
    const path = join(stores.dir, 'rollout.jsonl');
    const lines = readFileSync(fixture('codex.jsonl'), 'utf8').split('\n');
    writeFileSync(path, `${lines.slice(0, 24).join('\n')}\n`);
    const child = spawn(
      process.execPath,
      [binary, '--store', url, 'import', '--from', 'codex', path, '--watch'],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, NO_COLOR: '1' },
      },
    );
    const printed = { stdout: '', stderr: '' };
    const waiters: (() => void)[] = [];
    for (const stream of ['stdout', 'stderr'] as const) {
      child[stream].on('data', (chunk: Buffer) => {
        printed[stream] += chunk.toString();
        for (const waiter of waiters.splice(0)) waiter();
      });
    }
    const waitFor = (stream: 'stdout' | 'stderr', pattern: RegExp) =>
      new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`no ${pattern} in ${printed[stream]}`)),
          20_000,
        );
        const check = (): void => {
          if (!pattern.test(printed[stream])) {
            waiters.push(check);
            return;
          }
          clearTimeout(timer);
          resolve();
        };
        check();
      });
    await waitFor('stderr', /watching/);
    await waitFor('stdout', /created/);
    // A line the harness has not finished writing is left for the next round, not an error.
    appendFileSync(path, `${lines.slice(24, 28).join('\n')}\n${lines[28]?.slice(0, 30)}`);
    await waitFor('stdout', /appended, \+\d+ events/);
    appendFileSync(path, `${lines[28]?.slice(30)}\n${lines.slice(29).join('\n')}`);
    await waitFor('stdout', /\(30 in all\)/);
    child.kill('SIGINT');
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code).toBe(0);
    expect(printed.stderr).not.toContain('palimpsest:');

    const store = await openStore(url, { readOnly: true });
    const fresh = await openStore('memory:');
    const { importSessions } = await import('../../src/import/index.js');
    const [whole] = (await importSessions({ from: 'codex', path, store: fresh })).sessions;
    const watched = await store.load(whole?.id ?? '');
    expect(watched.events).toEqual((await fresh.load(whole?.id ?? '')).events);
    await fresh.close();
    await store.close();
  });
});
