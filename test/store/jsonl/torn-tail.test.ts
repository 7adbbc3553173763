/**
 * Crash damage: an incomplete final batch is a torn tail (reported, dropped by the next writer);
 * damage anywhere before the last commit marker is a CorruptLogError naming line and byte.
 */

import { appendFile, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InvalidArgumentError, Session } from '../../../src/core/index.js';
import {
  CorruptLogError,
  InvalidStoreError,
  LockedError,
} from '../../../src/store/contract/errors.js';
import { batchText } from '../../../src/store/jsonl/format.js';
import { type JsonlStore, openJsonlStore } from '../../../src/store/jsonl/index.js';
import { encodeSessionId } from '../../../src/store/jsonl/paths.js';
import { openSession } from '../../../src/store/session/open-session.js';
import { event, recordToolTurn, tickingClock } from '../../core/builders.js';
import { header, headerText, note, notes, rejection, tempDir } from './helpers.js';

function logPath(dir: string, id: string): string {
  return join(dir, `${encodeSessionId(id)}.jsonl`);
}

/** A session with three committed batches (2, 3 and 2 events); returns the file and offsets. */
async function threeBatches(store: JsonlStore, dir: string, id = 's1') {
  await store.create(header(id));
  await store.append(id, notes(0, 2), { expectedSeq: 0 });
  await store.append(id, notes(2, 3), { expectedSeq: 2 });
  const secondEnd = (await stat(logPath(dir, id))).size;
  await store.append(id, notes(5, 2), { expectedSeq: 5 });
  const file = logPath(dir, id);
  const bytes = await readFile(file);
  return { file, bytes, secondEnd };
}

/** Byte offset and 1-based number of each line. */
function lineStarts(bytes: Buffer): number[] {
  const starts = [0];
  for (let i = 0; i < bytes.length - 1; i++) if (bytes[i] === 0x0a) starts.push(i + 1);
  return starts;
}

describe('torn tails', () => {
  it('drops an incomplete final line and reports it as the torn tail', async () => {
    const dir = await tempDir();
    const store = await openJsonlStore(dir);
    const { file, bytes } = await threeBatches(store, dir);
    await appendFile(file, '{"seq":7,"time":1,"ty');
    const loaded = await store.load('s1');
    expect(loaded.events).toEqual(notes(0, 7));
    expect(loaded.tornTail).toMatchObject({
      committedSeq: 7,
      bytes: { offset: bytes.length, size: 21 },
    });
    expect(loaded.tornTail?.reason).toContain('incomplete final line');
    await store.close();
  });

  it('drops complete event lines that have no commit marker (a batch that never completed)', async () => {
    const dir = await tempDir();
    const store = await openJsonlStore(dir);
    const { file, bytes } = await threeBatches(store, dir);
    const partial = `${JSON.stringify(note(7))}\n${JSON.stringify(note(8))}\n`;
    await appendFile(file, partial);
    const loaded = await store.load('s1');
    expect(loaded.events).toEqual(notes(0, 7));
    expect(loaded.tornTail).toEqual({
      committedSeq: 7,
      bytes: { offset: bytes.length, size: partial.length },
      reason: expect.any(String),
    });
    await store.close();
  });

  it('treats garbage and NUL bytes after the last commit marker as torn', async () => {
    for (const tail of [
      'garbage\n',
      '\u0000'.repeat(4096),
      `${JSON.stringify(note(7))}\n\u0000\u0000\n`,
      '\n',
    ]) {
      const dir = await tempDir();
      const store = await openJsonlStore(dir);
      const { file, bytes } = await threeBatches(store, dir);
      await appendFile(file, tail);
      const loaded = await store.load('s1');
      expect(loaded.events).toHaveLength(7);
      expect(loaded.tornTail?.bytes).toMatchObject({
        offset: bytes.length,
        size: Buffer.byteLength(tail),
      });
      await store.close();
    }
  });

  it('reports a torn first batch against the end of the header line', async () => {
    const dir = await tempDir();
    const store = await openJsonlStore(dir);
    await store.create(header('s1'));
    const headerEnd = (await stat(logPath(dir, 's1'))).size;
    await appendFile(logPath(dir, 's1'), `${JSON.stringify(note(0))}\n{"com`);
    const loaded = await store.load('s1');
    expect(loaded.events).toEqual([]);
    expect(loaded.tornTail?.bytes?.offset).toBe(headerEnd);
    expect(loaded.tornTail?.committedSeq).toBe(0);
    await store.close();
  });

  it('loads exactly the committed prefix for a cut at every byte of the last batch', async () => {
    const dir = await tempDir();
    const store = await openJsonlStore(dir, { fsync: false });
    const { file, bytes, secondEnd } = await threeBatches(store, dir);
    const copy = join(dir, `${encodeSessionId('cut')}.jsonl`);
    const cutHeader = Buffer.from(headerText(header('cut')));
    const original = Buffer.from(headerText(header('s1')));
    const body = bytes.subarray(original.length);
    for (let cut = secondEnd; cut <= bytes.length; cut++) {
      await writeFile(copy, Buffer.concat([cutHeader, body.subarray(0, cut - original.length)]));
      const shift = cutHeader.length - original.length;
      const loaded = await store.load('cut');
      if (cut === bytes.length) {
        expect(loaded.events).toEqual(notes(0, 7));
        expect(loaded.tornTail).toBeUndefined();
      } else if (cut === secondEnd) {
        expect(loaded.events).toEqual(notes(0, 5));
        expect(loaded.tornTail).toBeUndefined();
      } else {
        expect(loaded.events, `cut at ${cut}`).toEqual(notes(0, 5));
        expect(loaded.tornTail?.bytes).toMatchObject({
          offset: secondEnd + shift,
          size: cut - secondEnd,
        });
      }
    }
    expect(await readFile(file)).toEqual(bytes);
    await store.close();
  });

  it('never modifies the file when loading', async () => {
    const dir = await tempDir();
    const store = await openJsonlStore(dir);
    const { file } = await threeBatches(store, dir);
    await appendFile(file, '{"seq":7');
    const before = await readFile(file);
    const { mtimeMs } = await stat(file);
    await store.load('s1');
    await store.load('s1');
    expect(await readFile(file)).toEqual(before);
    expect((await stat(file)).mtimeMs).toBe(mtimeMs);
    await store.close();
  });
});

