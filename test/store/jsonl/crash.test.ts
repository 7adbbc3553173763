/**
 * SIGKILL at each failpoint of create and append: every acknowledged event survives, the log
 * always loads (at most its final batch is torn), and a writer continues after repairing it.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { SessionEvent } from '../../../src/core/index.js';
import { NotFoundError } from '../../../src/store/contract/errors.js';
import { type JsonlFailpoint, openJsonlStore } from '../../../src/store/jsonl/index.js';
import { rawEvent } from '../../core/builders.js';
import { tempDir } from './helpers.js';

const script = fileURLToPath(new URL('./fixtures/crash-writer.ts', import.meta.url));

/** The events the child writes, as crash-writer.ts builds them. */
function expected(seq: number): SessionEvent {
  return rawEvent({
    seq,
    time: 1_700_000_000_000 + seq,
    type: 'test/note',
    data: { text: `note ${seq}`.repeat(1 + (seq % 7)) },
  });
}

interface Run {
  readonly created: boolean;
  readonly acked: number;
  readonly signal: NodeJS.Signals | null;
}

function runWriter(dir: string, failpoint: JsonlFailpoint, hit: number): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', script, dir, 's1', failpoint, String(hit)],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      err += chunk;
    });
    child.on('error', reject);
    child.on('close', (code, signal) => {
      if (signal === null && code !== 0) reject(new Error(`writer failed (${code}): ${err}`));
      const acks = [...out.matchAll(/^ACK (\d+)$/gm)].map((match) => Number(match[1]));
      resolve({ created: out.includes('CREATED'), acked: acks.at(-1) ?? 0, signal });
    });
  });
}

const CASES: [JsonlFailpoint, number][] = [
  ['create:after-temp-write', 1],
  ['create:after-temp-fsync', 1],
  ['create:after-link', 1],
  ['create:after-dir-fsync', 1],
  ['append:before-write', 1],
  ['append:before-write', 7],
  ['append:mid-write', 1],
  ['append:mid-write', 12],
  ['append:after-write', 4],
  ['append:after-fsync', 9],
];

describe('SIGKILL at a failpoint', () => {
  it('loses no acknowledged event and leaves a log that loads and continues', async () => {
    const results: string[] = [];
    const queue = [...CASES];
    const worker = async (): Promise<void> => {
      for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
        const [failpoint, hit] = next;
        const dir = await tempDir();
        const run = await runWriter(dir, failpoint, hit);
        expect(run.signal, `${failpoint}#${hit} was hit`).toBe('SIGKILL');
        const store = await openJsonlStore(dir);
        let events: readonly SessionEvent[];
        let torn = 0;
        try {
          const loaded = await store.load('s1');
          events = loaded.events;
          if (loaded.tornTail !== undefined) {
            torn = loaded.tornTail.bytes?.size ?? 0;
            const lock = await store.lock('s1');
            await store.discardTornTail('s1', loaded.tornTail, lock);
            await lock.release();
          }
        } catch (error) {
          // Killed before the log was published: the session does not exist, and no ack was sent.
          expect(error).toBeInstanceOf(NotFoundError);
          expect(failpoint.startsWith('create:after-temp')).toBe(true);
          expect(run.created).toBe(false);
          await store.close();
          results.push(`${failpoint}#${hit}: not created`);
          continue;
        }
        expect(events.length, `${failpoint}#${hit}`).toBeGreaterThanOrEqual(run.acked);
        // Killed halfway through a write: the half batch is a torn tail, never loaded events.
        if (failpoint === 'append:mid-write') {
          expect(torn).toBeGreaterThan(0);
          expect(events).toHaveLength(run.acked);
        }
        expect(events).toEqual(Array.from({ length: events.length }, (_, i) => expected(i)));
        await store.append('s1', [expected(events.length)], { expectedSeq: events.length });
        const after = await store.load('s1');
        expect(after.tornTail).toBeUndefined();
        expect(after.events).toHaveLength(events.length + 1);
        await store.close();
        results.push(
          `${failpoint}#${hit}: acked ${run.acked}, loaded ${events.length}, torn ${torn} B`,
        );
      }
    };
    await Promise.all([worker(), worker(), worker()]);
    expect(results).toHaveLength(CASES.length);
  }, 60_000);
});
