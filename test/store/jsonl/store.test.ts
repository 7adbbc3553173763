/**
 * The JSONL store's basic contract: create, append, load, list, delete, close; file layout and
 * permissions; header checks; size limits.
 */
import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InvalidArgumentError, SessionValidationError } from '../../../src/core/index.js';
import {
  AlreadyExistsError,
  ClosedError,
  ConflictError,
  CorruptLogError,
  FormatVersionError,
  InvalidStoreError,
  LimitExceededError,
  LockedError,
  NotFoundError,
} from '../../../src/store/contract/errors.js';
import { batchChecksum, batchText, commitLine } from '../../../src/store/jsonl/format.js';
import { nodeFs } from '../../../src/store/jsonl/fs.js';
import { type FsFacade, openJsonlStore } from '../../../src/store/jsonl/index.js';
import { encodeSessionId } from '../../../src/store/jsonl/paths.js';
import { openStore } from '../../../src/store/session/open-store.js';
import { header, headerText, note, notes, rejection, tempDir } from './helpers.js';

function logPath(dir: string, id: string): string {
  return join(dir, `${encodeSessionId(id)}.jsonl`);
}

describe('openJsonlStore', () => {
  it('creates the directory recursively with mode 0700 and names it in the location', async () => {
    const root = await tempDir();
    const dir = join(root, 'deep', 'sessions');
    const store = await openJsonlStore(dir);
    expect(store.location).toBe(`jsonl:${dir}`);
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
    await store.close();
  });

  it('refuses a path that exists but is not a directory', async () => {
    const root = await tempDir();
    const file = join(root, 'file');
    await writeFile(file, 'x');
    expect(await rejection(openJsonlStore(file))).toBeInstanceOf(InvalidStoreError);
  });

  it('refuses a maxLineBytes too small to hold a header', async () => {
    const dir = await tempDir();
    expect(await rejection(openJsonlStore(dir, { maxLineBytes: 10 }))).toBeInstanceOf(
      InvalidArgumentError,
    );
  });

  it('is what openStore returns for a jsonl: URL', async () => {
    const dir = await tempDir();
    const store = await openStore(`jsonl:${dir}`);
    expect(store.location).toBe(`jsonl:${dir}`);
    await store.close();
  });
});

describe('create', () => {
  it('writes exactly the header line and its seal, in a file of mode 0600', async () => {
    const dir = await tempDir();
    const store = await openJsonlStore(dir);
    await store.create(header('s1'));
    const file = logPath(dir, 's1');
    const text = await readFile(file, 'utf8');
    expect(text).toBe(headerText(header('s1')));
    expect(text.split('\n')[0]).toBe(JSON.stringify(header('s1')));
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(await readdir(dir)).toEqual(['s1.jsonl']);
    await store.close();
  });

  it('never clobbers an existing session: AlreadyExistsError and the file is unchanged', async () => {
    const dir = await tempDir();
    const store = await openJsonlStore(dir);
    await store.create(header('s1', 1));
    await store.append('s1', notes(0, 3), { expectedSeq: 0 });
    const before = await readFile(logPath(dir, 's1'));
    const error = await rejection(store.create(header('s1', 2)));
    expect(error).toBeInstanceOf(AlreadyExistsError);
    expect(await readFile(logPath(dir, 's1'))).toEqual(before);
    expect(await readdir(dir)).toEqual(['s1.jsonl']); // no temp file left behind
    await store.close();
  });

  it('lets exactly one of many concurrent creators win', async () => {
    const dir = await tempDir();
    const stores = await Promise.all([1, 2, 3, 4].map(() => openJsonlStore(dir)));
    const results = await Promise.allSettled(
      stores.map((store, i) => store.create(header('race', i))),
    );
    expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(1);
    for (const result of results) {
      if (result.status === 'rejected') expect(result.reason).toBeInstanceOf(AlreadyExistsError);
    }
    for (const store of stores) await store.close();
  });

  it('refuses an invalid header before creating a file', async () => {
    const dir = await tempDir();
    const store = await openJsonlStore(dir);
    const bad = { ...header('s1'), createdAt: -1 };
    expect(await rejection(store.create(bad))).toBeInstanceOf(SessionValidationError);
    expect(await readdir(dir)).toEqual([]);
    await store.close();
  });

  it('refuses a header longer than maxLineBytes', async () => {
    const dir = await tempDir();
    const store = await openJsonlStore(dir, { maxLineBytes: 200 });
    const big = { ...header('s1'), metadata: { title: 'x'.repeat(300) } };
    expect(await rejection(store.create(big))).toBeInstanceOf(LimitExceededError);
    expect(await readdir(dir)).toEqual([]);
    await store.close();
  });

  it('fsyncs the temp file before linking it and the directory after', async () => {
    const dir = await tempDir();
    const calls: string[] = [];
    const fs: FsFacade = {
      ...nodeFs,
      open: async (path, flags, mode) => {
        const handle = await nodeFs.open(path, flags, mode);
        return {
          ...handle,
          read: handle.read.bind(handle),
          write: handle.write.bind(handle),
          stat: handle.stat.bind(handle),
          truncate: handle.truncate.bind(handle),
          chmod: handle.chmod.bind(handle),
          close: handle.close.bind(handle),
          datasync: async () => {
            calls.push(`datasync ${path === dir ? 'dir' : 'temp'}`);
            await handle.datasync();
          },
          sync: async () => {
            calls.push(`sync ${path === dir ? 'dir' : 'file'}`);
            await handle.sync();
          },
        };
      },
      link: async (from, to) => {
        calls.push('link');
        await nodeFs.link(from, to);
      },
    };
    const store = await openJsonlStore(dir, { fs });
    await store.create(header('s1'));
    expect(calls).toEqual(['datasync temp', 'link', 'sync dir']);
    await store.close();
  });
});