describe('corruption before the last commit marker', () => {
  async function corrupted(edit: (bytes: Buffer, starts: number[]) => Buffer) {
    const dir = await tempDir();
    const store = await openJsonlStore(dir);
    const { file, bytes } = await threeBatches(store, dir);
    const starts = lineStarts(bytes);
    await writeFile(file, edit(Buffer.from(bytes), starts));
    const error = await rejection(store.load('s1'));
    await store.close();
    return { error, starts };
  }

  it('detects a header altered into another valid header by its seal', async () => {
    for (const flip of [
      (text: string) => text.replace('"createdAt":1700000000000', '"createdAt":1700000000001'),
      (text: string) => text.replace('"version":1,', '"version":1 ,'),
    ]) {
      const { error } = await corrupted((bytes) => Buffer.from(flip(bytes.toString('utf8'))));
      expect(error).toBeInstanceOf(CorruptLogError);
      expect(error).toMatchObject({ line: 1 });
      expect((error as CorruptLogError).reason).toContain('seal');
    }
  });

  it('loads a log written before header seals, whose events follow the header line', async () => {
    const dir = await tempDir();
    const first = [JSON.stringify(note(0)), JSON.stringify(note(1))];
    await writeFile(
      join(dir, `${encodeSessionId('legacy')}.jsonl`),
      `${JSON.stringify(header('legacy'))}\n${batchText(first, 2)}`,
    );
    const store = await openJsonlStore(dir);
    expect((await store.load('legacy')).events).toEqual(notes(0, 2));
    await store.append('legacy', notes(2, 1), { expectedSeq: 2 });
    expect((await store.load('legacy')).events).toEqual(notes(0, 3));
    await store.close();
  });

  it('names the line and byte of a flipped byte in an earlier batch', async () => {
    // Lines: 1 header, 2 its seal, 3-4 events 0-1, 5 commit, 6-8 events 2-4, 9 commit, 10-11
    // events 5-6, 12 commit.
    const { error, starts } = await corrupted((bytes, starts) => {
      const at = starts[5] as number; // line 6 (event seq 2): its opening brace
      bytes[at] = 0x58;
      return bytes;
    });
    expect(error).toBeInstanceOf(CorruptLogError);
    expect(error).toMatchObject({ line: 6, offset: starts[5] });
    expect((error as CorruptLogError).file).toContain('s1.jsonl');
  });

  it('reports a flip of any single byte of the earlier batches, even inside a string (the commit checksum)', async () => {
    const dir = await tempDir();
    const store = await openJsonlStore(dir);
    const { file, bytes, secondEnd } = await threeBatches(store, dir);
    const headerEnd = bytes.indexOf(0x0a) + 1;
    const missed: number[] = [];
    for (let at = headerEnd; at < secondEnd; at++) {
      const flipped = Buffer.from(bytes);
      flipped[at] = (flipped[at] as number) ^ 0x01;
      await writeFile(file, flipped);
      const outcome = await rejection(store.load('s1')).catch(() => undefined);
      if (!(outcome instanceof CorruptLogError)) missed.push(at);
    }
    await store.close();
    expect(missed).toEqual([]);
  });

  it('treats damage in the last batch as torn even when its commit marker reached the disk', async () => {
    // Pages of one write can reach the disk out of order: the marker made it, a line before it
    // did not. Nothing was written after the batch, so it is the unacknowledged one.
    const dir = await tempDir();
    const store = await openJsonlStore(dir);
    const { file, bytes, secondEnd } = await threeBatches(store, dir);
    const damaged = Buffer.from(bytes);
    damaged.fill(0, secondEnd, secondEnd + 20);
    await writeFile(file, damaged);
    const loaded = await store.load('s1');
    expect(loaded.events).toEqual(notes(0, 5));
    expect(loaded.tornTail?.bytes).toMatchObject({
      offset: secondEnd,
      size: bytes.length - secondEnd,
    });
    await store.close();
  });

  it('reports a wrong seq, a wrong commit count and a NUL-filled line in acknowledged data', async () => {
    const swapSeq = await corrupted((bytes) =>
      Buffer.from(bytes.toString('utf8').replace('"seq":1,', '"seq":9,')),
    );
    expect(swapSeq.error).toMatchObject({
      code: 'CORRUPT_LOG',
      line: 4,
      offset: swapSeq.starts[3],
    });
    const badCommit = await corrupted((bytes) =>
      Buffer.from(bytes.toString('utf8').replace('{"commit":2,', '{"commit":3,')),
    );
    expect(badCommit.error).toMatchObject({ line: 5, offset: badCommit.starts[4] });
    const nul = await corrupted((bytes, starts) => {
      bytes.fill(0, starts[2] as number, (starts[3] as number) - 1);
      return bytes;
    });
    expect(nul.error).toMatchObject({ line: 3, offset: nul.starts[2] });
    expect((nul.error as CorruptLogError).reason).toContain('NUL');
  });

  it('reports invalid UTF-8 and a deleted line in acknowledged data', async () => {
    const utf8 = await corrupted((bytes, starts) => {
      bytes[(starts[3] as number) + 40] = 0xff;
      return bytes;
    });
    expect(utf8.error).toMatchObject({ line: 4 });
    expect((utf8.error as CorruptLogError).reason).toContain('UTF-8');
    const missing = await corrupted((bytes, starts) =>
      Buffer.concat([bytes.subarray(0, starts[5]), bytes.subarray(starts[6])]),
    );
    expect(missing.error).toMatchObject({ line: 6 });
  });

  it('appends after a clean final marker without rescanning, and load still reports earlier damage', async () => {
    const dir = await tempDir();
    const writer = await openJsonlStore(dir);
    const { file, bytes } = await threeBatches(writer, dir);
    await writer.close();
    await writeFile(file, Buffer.from(bytes.toString('utf8').replace('"seq":1,', '"seq":9,')));
    const store = await openJsonlStore(dir);
    await store.append('s1', notes(7, 1), { expectedSeq: 7 });
    expect(await rejection(store.load('s1'))).toMatchObject({ code: 'CORRUPT_LOG', line: 4 });
    await store.close();
  });

  it('refuses to append after a log whose final marker is damaged (it reads as a torn batch)', async () => {
    const dir = await tempDir();
    const writer = await openJsonlStore(dir);
    const { file, bytes } = await threeBatches(writer, dir);
    await writer.close();
    await writeFile(
      file,
      Buffer.from(
        bytes.toString('utf8').replace(/\{"commit":7,"bytes":\d+,"crc32":\d+\}/, '{"commit":7,'),
      ),
    );
    const store = await openJsonlStore(dir);
    expect(await rejection(store.append('s1', notes(7, 1), { expectedSeq: 7 }))).toBeInstanceOf(
      InvalidStoreError,
    );
    expect((await store.load('s1')).tornTail).toBeDefined();
    await store.close();
  });
});

