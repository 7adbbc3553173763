/**
 * The batch scanner reads what the line-by-line reader reads, whatever the read size, and hands
 * over to it at the first batch it doubts, so damage is reported exactly as before. With
 * elision, chunk lines in palimpsest's own form become stubs once their batch's checksum has
 * covered them, and only finished chunks stay stubs.
 */
import { appendFile, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  type EventEnvelope,
  isElidedChunk,
  type JsonValue,
  type SessionEvent,
} from '../../../src/core/index.js';
import { CorruptLogError } from '../../../src/store/contract/errors.js';
import { batchText } from '../../../src/store/jsonl/format.js';
import { nodeFs } from '../../../src/store/jsonl/fs.js';
import { scanLines } from '../../../src/store/jsonl/line-scan.js';
import { encodeSessionId } from '../../../src/store/jsonl/paths.js';
import { type ScanResult, scanLog } from '../../../src/store/jsonl/scan.js';
import { event, rawEvent } from '../../core/builders.js';
import { assistantMessage, header, note, tempDir } from './helpers.js';

const MAX_LINE = 1024 * 1024;

/** Writes a log of the given batches (each a list of JSON lines, written as they are). */
async function writeLog(id: string, batches: readonly (readonly string[])[]): Promise<string> {
  const dir = await tempDir();
  const file = join(dir, `${encodeSessionId(id)}.jsonl`);
  let text = `${JSON.stringify(header(id))}\n`;
  let committed = 0;
  for (const lines of batches) {
    committed += lines.length;
    text += batchText(lines, committed);
  }
  await writeFile(file, text);
  return file;
}

/** A scan with its events as an array, every elided chunk a stub. */
type Scanned = ScanResult & { readonly events: SessionEvent[] };

async function scan(
  file: string,
  id: string,
  options: { chunkBytes?: number; elide?: boolean } = {},
): Promise<Scanned | Error> {
  const handle = await nodeFs.open(file, 'r');
  try {
    const result = await scanLog(handle, {
      file,
      expectedId: id,
      maxLineBytes: MAX_LINE,
      ...(options.chunkBytes === undefined ? {} : { chunkBytes: options.chunkBytes }),
      elideFinishedChunks: options.elide === true,
    });
    return { ...result, events: result.log.toEvents() };
  } catch (error) {
    return error as Error;
  } finally {
    await handle.close();
  }
}

/** The line reader alone, from the first line after the header: the reference. */
async function reference(file: string): Promise<unknown> {
  const bytes = await readFile(file);
  const headerEnd = bytes.indexOf(0x0a) + 1;
  const handle = await nodeFs.open(file, 'r');
  const events: SessionEvent[] = [];
  try {
    const end = await scanLines(
      handle,
      { file, maxLineBytes: MAX_LINE, offset: headerEnd, lineNumber: 2, committedEnd: headerEnd },
      events,
    );
    // The line count at the committed end is the reference reader's own (for `watch`).
    const { committedLine: _line, ...rest } = end;
    return { events, ...rest };
  } catch (error) {
    return error;
  } finally {
    await handle.close();
  }
}

function outcome(result: ScanResult | Error | unknown): unknown {
  if (result instanceof Error) return { error: result.constructor.name, message: result.message };
  const { header: _, log: _log, ...rest } = result as Scanned;
  return rest;
}

const line = (event: SessionEvent): string => JSON.stringify(event);

function chunk(
  seq: number,
  delta: string,
  extra: Partial<EventEnvelope<string, JsonValue>> = {},
): SessionEvent {
  return rawEvent({
    seq,
    time: 1_700_000_000_000 + seq,
    type: 'assistant/chunk',
    data: { turn: 1, step: 1, chunk: { type: 'text-delta', id: 't0', delta } },
    ...extra,
  });
}

const message = (seq: number, cites: readonly number[]): SessionEvent =>
  assistantMessage(seq, cites);

/** Three batches of notes and chunks with multi-byte text and one line longer than a read. */
function mixedBatches(): string[][] {
  const long = 'ü'.repeat(700);
  return [
    [line(note(0, 'héllo 🌍')), line(chunk(1, 'a')), line(chunk(2, '世界'))],
    [line(message(3, [1, 2])), line(note(4, long)), line(chunk(5, '\u2028'))],
    [line(message(6, [5])), line(note(7))],
  ];
}

