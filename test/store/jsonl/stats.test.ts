/**
 * `summarize` on JSONL reads envelopes, not events: a torn final batch is not counted, a line
 * in another key order is parsed instead of skipped, and a line it cannot read is named.
 */
import { appendFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CorruptLogError } from '../../../src/store/contract/errors.js';
import { batchText } from '../../../src/store/jsonl/format.js';
import { openJsonlStore } from '../../../src/store/jsonl/index.js';
import { event } from '../../core/builders.js';
import { header, rejection, tempDir } from './helpers.js';

const turn = (seq: number, n: number) =>
  JSON.stringify({ seq, time: 100 + seq, type: 'turn/start', data: { turn: n } });

describe('JSONL summarize', () => {
  it('leaves a torn final batch out, as load does', async () => {
    const dir = await tempDir();
    const store = await openJsonlStore(dir);
    await store.create(header('s1'));
    await store.append('s1', [event(0, 'turn/start', { turn: 1 }, { time: 5 })], {
      expectedSeq: 0,
    });
    // A batch a crash cut before its commit marker.
    await appendFile(join(dir, 's1.jsonl'), `${turn(1, 2)}\n`);
    expect(await store.summarize('s1')).toMatchObject({
      eventCount: 1,
      lastEventTime: 5,
      lastTurn: 1,
    });
    expect((await store.load('s1')).events).toHaveLength(1);
    await store.close();
  });

  it('parses an event line written in another form, and names a line it cannot read', async () => {
    const dir = await tempDir();
    const file = join(dir, 's1.jsonl');
    const foreign = JSON.stringify({ type: 'turn/start', seq: 1, time: 7, data: { turn: 4 } });
    await writeFile(
      file,
      `${JSON.stringify(header('s1'))}\n${batchText([turn(0, 3)], 1)}${batchText([foreign], 2)}`,
    );
    const store = await openJsonlStore(dir);
    expect(await store.summarize('s1')).toMatchObject({ eventCount: 2, lastTurn: 4 });
    await appendFile(file, batchText(['{"seq":2,"time":'], 3));
    const error = await rejection(store.summarize('s1'));
    expect(error).toBeInstanceOf(CorruptLogError);
    expect(error).toMatchObject({ line: 6 });
    await store.close();
  });
});