describe('append and load', () => {
  it('round-trips batches as event lines each followed by one commit line', async () => {
    const dir = await tempDir();
    const store = await openJsonlStore(dir);
    await store.create(header('s1'));
    await store.append('s1', notes(0, 2), { expectedSeq: 0 });
    await store.append('s1', notes(2, 1), { expectedSeq: 2 });
    const text = await readFile(logPath(dir, 's1'), 'utf8');
    const first = [JSON.stringify(note(0)), JSON.stringify(note(1))];
    const second = [JSON.stringify(note(2))];
    expect(text).toBe(`${headerText(header('s1'))}${batchText(first, 2)}${batchText(second, 3)}`);
    expect(text.split('\n')[4]).toBe(
      commitLine(2, Buffer.byteLength(`${first.join('\n')}\n`), batchChecksum(first)),
    );
    const loaded = await store.load('s1');
    expect(loaded.header).toEqual(header('s1'));
    expect(loaded.events).toEqual(notes(0, 3));
    await store.close();
  });

  it('writes batches below and above the synchronous write bound byte for byte, with non-ASCII text', async () => {
    const dir = await tempDir();
    const store = await openJsonlStore(dir);
    await store.create(header('s1'));
    // A turn-sized batch is written synchronously, one of a few MiB through the thread pool.
    const small = notes(0, 3, (seq) => `été ${seq} 🚀`);
    const large = notes(3, 4, (seq) => `${'ü'.repeat(300_000)} ${seq}`);
    await store.append('s1', small, { expectedSeq: 0 });
    await store.append('s1', large, { expectedSeq: 3 });
    const text = await readFile(logPath(dir, 's1'), 'utf8');
    const lines = (events: typeof small) => events.map((event) => JSON.stringify(event));
    expect(text).toBe(
      `${headerText(header('s1'))}${batchText(lines(small), 3)}${batchText(lines(large), 7)}`,
    );
    expect((await store.load('s1')).events).toEqual([...small, ...large]);
    await store.close();
  });

  it('returns fresh objects on every load', async () => {
    const dir = await tempDir();
    const store = await openJsonlStore(dir);
    await store.create(header('s1'));
    await store.append('s1', notes(0, 1), { expectedSeq: 0 });
    const a = await store.load('s1');
    const b = await store.load('s1');
    expect(a.events[0]).not.toBe(b.events[0]);
    expect(a.events).toEqual(b.events);
    await store.close();
  });

  it('treats an empty batch as a no-op that still checks the session and the seq', async () => {
    const dir = await tempDir();
    const store = await openJsonlStore(dir);
    await store.create(header('s1'));
    await store.append('s1', [], { expectedSeq: 0 });
    expect(await rejection(store.append('s1', [], { expectedSeq: 3 }))).toBeInstanceOf(
      ConflictError,
    );
    expect(await rejection(store.append('nope', [], { expectedSeq: 0 }))).toBeInstanceOf(
      NotFoundError,
    );
    expect((await store.load('s1')).events).toEqual([]);
    await store.close();
  });

  it('rejects a wrong expectedSeq with ConflictError and writes nothing', async () => {
    const dir = await tempDir();
    const store = await openJsonlStore(dir);
    await store.create(header('s1'));
    await store.append('s1', notes(0, 2), { expectedSeq: 0 });
    const before = await readFile(logPath(dir, 's1'));
    const error = await rejection(store.append('s1', notes(1, 2), { expectedSeq: 1 }));
    expect(error).toBeInstanceOf(ConflictError);
    expect(error).toMatchObject({ expectedSeq: 1, actualSeq: 2 });
    expect(await readFile(logPath(dir, 's1'))).toEqual(before);
    await store.close();
  });

  it('refuses a batch whose seqs are not contiguous from expectedSeq', async () => {
    const dir = await tempDir();
    const store = await openJsonlStore(dir);
    await store.create(header('s1'));
    expect(
      await rejection(store.append('s1', [note(0), note(2)], { expectedSeq: 0 })),
    ).toBeInstanceOf(InvalidArgumentError);
    await store.close();
  });

  it('gives a stale second store instance a ConflictError and writes nothing', async () => {
    const dir = await tempDir();
    const a = await openJsonlStore(dir);
    const b = await openJsonlStore(dir);
    await a.create(header('s1'));
    await b.append('s1', notes(0, 1), { expectedSeq: 0 }); // b caches its writer state
    await a.append('s1', notes(1, 2), { expectedSeq: 1 });
    const before = await readFile(logPath(dir, 's1'));
    const error = await rejection(b.append('s1', notes(1, 1), { expectedSeq: 1 }));
    expect(error).toBeInstanceOf(ConflictError);
    expect(error).toMatchObject({ expectedSeq: 1, actualSeq: 3 });
    expect(await readFile(logPath(dir, 's1'))).toEqual(before);
    await b.append('s1', notes(3, 1), { expectedSeq: 3 });
    expect((await a.load('s1')).events).toEqual(notes(0, 4));
    await a.close();
    await b.close();
  });

  it('lets exactly one of two racing store instances win each seq, never interleaving', async () => {
    const dir = await tempDir();
    const a = await openJsonlStore(dir);
    const b = await openJsonlStore(dir);
    await a.create(header('s1'));
    let next = 0;
    for (let round = 0; round < 20; round++) {
      const results = await Promise.allSettled([
        a.append(
          's1',
          notes(next, 2, () => 'a'),
          { expectedSeq: next },
        ),
        b.append(
          's1',
          notes(next, 3, () => 'b'),
          { expectedSeq: next },
        ),
      ]);
      const won = results.filter((result) => result.status === 'fulfilled');
      expect(won).toHaveLength(1);
      for (const result of results) {
        if (result.status === 'rejected') expect(result.reason).toBeInstanceOf(ConflictError);
      }
      next += results[0]?.status === 'fulfilled' ? 2 : 3;
    }
    const events = (await a.load('s1')).events;
    expect(events.map((event) => event.seq)).toEqual(Array.from({ length: next }, (_, i) => i));
    await a.close();
    await b.close();
  });

  it('continues from the file after the store is reopened', async () => {
    const dir = await tempDir();
    const first = await openJsonlStore(dir);
    await first.create(header('s1'));
    await first.append('s1', notes(0, 3), { expectedSeq: 0 });
    await first.close();
    const second = await openJsonlStore(dir);
    expect(await rejection(second.append('s1', notes(0, 1), { expectedSeq: 0 }))).toMatchObject({
      actualSeq: 3,
    });
    await second.append('s1', notes(3, 1), { expectedSeq: 3 });
    expect((await second.load('s1')).events).toEqual(notes(0, 4));
    await second.close();
  });

  it.runIf(process.platform === 'linux')(
    'keeps a bounded number of logs open however many sessions it writes',
    async () => {
      const dir = await tempDir();
      const store = await openJsonlStore(dir, { fsync: false });
      const openFds = async (): Promise<number> => (await readdir('/proc/self/fd')).length;
      const before = await openFds();
      for (let i = 0; i < 100; i++) {
        await store.create(header(`s${i}`));
        await store.append(`s${i}`, notes(0, 1), { expectedSeq: 0 });
      }
      expect((await openFds()) - before).toBeLessThanOrEqual(64);
      for (let i = 0; i < 100; i++) await store.append(`s${i}`, notes(1, 1), { expectedSeq: 1 });
      expect((await store.load('s0')).events).toEqual(notes(0, 2));
      await store.close();
      expect(await openFds()).toBeLessThanOrEqual(before);
    },
  );

  it('gives NotFoundError for a session that does not exist', async () => {
    const dir = await tempDir();
    const store = await openJsonlStore(dir);
    expect(await rejection(store.load('nope'))).toBeInstanceOf(NotFoundError);
    expect(await rejection(store.append('nope', notes(0, 1), { expectedSeq: 0 }))).toBeInstanceOf(
      NotFoundError,
    );
    expect(await readdir(dir)).toEqual([]); // the transient lock is gone too
    await store.close();
  });

  it('detects a log replaced under a cached writer and checks the seq against the new file', async () => {
    const dir = await tempDir();
    const store = await openJsonlStore(dir);
    await store.create(header('s1'));
    await store.append('s1', notes(0, 2), { expectedSeq: 0 });
    const file = logPath(dir, 's1');
    const replacement = join(dir, 'replacement');
    await writeFile(replacement, `${JSON.stringify(header('s1'))}\n`);
    const { rename } = await import('node:fs/promises');
    await rename(replacement, file);
    expect(await rejection(store.append('s1', notes(2, 1), { expectedSeq: 2 }))).toMatchObject({
      code: 'CONFLICT',
      actualSeq: 0,
    });
    await store.append('s1', notes(0, 1), { expectedSeq: 0 });
    expect((await store.load('s1')).events).toEqual(notes(0, 1));
    await store.close();
  });
});