describe('the batch scanner', () => {
  it('reads what the line reader reads, for any read size', async () => {
    const file = await writeLog('mixed', mixedBatches());
    const expected = outcome(await reference(file));
    for (const chunkBytes of [16, 63, 100, 1000, 1024 * 1024]) {
      expect(outcome(await scan(file, 'mixed', { chunkBytes }))).toEqual(expected);
    }
  });

  it('reports a flipped byte or a cut anywhere exactly as the line reader does', async () => {
    const file = await writeLog('flip', mixedBatches());
    const original = await readFile(file);
    const headerEnd = original.indexOf(0x0a) + 1;
    const kinds = new Set<string>();
    for (let at = headerEnd; at < original.length; at += 7) {
      const flipped = Buffer.from(original);
      flipped[at] = (flipped[at] as number) ^ 0x20;
      await writeFile(file, flipped);
      const got = outcome(await scan(file, 'flip', { chunkBytes: 64 }));
      expect(got, `flip at ${at}`).toEqual(outcome(await reference(file)));
      await writeFile(file, original.subarray(0, at));
      const cut = outcome(await scan(file, 'flip', { chunkBytes: 64 }));
      expect(cut, `cut at ${at}`).toEqual(outcome(await reference(file)));
      for (const result of [got, cut] as Record<string, unknown>[]) {
        kinds.add(
          result.error !== undefined ? String(result.error) : result.tornTail ? 'torn' : 'whole',
        );
      }
    }
    expect([...kinds].sort()).toEqual(['CorruptLogError', 'torn', 'whole']);
  });
});

describe('eliding finished chunks', () => {
  it('stubs the chunks a later message cites, also across batches, and nothing else', async () => {
    const file = await writeLog('mixed', mixedBatches());
    const full = (await scan(file, 'mixed')) as Scanned;
    for (const chunkBytes of [32, 1024 * 1024]) {
      const fast = (await scan(file, 'mixed', { chunkBytes, elide: true })) as Scanned;
      expect(fast.events.map((event) => isElidedChunk(event))).toEqual([
        false,
        true,
        true,
        false,
        false,
        true,
        false,
        false,
      ]);
      expect(fast.events[2]).toEqual(
        event(
          2,
          'assistant/chunk',
          { elided: { bytes: Buffer.byteLength(JSON.stringify(full.events[2]?.data)) } },
          { time: full.events[2]?.time },
        ),
      );
      expect(fast.events[5]?.data).toEqual({
        elided: { bytes: Buffer.byteLength(JSON.stringify(full.events[5]?.data)) },
      });
      for (const seq of [0, 3, 4, 6, 7]) expect(fast.events[seq]).toEqual(full.events[seq]);
    }
  });

  it('parses chunk lines in any other form (sources, key order, spacing) in full', async () => {
    const cited = chunk(1, 'x', { sourceEventSeqs: [0] });
    const reordered = `{"time":1,"seq":2,"type":"assistant/chunk","data":{"turn":1,"step":1,"chunk":{"type":"x"}}}`;
    const spaced = `{"seq": 3, "time": 1, "type": "assistant/chunk", "data": {"turn":1,"step":1,"chunk":{"type":"x"}}}`;
    const file = await writeLog('forms', [
      [line(note(0)), line(cited), reordered, spaced, line(message(4, [1, 2, 3]))],
    ]);
    const fast = (await scan(file, 'forms', { elide: true })) as Scanned;
    expect(fast.events.some(isElidedChunk)).toBe(false);
    expect(fast.events).toEqual(((await scan(file, 'forms')) as Scanned).events);
  });

  it('reads back in full the chunks no message cites, near or far apart', async () => {
    const big = 'b'.repeat(100 * 1024);
    const batches: string[][] = [];
    let seq = 0;
    for (let i = 0; i < 6; i++) {
      // An abandoned stream (cited by nothing), then a finished one, then a large note.
      const abandoned = seq++;
      const finished = seq++;
      batches.push([
        line(chunk(abandoned, `lost ${i}`)),
        line(chunk(finished, `kept ${i}`)),
        line(message(seq++, [finished])),
        line(note(seq++, big)),
      ]);
    }
    const file = await writeLog('gaps', batches);
    const full = (await scan(file, 'gaps')) as Scanned;
    const fast = (await scan(file, 'gaps', { elide: true })) as Scanned;
    fast.events.forEach((event, index) => {
      if (index % 4 === 1) expect(isElidedChunk(event)).toBe(true);
      else expect(event).toEqual(full.events[index]);
    });
  });

  it('keeps in full the chunks cited only by a message of a torn tail', async () => {
    const file = await writeLog('torn', [[line(note(0)), line(chunk(1, 'streamed'))]]);
    await appendFile(file, `${line(message(2, [1]))}\n`);
    const fast = (await scan(file, 'torn', { elide: true })) as Scanned;
    expect(fast.tornTail?.reason).toContain('1 event(s) after the last commit marker');
    expect(fast.events).toHaveLength(2);
    expect(isElidedChunk(fast.events[1] as SessionEvent)).toBe(false);
  });

  it('still checks the checksum over the bytes of the chunks it does not parse', async () => {
    const file = await writeLog('crc', mixedBatches());
    const bytes = await readFile(file);
    const at = bytes.indexOf('世界');
    bytes[at + 1] = (bytes[at + 1] as number) ^ 0x01;
    await writeFile(file, bytes);
    const fast = await scan(file, 'crc', { elide: true });
    expect(fast).toBeInstanceOf(CorruptLogError);
    expect((fast as CorruptLogError).message).toContain('checksum');
  });
});