describe('discardTornTail', () => {
  it('truncates the torn tail under the lock, after which appends continue', async () => {
    const dir = await tempDir();
    const store = await openJsonlStore(dir);
    const { file, bytes } = await threeBatches(store, dir);
    await appendFile(file, `${JSON.stringify(note(7))}\n{"seq":8`);
    expect(await rejection(store.append('s1', notes(7, 1), { expectedSeq: 7 }))).toBeInstanceOf(
      InvalidStoreError,
    );
    const loaded = await store.load('s1');
    const lock = await store.lock('s1');
    await store.discardTornTail('s1', loaded.tornTail as never, lock);
    expect(await readFile(file)).toEqual(bytes);
    await store.discardTornTail('s1', loaded.tornTail as never, lock); // the log changed: a no-op
    expect(await readFile(file)).toEqual(bytes);
    await store.append('s1', notes(7, 1), { expectedSeq: 7 });
    expect((await store.load('s1')).events).toEqual(notes(0, 8));
    await lock.release();
    await store.close();
  });

  it('leaves a log alone that changed since it was loaded', async () => {
    const dir = await tempDir();
    const store = await openJsonlStore(dir);
    const { file } = await threeBatches(store, dir);
    await appendFile(file, 'torn');
    const { tornTail } = await store.load('s1');
    await appendFile(file, 'more');
    const before = await readFile(file);
    const lock = await store.lock('s1');
    await store.discardTornTail('s1', tornTail as never, lock);
    expect(await readFile(file)).toEqual(before);
    await store.close();
  });

  it('refuses without the lock, with another session lock, or with a tail that is not at a commit boundary', async () => {
    const dir = await tempDir();
    const store = await openJsonlStore(dir);
    const { file, bytes } = await threeBatches(store, dir);
    await appendFile(file, 'torn');
    const { tornTail } = await store.load('s1');
    const tail = tornTail as NonNullable<typeof tornTail>;
    const otherLock = await store.lock('other');
    expect(await rejection(store.discardTornTail('s1', tail, otherLock))).toBeInstanceOf(
      InvalidArgumentError,
    );
    const lock = await store.lock('s1');
    await lock.release();
    expect(await rejection(store.discardTornTail('s1', tail, lock))).toBeInstanceOf(
      InvalidStoreError,
    );
    const second = await openJsonlStore(dir);
    const foreign = await second.lock('s1');
    expect(await rejection(store.discardTornTail('s1', tail, lock))).toBeInstanceOf(LockedError);
    await foreign.release();
    const fresh = await store.lock('s1');
    const span = tail.bytes as NonNullable<typeof tail.bytes>;
    const bogus = {
      committedSeq: tail.committedSeq,
      bytes: { offset: span.offset - 3, size: span.size + 3 },
      reason: 'bogus',
    };
    expect(await rejection(store.discardTornTail('s1', bogus, fresh))).toBeInstanceOf(
      InvalidArgumentError,
    );
    expect(await readFile(file)).toEqual(Buffer.concat([bytes, Buffer.from('torn')]));
    await store.close();
    await second.close();
  });

  it('is what openSession uses to repair a crashed log, and a second open writes nothing', async () => {
    const dir = await tempDir();
    const store = await openJsonlStore(dir);
    const session = Session.create({ id: 'live', clock: tickingClock() });
    recordToolTurn(session, 1);
    await store.create(session.header);
    await store.append('live', session.events, { expectedSeq: 0 });
    const file = logPath(dir, 'live');
    const committed = await readFile(file);
    await appendFile(
      file,
      `${JSON.stringify(event(session.seq, 'turn/start', { turn: 2 }, { time: 1 }))}\n\u0000\u0000`,
    );
    const live = await openSession(store, 'live');
    expect(live.openReport.tornBytesDropped).toBeGreaterThan(0);
    expect(live.events).toHaveLength(session.seq);
    await live.close();
    expect(await readFile(file)).toEqual(committed);
    const { mtimeMs } = await stat(file);
    const again = await openSession(store, 'live');
    expect(again.openReport).toEqual({ created: false, tornBytesDropped: 0, repairedEvents: 0 });
    await again.close();
    expect(await readFile(file)).toEqual(committed);
    expect((await stat(file)).mtimeMs).toBe(mtimeMs);
    await store.close();
  });
});