describe('header checks on load', () => {
  async function withHeaderLine(line: string): Promise<{ dir: string; error: unknown }> {
    const dir = await tempDir();
    await writeFile(logPath(dir, 's1'), `${line}\n`);
    const store = await openJsonlStore(dir);
    const error = await rejection(store.load('s1'));
    await store.close();
    return { dir, error };
  }

  it('refuses a newer format version with FormatVersionError, direction newer', async () => {
    const { error } = await withHeaderLine(JSON.stringify({ version: 2, id: 's1', createdAt: 1 }));
    expect(error).toBeInstanceOf(FormatVersionError);
    expect(error).toMatchObject({ found: 2, supported: 1, direction: 'newer' });
  });

  it('refuses an older format version with FormatVersionError, direction older', async () => {
    const { error } = await withHeaderLine(JSON.stringify({ version: -1, id: 's1', createdAt: 1 }));
    expect(error).toMatchObject({ code: 'FORMAT_VERSION', found: -1, direction: 'older' });
  });

  it('reports the version before any other header problem', async () => {
    const { error } = await withHeaderLine(JSON.stringify({ version: 7, bogus: true }));
    expect(error).toBeInstanceOf(FormatVersionError);
  });

  it('refuses a header naming another session with CorruptLogError at line 1', async () => {
    const { error } = await withHeaderLine(JSON.stringify(header('other')));
    expect(error).toBeInstanceOf(CorruptLogError);
    expect(error).toMatchObject({ line: 1, offset: 0 });
    expect((error as CorruptLogError).reason).toContain('other');
  });

  it('refuses an unparsable or malformed header with CorruptLogError at line 1', async () => {
    for (const line of ['{not json', '[]', JSON.stringify({ version: 1, id: 's1' }), '']) {
      const { error } = await withHeaderLine(line);
      expect(error).toBeInstanceOf(CorruptLogError);
      expect(error).toMatchObject({ line: 1, offset: 0 });
    }
  });

  it('refuses an empty file and an incomplete header line', async () => {
    const dir = await tempDir();
    const store = await openJsonlStore(dir);
    await writeFile(logPath(dir, 'a'), '');
    await writeFile(logPath(dir, 'b'), JSON.stringify(header('b')));
    expect(await rejection(store.load('a'))).toBeInstanceOf(CorruptLogError);
    expect(await rejection(store.load('b'))).toBeInstanceOf(CorruptLogError);
    expect(await rejection(store.append('b', notes(0, 1), { expectedSeq: 0 }))).toBeInstanceOf(
      CorruptLogError,
    );
    await store.close();
  });
});

