/**
 * Archive and restore (issue 37) are `moveSession` into a `jsonl:` archive directory and back,
 * from and to every backend: the session leaves the store's listing, comes back with the same
 * header and events and verifies; a move a crash cut short is finished by running it again; a
 * different session of the same id in the target, or a live writer, leaves both stores as they
 * were.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkInvariants, Session, type SessionEvent } from '../../src/core/index.js';
import {
  AlreadyExistsError,
  LockedError,
  moveSession,
  openStore,
  type SessionStore,
} from '../../src/store/index.js';
import { rejection } from '../conformance/helpers.js';
import { recordToolTurn } from '../core/builders.js';
import { everyBackend } from './store-urls.js';

const archives = mkdtempSync(join(tmpdir(), 'palimpsest-archive-'));
afterAll(() => rmSync(archives, { recursive: true, force: true }));
let made = 0;
const archiveStore = () => openStore(`jsonl:${join(archives, `a${++made}`)}`);

const header = { version: 1 as const, id: 'kept', createdAt: 5, metadata: { title: 'a turn' } };

function turns(count: number): SessionEvent[] {
  const session = Session.create({ header });
  for (let turn = 1; turn <= count; turn++) recordToolTurn(session, turn);
  return [...session.events];
}

async function write(store: SessionStore, events: readonly SessionEvent[]): Promise<void> {
  await store.create(header);
  await store.append(header.id, events, { expectedSeq: 0 });
}

async function ids(store: SessionStore): Promise<string[]> {
  return (await store.list()).sessions.map((summary) => summary.header.id);
}

for (const [name, newUrl] of everyBackend('move')) {
  describe(`archive and restore on ${name}`, () => {
    it('moves a session out of the listing and back with the same header and events', async () => {
      const store = await openStore(newUrl());
      const archive = await archiveStore();
      const events = turns(3);
      await write(store, events);

      expect(await moveSession(store, 'kept', archive)).toEqual({
        id: 'kept',
        events: events.length,
        resumed: 0,
      });
      expect(await ids(store)).toEqual([]);
      expect((await archive.load('kept')).events).toEqual(events);

      expect(await moveSession(archive, 'kept', store, { batchSize: 7 })).toMatchObject({
        events: events.length,
      });
      expect(await ids(archive)).toEqual([]);
      const restored = await store.load('kept');
      expect(restored.header).toEqual(header);
      expect(restored.events).toEqual(events);
      const session = Session.create({ header: restored.header, seed: restored.events });
      expect(checkInvariants(session.events, { requireClosed: true })).toEqual([]);
      await Promise.all([store.close(), archive.close()]);
    });

    it('finishes a move a crash cut short: a partial copy is completed, a whole one kept', async () => {
      const store = await openStore(newUrl());
      const archive = await archiveStore();
      const events = turns(2);
      await write(store, events);
      await archive.create(header);
      await archive.append('kept', events.slice(0, 5), { expectedSeq: 0 });

      expect(await moveSession(store, 'kept', archive)).toMatchObject({ resumed: 5 });
      expect((await archive.load('kept')).events).toEqual(events);

      // A crash after the copy and before the delete: both hold the whole session.
      await write(store, events);
      expect(await moveSession(store, 'kept', archive)).toMatchObject({ resumed: events.length });
      expect(await ids(store)).toEqual([]);
      await Promise.all([store.close(), archive.close()]);
    });

    it('leaves both stores alone when the target holds another session of that id', async () => {
      const store = await openStore(newUrl());
      const archive = await archiveStore();
      const events = turns(1);
      await write(store, events);
      await archive.create({ ...header, createdAt: 6 });

      const error = await rejection(moveSession(store, 'kept', archive));
      expect(AlreadyExistsError.isInstance(error)).toBe(true);
      expect((await store.load('kept')).events).toEqual(events);
      expect((await archive.load('kept')).events).toEqual([]);
      await Promise.all([store.close(), archive.close()]);
    });

    it('copies nothing of a session a live writer holds', async () => {
      const url = newUrl();
      const store = await openStore(url);
      const writer = await openStore(url);
      const archive = await archiveStore();
      await write(store, turns(1));
      const lock = await writer.lock('kept');

      expect(LockedError.isInstance(await rejection(moveSession(store, 'kept', archive)))).toBe(
        true,
      );
      expect(await ids(archive)).toEqual([]);
      expect(await ids(store)).toEqual(['kept']);
      await lock.release();
      await Promise.all([store.close(), writer.close(), archive.close()]);
    });
  });
}

describe('a move', () => {
  it('refuses a target that is the source store', async () => {
    const store = await openStore(`jsonl:${join(archives, 'same')}`);
    await write(store, turns(1));
    const error = await rejection(moveSession(store, 'kept', store));
    expect(error).toMatchObject({
      code: 'INVALID_ARGUMENT',
      message: `expected a target store other than the source, found ${store.location} as both`,
    });
    expect(await ids(store)).toEqual(['kept']);
    await store.close();
  });
});
