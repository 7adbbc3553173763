/**
 * I/O faults injected through the fs facade: a failed fdatasync poisons the session, failed or
 * short writes are rolled back so no partial bytes remain, and every error is typed.
 */
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  NotFoundError,
  StorageError,
  WriterFailedError,
} from '../../../src/store/contract/errors.js';
import { batchText } from '../../../src/store/jsonl/format.js';
import { type JsonlFailpoint, openJsonlStore } from '../../../src/store/jsonl/index.js';
import { JSONL_FAILPOINTS } from '../../../src/store/jsonl/options.js';
import { encodeSessionId } from '../../../src/store/jsonl/paths.js';
import { openSession } from '../../../src/store/session/open-session.js';
import { errno, faultyFs, header, notes, rejection, tempDir } from './helpers.js';

function logPath(dir: string, id: string): string {
  return join(dir, `${encodeSessionId(id)}.jsonl`);
}

const isLog = (path: string): boolean => path.endsWith('.jsonl');

describe('a failed fdatasync', () => {
  it('rejects with StorageError, truncates back to the previous size and poisons the session', async () => {
    const dir = await tempDir();
    let failSync = false;
    const touched: string[] = [];
    const fs = faultyFs({
      datasync: (path) => {
        if (failSync && isLog(path)) {
          failSync = false; // once: the rollback's own fsync succeeds
          throw errno('EIO', 'injected fsync failure');
        }
      },
      open: (path, flags) => {
        if (isLog(path)) touched.push(flags);
      },
      write: (path) => {
        if (isLog(path)) touched.push('write');
        return undefined;
      },
    });
    const store = await openJsonlStore(dir, { fs });
    await store.create(header('s1'));
    await store.append('s1', notes(0, 2), { expectedSeq: 0 });
    const before = await readFile(logPath(dir, 's1'));
    failSync = true;
    const error = await rejection(store.append('s1', notes(2, 3), { expectedSeq: 2 }));
    expect(error).toBeInstanceOf(StorageError);
    expect((error as StorageError).cause).toMatchObject({ code: 'EIO' });
    expect(await readFile(logPath(dir, 's1'))).toEqual(before);

    failSync = false;
    touched.length = 0;
    const poisoned = await rejection(store.append('s1', notes(2, 1), { expectedSeq: 2 }));
    expect(poisoned).toBeInstanceOf(StorageError);
    expect((poisoned as Error).message).toContain('reopened');
    expect(touched).toEqual([]); // refused without touching the file
    // Other sessions of the store are unaffected; a reopened store writes again.
    await store.create(header('s2'));
    await store.append('s2', notes(0, 1), { expectedSeq: 0 });
    await store.close();
    const reopened = await openJsonlStore(dir, { fs });
    await reopened.append('s1', notes(2, 1), { expectedSeq: 2 });
    expect((await reopened.load('s1')).events).toEqual(notes(0, 3));
    await reopened.close();
  });
});

describe('a failed write', () => {
  it('rolls back a short write followed by ENOSPC, leaving no partial bytes, and does not poison', async () => {
    const dir = await tempDir();
    let calls = 0;
    let fail = false;
    const fs = faultyFs({
      write: (path, length) => {
        if (!fail || !isLog(path)) return undefined;
        calls++;
        if (calls === 1) return Math.max(1, Math.floor(length / 3));
        throw errno('ENOSPC', 'no space left on device');
      },
    });
    const store = await openJsonlStore(dir, { fs });
    await store.create(header('s1'));
    await store.append('s1', notes(0, 1), { expectedSeq: 0 });
    const before = await readFile(logPath(dir, 's1'));
    fail = true;
    const error = await rejection(store.append('s1', notes(1, 4), { expectedSeq: 1 }));
    expect(error).toBeInstanceOf(StorageError);
    expect((error as StorageError).cause).toMatchObject({ code: 'ENOSPC' });
    expect(calls).toBe(2);
    expect(await readFile(logPath(dir, 's1'))).toEqual(before);
    fail = false;
    await store.append('s1', notes(1, 1), { expectedSeq: 1 });
    expect((await store.load('s1')).events).toEqual(notes(0, 2));
    await store.close();
  });

  it('reports both errors in an AggregateError and poisons the session when the rollback fails too', async () => {
    const dir = await tempDir();
    let fail = false;
    const fs = faultyFs({
      write: (path) => {
        if (fail && isLog(path)) throw errno('EIO', 'write failed');
        return undefined;
      },
      truncate: (path) => {
        if (fail && isLog(path)) throw errno('EIO', 'truncate failed');
      },
    });
    const store = await openJsonlStore(dir, { fs });
    await store.create(header('s1'));
    fail = true;
    const error = await rejection(store.append('s1', notes(0, 1), { expectedSeq: 0 }));
    expect(error).toBeInstanceOf(StorageError);
    const cause = (error as StorageError).cause;
    expect(cause).toBeInstanceOf(AggregateError);
    expect(
      (cause as AggregateError).errors.map((inner: { message: string }) => inner.message),
    ).toEqual(['write failed', 'truncate failed']);
    fail = false;
    expect(await rejection(store.append('s1', notes(0, 1), { expectedSeq: 0 }))).toBeInstanceOf(
      StorageError,
    );
    await store.close();
  });

  it('loops on short writes until the whole batch is written', async () => {
    const dir = await tempDir();
    let writes = 0;
    const fs = faultyFs({
      write: (path) => {
        if (!isLog(path)) return undefined;
        writes++;
        return 7;
      },
    });
    const store = await openJsonlStore(dir, { fs });
    await store.create(header('s1'));
    await store.append('s1', notes(0, 3), { expectedSeq: 0 });
    expect(writes).toBeGreaterThan(20);
    expect((await store.load('s1')).events).toEqual(notes(0, 3));
    await store.close();
  });

  it('types raw file-system errors as StorageError with the cause', async () => {
    const dir = await tempDir();
    let deny = false;
    const fs = faultyFs({
      open: (path) => {
        if (deny && isLog(path)) throw errno('EACCES', 'permission denied');
      },
    });
    const store = await openJsonlStore(dir, { fs });
    await store.create(header('s1'));
    deny = true;
    const error = await rejection(store.load('s1'));
    expect(error).toBeInstanceOf(StorageError);
    expect((error as StorageError).cause).toMatchObject({ code: 'EACCES' });
    deny = false;
    expect(await rejection(store.load('missing'))).toBeInstanceOf(NotFoundError);
    await store.close();
  });
});