describe('size limits', () => {
  it('refuses an over-limit event on append before writing anything', async () => {
    const dir = await tempDir();
    const store = await openJsonlStore(dir, { maxLineBytes: 1000 });
    await store.create(header('s1'));
    const before = await readFile(logPath(dir, 's1'));
    const error = await rejection(
      store.append('s1', [note(0), note(1, 'x'.repeat(2000))], { expectedSeq: 0 }),
    );
    expect(error).toBeInstanceOf(LimitExceededError);
    expect(error).toMatchObject({ allowed: 1000 });
    expect(await readFile(logPath(dir, 's1'))).toEqual(before);
    await store.close();
  });

  it('refuses an over-limit line on load with LimitExceededError naming line and size', async () => {
    const dir = await tempDir();
    const writer = await openJsonlStore(dir);
    await writer.create(header('s1'));
    await writer.append('s1', [note(0), note(1, 'y'.repeat(5000))], { expectedSeq: 0 });
    await writer.close();
    const reader = await openJsonlStore(dir, { maxLineBytes: 1000 });
    const error = await rejection(reader.load('s1'));
    expect(error).toBeInstanceOf(LimitExceededError);
    expect(error).toMatchObject({
      allowed: 1000,
      found: JSON.stringify(note(1, 'y'.repeat(5000))).length,
    });
    expect((error as Error).message).toContain('line 4');
    await reader.close();
  });

  it('refuses an over-limit line before reading it whole', async () => {
    const dir = await tempDir();
    await writeFile(
      logPath(dir, 's1'),
      `${JSON.stringify(header('s1'))}\n${'z'.repeat(3 * 1024 * 1024)}`,
    );
    const store = await openJsonlStore(dir, { maxLineBytes: 1024 });
    expect(await rejection(store.load('s1'))).toBeInstanceOf(LimitExceededError);
    await store.close();
  });
});

