/**
 * A writer killed while it appends, and its batch sent again by the writer that takes over, on
 * every backend (issue 34): the writer is a real process appending raw batches with
 * `appendOnce`, SIGKILLed right after it commits a batch and before it acknowledges it, or at
 * whatever point it has reached when it announces a send. The taker takes the lock, drops a torn
 * tail, and resends the last batch the writer announced: the log then holds every batch exactly
 * once, in order, whether the killed send committed or not.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { appendOnce, openStore, type SessionStore } from '../../src/store/index.js';
import { untilOutput } from './child-output.js';
import { batchEvents } from './fixtures/batches.js';
import { everyBackend } from './store-urls.js';

const writer = join(import.meta.dirname, 'fixtures', 'batch-writer.ts');

/** Runs the writer from batch `from`, kills it once it printed `marker`, returns all it printed. */
async function killWriterAt(url: string, from: number, marker: string, mode = ''): Promise<string> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', writer, url, 's', String(from), '1000', mode],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const exited = new Promise((resolve) => child.once('exit', resolve));
  let output = await untilOutput(child, marker);
  child.stdout?.on('data', (chunk: string) => {
    output += chunk;
  });
  child.kill('SIGKILL');
  await exited;
  return output;
}

/** Takes the session over as the next writer would: lock, drop a torn tail, return the store. */
async function takeOver(url: string): Promise<SessionStore> {
  const store = await openStore(url);
  const lock = await store.lock('s');
  const loaded = await store.load('s');
  if (loaded.tornTail !== undefined) await store.discardTornTail('s', loaded.tornTail, lock);
  return store;
}

function lastSent(output: string): number {
  const sends = [...output.matchAll(/SENDING (\d+)/g)].map((match) => Number(match[1]));
  return sends.at(-1) ?? -1;
}

for (const [name, newUrl] of everyBackend('append-kill')) {
  describe(`a batch resent after its writer was killed, on ${name}`, () => {
    it('is answered as repeated when the writer died between commit and acknowledgement', async () => {
      const url = newUrl();
      const setup = await openStore(url);
      await setup.create({ version: 1, id: 's', createdAt: 1 });
      await setup.close();
      await killWriterAt(url, 0, 'COMMITTED 0', 'hang-after');

      const store = await takeOver(url);
      const batch = batchEvents(0);
      expect(await appendOnce(store, 's', batch, { expectedSeq: 0 })).toEqual({ repeated: true });
      expect((await store.load('s')).events).toEqual(batch);
      await store.close();
    });

    it('is stored exactly once whenever the kill lands', { timeout: 120_000 }, async () => {
      const url = newUrl();
      const setup = await openStore(url);
      await setup.create({ version: 1, id: 's', createdAt: 1 });
      await setup.close();
      let next = 0;
      const outcomes = { repeated: 0, appended: 0 };
      for (const killAfter of [1, 3, 6, 2, 9, 4]) {
        const output = await killWriterAt(url, next, `SENDING ${next + killAfter}`);
        const inFlight = lastSent(output);
        const store = await takeOver(url);
        const batch = batchEvents(inFlight);
        const { repeated } = await appendOnce(store, 's', batch, {
          expectedSeq: batch[0]?.seq ?? 0,
        });
        outcomes[repeated ? 'repeated' : 'appended'] += 1;
        const { events } = await store.load('s');
        const expected = Array.from({ length: inFlight + 1 }, (_, k) => batchEvents(k)).flat();
        expect(events).toEqual(expected);
        await store.close();
        next = inFlight + 1;
      }
      expect(outcomes.repeated + outcomes.appended).toBe(6);
    });
  });
}
