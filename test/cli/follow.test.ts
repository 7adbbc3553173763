/**
 * `palimpsest log ID --follow` prints the stored events, then each batch another process
 * commits, until Ctrl-C ends it with exit code 0, on every backend.
 */
import { spawn } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import type { SessionEvent } from '../../src/core/index.js';
import { openStore } from '../../src/store/index.js';
import { event } from '../core/builders.js';
import { pgUrl } from '../postgres/helpers.js';
import { binary, tempStores } from './helpers.js';

const stores = tempStores();
afterAll(() => stores.remove());

function notes(from: number, count: number): SessionEvent[] {
  return Array.from({ length: count }, (_, i) =>
    event(from + i, 'app/note', { n: from + i }, { time: 1000 + from + i }),
  ) as SessionEvent[];
}

const urls: [string, string][] = [
  ['jsonl', stores.urls.jsonl],
  ['sqlite', stores.urls.sqlite],
];
if (pgUrl !== '') {
  const url = new URL(pgUrl);
  url.searchParams.set('schema', `follow_${process.pid}`);
  urls.push(['postgres', url.toString()]);
}

describe.each(urls)('log --follow (%s)', (_backend, url) => {
  it('prints the stored events, then each committed batch, and exits 0 on Ctrl-C', async () => {
    const store = await openStore(url);
    await store.create({ version: 1, id: 'tail', createdAt: 1 });
    await store.append('tail', notes(0, 2), { expectedSeq: 0 });
    const child = spawn(
      process.execPath,
      [binary, '--store', url, '--json', 'log', 'tail', '--follow'],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, NO_COLOR: '1' },
      },
    );
    const seqs: number[] = [];
    let buffered = '';
    const seen = (count: number) =>
      new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`saw ${seqs.join(',')} of ${count}`)),
          15_000,
        );
        const check = () => {
          if (seqs.length >= count) {
            clearTimeout(timer);
            resolve();
          }
        };
        child.stdout.on('data', check);
        check();
      });
    child.stdout.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      const lines = buffered.split('\n');
      buffered = lines.pop() ?? '';
      for (const line of lines) seqs.push((JSON.parse(line) as SessionEvent).seq);
    });
    await seen(2);
    await store.append('tail', notes(2, 3), { expectedSeq: 2 });
    await store.append('tail', notes(5, 1), { expectedSeq: 5 });
    await seen(6);
    child.kill('SIGINT');
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    await store.delete('tail').catch(() => {});
    await store.close();
    expect(seqs).toEqual([0, 1, 2, 3, 4, 5]);
    expect(code).toBe(0);
  });
});