describe('list', () => {
  it('lists sessions newest first, paginated, with size and event count', async () => {
    const dir = await tempDir();
    const store = await openJsonlStore(dir);
    for (let i = 0; i < 5; i++) await store.create(header(`s${i}`, 1000 + i));
    await store.append('s2', notes(0, 3), { expectedSeq: 0 });
    const first = await store.list({ limit: 2 });
    expect(first.sessions.map((summary) => summary.header.id)).toEqual(['s4', 's3']);
    expect(first.nextCursor).toBeDefined();
    const second = await store.list({ limit: 2, cursor: first.nextCursor as string });
    expect(second.sessions.map((summary) => summary.header.id)).toEqual(['s2', 's1']);
    const third = await store.list({ limit: 2, cursor: second.nextCursor as string });
    expect(third.sessions.map((summary) => summary.header.id)).toEqual(['s0']);
    expect(third.nextCursor).toBeUndefined();
    const s2 = second.sessions[0];
    expect(s2?.eventCount).toBe(3);
    expect(s2?.sizeBytes).toBe((await stat(logPath(dir, 's2'))).size);
    expect(s2?.updatedAt).toBe(Math.floor((await stat(logPath(dir, 's2'))).mtimeMs));
    expect(second.sessions[1]?.eventCount).toBe(0);
    await store.close();
  });

  it('omits damaged, foreign-version and misplaced logs and ignores other files', async () => {
    const dir = await tempDir();
    const store = await openJsonlStore(dir);
    await store.create(header('good'));
    await writeFile(logPath(dir, 'bad'), '{oops\n');
    await writeFile(
      logPath(dir, 'future'),
      `${JSON.stringify({ version: 9, id: 'future', createdAt: 1 })}\n`,
    );
    await writeFile(logPath(dir, 'misplaced'), `${JSON.stringify(header('elsewhere'))}\n`);
    await writeFile(join(dir, '.good.0123.tmp'), `${JSON.stringify(header('tmp'))}\n`);
    await writeFile(join(dir, 'notes.txt'), 'hello');
    const page = await store.list();
    expect(page.sessions.map((summary) => summary.header.id)).toEqual(['good']);
    await store.close();
  });

  it('reads only the start and the last bytes of each log, never a whole log', async () => {
    const dir = await tempDir();
    const reads: { path: string; length: number; position: number }[] = [];
    const seeder = await openJsonlStore(dir, { fsync: false });
    await seeder.create(header('big'));
    const payload = 'p'.repeat(100_000);
    for (let i = 0; i < 40; i++) await seeder.append('big', [note(i, payload)], { expectedSeq: i });
    await seeder.close();
    const size = (await stat(logPath(dir, 'big'))).size;
    expect(size).toBeGreaterThan(4_000_000);
    const fs: FsFacade = {
      ...nodeFs,
      open: async (path, flags, mode) => {
        const handle = await nodeFs.open(path, flags, mode);
        const read = handle.read.bind(handle);
        return Object.assign(Object.create(null), {
          read: (buffer: Uint8Array, offset: number, length: number, position: number) => {
            reads.push({ path, length, position });
            return read(buffer, offset, length, position);
          },
          write: handle.write.bind(handle),
          stat: handle.stat.bind(handle),
          truncate: handle.truncate.bind(handle),
          datasync: handle.datasync.bind(handle),
          sync: handle.sync.bind(handle),
          chmod: handle.chmod.bind(handle),
          close: handle.close.bind(handle),
        });
      },
    };
    const store = await openJsonlStore(dir, { fs });
    const page = await store.list();
    expect(page.sessions[0]?.eventCount).toBe(40);
    const bytesRead = reads.reduce((sum, read) => sum + read.length, 0);
    expect(bytesRead).toBeLessThan(70 * 1024);
    await store.close();
  });

  it('refuses a bad limit or cursor', async () => {
    const dir = await tempDir();
    const store = await openJsonlStore(dir);
    expect(await rejection(store.list({ limit: 0 }))).toBeInstanceOf(InvalidArgumentError);
    expect(await rejection(store.list({ cursor: 'garbage' }))).toBeInstanceOf(InvalidArgumentError);
    await store.close();
  });
});