describe('a full disk', () => {
  it('does not leave the process locked out of a session by its own lock once space is back', async () => {
    const dir = await tempDir();
    let full = false;
    const enospc = (): never => {
      throw errno('ENOSPC', 'no space left on device');
    };
    const faulty = faultyFs({ write: (_path, length) => (full ? enospc() : length) });
    // On a full disk even an unlink may fail (btrfs, or a quota on the directory's blocks).
    const fs = {
      ...faulty,
      unlink: async (path: string) => (full ? enospc() : faulty.unlink(path)),
    };
    const store = await openJsonlStore(dir, { fs });
    const live = await openSession(store, 's1', { durability: { mode: 'each' } });
    live.append('app/note', { n: 0 });
    await live.flush();
    full = true;
    live.append('app/note', { n: 1 });
    expect(await rejection(live.flush())).toBeInstanceOf(WriterFailedError);
    // Closing cannot remove the lock file either: it stays, naming this live process.
    expect(await rejection(live.close())).toBeDefined();
    full = false;
    const again = await openSession(store, 's1');
    expect(again.seq).toBe(1);
    again.append('app/note', { n: 1 });
    await again.close();
    expect((await store.load('s1')).events.map((event) => event.data)).toEqual([
      { n: 0 },
      { n: 1 },
    ]);
    await store.close();
  });
});

describe('failpoints', () => {
  it('are called in order through create, append, lock, repair and a log replaced', async () => {
    const dir = await tempDir();
    const seen: JsonlFailpoint[] = [];
    const store = await openJsonlStore(dir, { failpoint: (name) => void seen.push(name) });
    await store.create(header('s1'));
    await store.append('s1', notes(0, 1), { expectedSeq: 0 });
    const lock = await store.lock('s1');
    const { appendFile } = await import('node:fs/promises');
    await appendFile(logPath(dir, 's1'), 'torn');
    const { tornTail } = await store.load('s1');
    await store.discardTornTail('s1', tornTail as never, lock);
    await store.replaceLog('s1', notes(0, 2), { expectedLength: 1 }, lock);
    expect(seen).toEqual([
      'create:after-temp-write',
      'create:after-temp-fsync',
      'create:after-link',
      'create:after-dir-fsync',
      'append:before-write',
      'append:mid-write',
      'append:after-write',
      'append:after-fsync',
      'lock:after-acquire',
      'truncate:after-truncate',
      'replace:after-temp-write',
      'replace:after-temp-fsync',
      'replace:after-rename',
    ]);
    expect(new Set(seen)).toEqual(new Set(JSONL_FAILPOINTS));
    await store.close();
  });

  it('write half of the batch before append:mid-write, and an error thrown there is rolled back', async () => {
    const dir = await tempDir();
    const sizes: number[] = [];
    let armed = false;
    const store = await openJsonlStore(dir, {
      failpoint: async (name) => {
        if (!armed || name !== 'append:mid-write') return;
        sizes.push((await stat(logPath(dir, 's1'))).size);
        throw new Error('crash here');
      },
    });
    await store.create(header('s1'));
    const before = (await stat(logPath(dir, 's1'))).size;
    armed = true;
    const batch = notes(0, 2);
    const error = await rejection(store.append('s1', batch, { expectedSeq: 0 }));
    expect(error).toBeInstanceOf(StorageError);
    const length = Buffer.byteLength(
      batchText(
        batch.map((event) => JSON.stringify(event)),
        2,
      ),
    );
    expect(sizes).toEqual([before + Math.floor(length / 2)]);
    expect((await stat(logPath(dir, 's1'))).size).toBe(before);
    await store.close();
  });
});
