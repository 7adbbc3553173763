/**
 * The durable writer alone, against a faulty file-system facade (no store, locks or listing):
 * a failed fsync poisons the session and is never retried, a failed write rolls back to the
 * committed length, a failed rollback poisons too, a torn tail is truncated only at a commit
 * boundary of the seq it claims, and the LRU bounds the open handles.
 */

import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../../src/core/index.js';
import { ConflictError, StorageError } from '../../../src/store/contract/errors.js';
import { DEFAULT_MAX_LINE_BYTES, encodeBatch } from '../../../src/store/jsonl/format.js';
import type { FsFacade } from '../../../src/store/jsonl/fs.js';
import { encodeHeaderLine } from '../../../src/store/jsonl/header.js';
import { JsonlWriter } from '../../../src/store/jsonl/writer.js';
import { errno, type FaultHooks, faultyFs, header, notes, rejection, tempDir } from './helpers.js';

/** A log holding only its header, and a writer over a facade with `hooks`. */
async function setUp(
  hooks: FaultHooks = {},
  ids: readonly string[] = ['s1'],
  maxOpenWriters?: number,
): Promise<{ writer: JsonlWriter; files: string[]; fs: FsFacade }> {
  const dir = await tempDir();
  const files: string[] = [];
  for (const id of ids) {
    const file = join(dir, `${id}.jsonl`);
    await writeFile(file, encodeHeaderLine(header(id), DEFAULT_MAX_LINE_BYTES));
    files.push(file);
  }
  const fs = faultyFs(hooks);
  const writer = new JsonlWriter({
    location: `jsonl:${dir}`,
    fs,
    maxLineBytes: DEFAULT_MAX_LINE_BYTES,
    fsync: true,
    failpoint: undefined,
    ...(maxOpenWriters === undefined ? {} : { maxOpenWriters }),
  });
  return { writer, files, fs };
}

function batch(id: string, from: number, count: number): Buffer {
  return encodeBatch(id, notes(from, count), from + count, DEFAULT_MAX_LINE_BYTES);
}

describe('JsonlWriter', () => {
  it('appends framed batches and refuses a wrong expected seq with ConflictError', async () => {
    const { writer, files } = await setUp();
    const file = files[0] as string;
    await writer.append('s1', file, 0, batch('s1', 0, 2), 2);
    await writer.append('s1', file, 2, batch('s1', 2, 1), 1);
    const size = (await stat(file)).size;
    expect(await rejection(writer.append('s1', file, 1, batch('s1', 1, 1), 1))).toBeInstanceOf(
      ConflictError,
    );
    expect((await stat(file)).size).toBe(size);
    await writer.closeAll();
  });

  it('poisons the session after a failed fsync, without retrying it or touching the file again', async () => {
    let fail = false;
    let syncs = 0;
    const touched: string[] = [];
    const { writer, files } = await setUp({
      datasync: () => {
        syncs++;
        if (fail) {
          fail = false; // once: the rollback's own fsync succeeds
          throw errno('EIO', 'injected fsync failure');
        }
      },
      open: (path, flags) => touched.push(`${path}:${flags}`),
      write: () => {
        touched.push('write');
        return undefined;
      },
    });
    const file = files[0] as string;
    await writer.append('s1', file, 0, batch('s1', 0, 2), 2);
    const committed = await readFile(file);
    fail = true;
    syncs = 0;
    const error = await rejection(writer.append('s1', file, 2, batch('s1', 2, 3), 3));
    expect(error).toBeInstanceOf(StorageError);
    expect((error as StorageError).cause).toMatchObject({ code: 'EIO' });
    expect(syncs).toBe(2); // the batch's (failed) and the rollback's: the batch's is not retried
    expect(await readFile(file)).toEqual(committed);
    touched.length = 0;
    const refused = await rejection(writer.append('s1', file, 2, batch('s1', 2, 1), 1));
    expect(refused).toBeInstanceOf(StorageError);
    expect((refused as Error).message).toContain('reopened');
    expect(() => writer.assertNotPoisoned('s1')).toThrow(StorageError);
    expect(touched).toEqual([]);
    await writer.closeAll();
  });

  it('rolls a failed write back to the committed length and keeps writing', async () => {
    let fail = false;
    let writes = 0;
    const { writer, files } = await setUp({
      write: (_path, length) => {
        if (!fail) return undefined;
        writes++;
        if (writes === 1) return Math.max(1, Math.floor(length / 3));
        throw errno('ENOSPC', 'no space left on device');
      },
    });
    const file = files[0] as string;
    await writer.append('s1', file, 0, batch('s1', 0, 1), 1);
    const committed = await readFile(file);
    fail = true;
    const error = await rejection(writer.append('s1', file, 1, batch('s1', 1, 4), 4));
    expect(error).toBeInstanceOf(StorageError);
    expect((error as Error).message).toContain(`rolled back to ${committed.length} bytes`);
    expect(await readFile(file)).toEqual(committed);
    fail = false;
    writer.assertNotPoisoned('s1');
    await writer.append('s1', file, 1, batch('s1', 1, 1), 1);
    await writer.closeAll();
  });

  it('poisons the session when the rollback of a failed write fails too', async () => {
    let fail = false;
    const { writer, files } = await setUp({
      write: () => {
        if (fail) throw errno('EIO', 'write failed');
        return undefined;
      },
      truncate: () => {
        if (fail) throw errno('EIO', 'truncate failed');
      },
    });
    const file = files[0] as string;
    fail = true;
    const error = await rejection(writer.append('s1', file, 0, batch('s1', 0, 1), 1));
    expect((error as StorageError).cause).toBeInstanceOf(AggregateError);
    fail = false;
    expect(() => writer.assertNotPoisoned('s1')).toThrow(StorageError);
    await writer.closeAll();
  });

  it('truncates a torn tail only where a committed batch of the claimed seq ends', async () => {
    const { writer, files } = await setUp();
    const file = files[0] as string;
    await writer.append('s1', file, 0, batch('s1', 0, 2), 2);
    const committed = await readFile(file);
    await writeFile(file, Buffer.concat([committed, Buffer.from('{"seq":2,"ti')]));
    const span = { offset: committed.length, size: 12 };
    expect(await rejection(writer.discardTail('s1', file, 1, span))).toBeInstanceOf(
      InvalidArgumentError,
    );
    await writer.discardTail('s1', file, 2, { offset: 3, size: 1 }); // not this log's end: a no-op
    expect((await stat(file)).size).toBe(committed.length + 12);
    await writer.discardTail('s1', file, 2, span);
    expect(await readFile(file)).toEqual(committed);
    await writer.append('s1', file, 2, batch('s1', 2, 1), 1);
    await writer.closeAll();
  });

  it('keeps at most maxOpenWriters handles open, closing the least recently used', async () => {
    const { writer, files } = await setUp({}, ['a', 'b', 'c'], 2);
    const [a, b, c] = files as [string, string, string];
    await writer.append('a', a, 0, batch('a', 0, 1), 1);
    await writer.append('b', b, 0, batch('b', 0, 1), 1);
    await writer.append('a', a, 1, batch('a', 1, 1), 1);
    await writer.append('c', c, 0, batch('c', 0, 1), 1);
    expect(writer.openSessions).toEqual(['a', 'c']);
    // A reopened writer probes the next seq from the file.
    await writer.append('b', b, 1, batch('b', 1, 1), 1);
    await writer.closeAll();
    expect(writer.openSessions).toEqual([]);
  });
});
