/**
 * A batch sent again is applied once (issue 34): `appendOnce` on every backend, in process.
 * The killed-writer cases are in append-once-kill.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { appendOnce, ConflictError, MemoryStore, openStore } from '../../src/store/index.js';
import { batchEvents } from './fixtures/batches.js';
import { everyBackend } from './store-urls.js';

const header = { version: 1, id: 's', createdAt: 1_700_000_000_000 } as const;

for (const [name, url] of [...everyBackend('append-once'), ['memory', () => 'memory'] as const]) {
  describe(`appendOnce on ${name}`, () => {
    async function freshStore() {
      const store = url() === 'memory' ? new MemoryStore() : await openStore(url());
      await store.create(header);
      await store.lock('s');
      return store;
    }

    it('appends a batch sent for the first time', async () => {
      const store = await freshStore();
      expect(await appendOnce(store, 's', batchEvents(0), { expectedSeq: 0 })).toEqual({
        repeated: false,
      });
      expect((await store.load('s')).events).toEqual(batchEvents(0));
      await store.close();
    });

    it('answers a resend of a committed batch as repeated and stores it once', async () => {
      const store = await freshStore();
      await appendOnce(store, 's', batchEvents(0), { expectedSeq: 0 });
      await appendOnce(store, 's', batchEvents(1), { expectedSeq: 3 });
      expect(await appendOnce(store, 's', batchEvents(0), { expectedSeq: 0 })).toEqual({
        repeated: true,
      });
      expect(await appendOnce(store, 's', batchEvents(1), { expectedSeq: 3 })).toEqual({
        repeated: true,
      });
      expect((await store.load('s')).events).toEqual([...batchEvents(0), ...batchEvents(1)]);
      await store.close();
    });

    it('keeps the conflict when other events hold those seqs', async () => {
      const store = await freshStore();
      await store.append('s', batchEvents(0), { expectedSeq: 0 });
      const other = batchEvents(0, 'another writer');
      const failure = await appendOnce(store, 's', other, { expectedSeq: 0 }).catch((e) => e);
      expect(failure).toBeInstanceOf(ConflictError);
      expect(failure).toMatchObject({ code: 'CONFLICT', expectedSeq: 0, actualSeq: 3 });
      expect((await store.load('s')).events).toEqual(batchEvents(0));
      await store.close();
    });

    it('keeps the conflict when the store holds only part of the batch', async () => {
      const store = await freshStore();
      await store.append('s', batchEvents(0), { expectedSeq: 0 });
      const longer = [...batchEvents(0), ...batchEvents(1)];
      const failure = await appendOnce(store, 's', longer, { expectedSeq: 0 }).catch((e) => e);
      expect(failure).toMatchObject({ code: 'CONFLICT', actualSeq: 3 });
      expect((await store.load('s')).events).toHaveLength(3);
      await store.close();
    });

    it('keeps the conflict when the store is behind the batch', async () => {
      const store = await freshStore();
      const failure = await appendOnce(store, 's', batchEvents(1), { expectedSeq: 3 }).catch(
        (e) => e,
      );
      expect(failure).toMatchObject({ code: 'CONFLICT', expectedSeq: 3, actualSeq: 0 });
      expect((await store.load('s')).events).toEqual([]);
      await store.close();
    });
  });
}
