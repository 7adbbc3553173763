/**
 * Loading streams the file in bounded chunks: a log far larger than one read (and, in
 * bench/jsonl-load.ts, larger than V8's longest string) loads.
 */
import { open, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { batchText } from '../../../src/store/jsonl/format.js';
import { nodeFs } from '../../../src/store/jsonl/fs.js';
import { type FsFacade, openJsonlStore } from '../../../src/store/jsonl/index.js';
import { READ_CHUNK_BYTES } from '../../../src/store/jsonl/line-reader.js';
import { encodeSessionId } from '../../../src/store/jsonl/paths.js';
import { header, note, tempDir } from './helpers.js';

/** Writes a log of `batches` batches of `perBatch` events carrying `payload`-character texts. */
async function writeLargeLog(
  file: string,
  id: string,
  batches: number,
  perBatch: number,
  payload: number,
): Promise<number> {
  const handle = await open(file, 'wx', 0o600);
  try {
    await handle.write(`${JSON.stringify(header(id))}\n`);
    const text = 'x'.repeat(payload);
    let seq = 0;
    for (let b = 0; b < batches; b++) {
      const lines: string[] = [];
      for (let i = 0; i < perBatch; i++) lines.push(JSON.stringify(note(seq++, text)));
      await handle.write(batchText(lines, seq));
    }
    return seq;
  } finally {
    await handle.close();
  }
}

describe('streaming load', () => {
  it('loads a 200 MB log reading at most one chunk per read', async () => {
    const dir = await tempDir();
    const file = join(dir, `${encodeSessionId('big')}.jsonl`);
    const count = await writeLargeLog(file, 'big', 320, 10, 64 * 1024);
    expect((await stat(file)).size).toBeGreaterThan(200 * 1024 * 1024);
    let largestRead = 0;
    let reads = 0;
    const fs: FsFacade = {
      ...nodeFs,
      open: async (path, flags, mode) => {
        const handle = await nodeFs.open(path, flags, mode);
        return {
          read: (buffer, offset, length, position) => {
            reads++;
            largestRead = Math.max(largestRead, length);
            return handle.read(buffer, offset, length, position);
          },
          write: handle.write.bind(handle),
          stat: handle.stat.bind(handle),
          truncate: handle.truncate.bind(handle),
          datasync: handle.datasync.bind(handle),
          sync: handle.sync.bind(handle),
          chmod: handle.chmod.bind(handle),
          close: handle.close.bind(handle),
        };
      },
    };
    const store = await openJsonlStore(dir, { fs });
    const loaded = await store.load('big');
    expect(loaded.events).toHaveLength(count);
    expect(loaded.events.at(-1)?.seq).toBe(count - 1);
    expect(loaded.tornTail).toBeUndefined();
    expect(largestRead).toBeLessThanOrEqual(READ_CHUNK_BYTES);
    expect(reads).toBeGreaterThan(200);
    // A writer learns the next seq from the last bytes, without scanning the log again.
    reads = 0;
    await store.append('big', [note(count)], { expectedSeq: count });
    expect(reads).toBeLessThan(10);
    await store.close();
  }, 60_000);
});