describe('delete', () => {
  it('removes the log and leaves nothing behind', async () => {
    const dir = await tempDir();
    const store = await openJsonlStore(dir);
    await store.create(header('s1'));
    await store.append('s1', notes(0, 2), { expectedSeq: 0 });
    await store.delete('s1');
    expect(await readdir(dir)).toEqual([]);
    expect(await rejection(store.load('s1'))).toBeInstanceOf(NotFoundError);
    await store.create(header('s1'));
    await store.append('s1', notes(0, 1), { expectedSeq: 0 });
    expect((await store.load('s1')).events).toEqual(notes(0, 1));
    await store.close();
  });

  it('gives NotFoundError for a missing session', async () => {
    const dir = await tempDir();
    const store = await openJsonlStore(dir);
    expect(await rejection(store.delete('nope'))).toBeInstanceOf(NotFoundError);
    await store.close();
  });

  it('gives LockedError while a writer holds the session, and deletes once it is released', async () => {
    const dir = await tempDir();
    const store = await openJsonlStore(dir);
    await store.create(header('s1'));
    const lock = await store.lock('s1');
    expect(await rejection(store.delete('s1'))).toBeInstanceOf(LockedError);
    const other = await openJsonlStore(dir);
    expect(await rejection(other.delete('s1'))).toBeInstanceOf(LockedError);
    await lock.release();
    await other.delete('s1');
    expect(await readdir(dir)).toEqual([]);
    await store.close();
    await other.close();
  });
});

describe('close', () => {
  it('rejects later calls with ClosedError and releases the locks taken through the store', async () => {
    const dir = await tempDir();
    const store = await openJsonlStore(dir);
    await store.create(header('s1'));
    const lock = await store.lock('s1');
    await store.close();
    expect(await rejection(store.load('s1'))).toBeInstanceOf(ClosedError);
    expect(await rejection(store.append('s1', [], { expectedSeq: 0 }))).toBeInstanceOf(ClosedError);
    expect(await readdir(dir)).toEqual(['s1.jsonl']);
    await lock.release(); // still fine, idempotent
    await store.close();
  });
});
