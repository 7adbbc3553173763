/**
 * A run line's stubs read from its bytes: every run the writer makes is sized without parsing,
 * exactly as its events' data measure; a run in any other form is refused (the scanner parses
 * it then), and a resume that elides chunks gives the same stubs either way.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { SessionEvent } from '../../../src/core/index.js';
import { encodeLines } from '../../../src/store/jsonl/chunk-run-line.js';
import { RunStubs } from '../../../src/store/jsonl/chunk-run-stubs.js';
import { batchText } from '../../../src/store/jsonl/format.js';
import { nodeFs } from '../../../src/store/jsonl/fs.js';
import { encodeSessionId } from '../../../src/store/jsonl/paths.js';
import { scanLog } from '../../../src/store/jsonl/scan.js';
import { assistantMessage, header, tempDir } from './helpers.js';

const T0 = 1_700_000_000_000;
const MAX_LINE = 1024 * 1024;

function chunk(seq: number, part: unknown, time = T0 + seq, turn = 1, step = 0): SessionEvent {
  return { seq, time, type: 'assistant/chunk', data: { turn, step, chunk: part } } as SessionEvent;
}

/** The lines the writer makes of `events`. */
function linesOf(events: readonly SessionEvent[]): string[] {
  const lines: string[] = [];
  encodeLines(
    events,
    MAX_LINE,
    (value) => JSON.stringify(value),
    (text) => lines.push(text),
  );
  return lines;
}

/** What RunStubs reads from `line` (the run of first event `seq`), or -1. */
function read(line: string, seq: number) {
  const stubs = new RunStubs();
  const bytes = Buffer.from(line);
  const count = stubs.read(bytes, 0, bytes.length, seq);
  if (count === -1) return -1;
  return {
    times: Array.from(stubs.times.subarray(0, count)),
    sizes: Array.from(stubs.sizes.subarray(0, count)),
  };
}

const dataBytes = (event: SessionEvent) => Buffer.byteLength(JSON.stringify(event.data));

describe('the stubs of a run line, read from its bytes', () => {
  const part = fc.oneof(
    fc.record({
      type: fc.constantFrom('text-delta', 'reasoning-delta'),
      id: fc.constantFrom('t0', 't1', 'ü"\\'),
      delta: fc.string({ unit: 'binary' }),
    }),
    fc.record({ type: fc.constantFrom('text-start', 'finish'), id: fc.constantFrom('t0', 't1') }),
    fc.dictionary(fc.string({ unit: 'binary' }), fc.jsonValue()),
  );

  it('size every run the writer makes as its events measure, without refusing one', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(part, fc.integer({ min: -70_000, max: 70_000 })), {
          minLength: 2,
          maxLength: 60,
        }),
        fc.integer({ min: -5, max: 100_000 }),
        fc.integer({ min: -5, max: 12 }),
        (parts, turn, step) => {
          let time = T0;
          const events = parts.map(([chunkPart, dt], seq) => {
            time += dt;
            return chunk(seq + 7, chunkPart, time, turn, step);
          });
          const [line, ...rest] = linesOf(events);
          expect(rest).toEqual([]);
          expect(read(line as string, 7)).toEqual({
            times: events.map((event) => event.time),
            sizes: events.map(dataBytes),
          });
        },
      ),
      { numRuns: 300 },
    );
  });

  it('measure a delta with a \\u escape as JSON.stringify would write it', () => {
    const line = linesOf([
      chunk(0, { type: 'text-delta', id: 't', delta: 'a' }),
      chunk(1, { type: 'text-delta', id: 't', delta: 'A/é' }),
    ])[0] as string;
    const foreign = line.replace('"A/é"', '"\\u0041\\u002f\\u00e9"');
    expect(foreign).not.toBe(line);
    expect(read(foreign, 0)).toEqual(read(line, 0));
  });

  it.each([
    ['spacing', (line: string) => line.replace('"dt":[', '"dt": [')],
    ['another key order', (line: string) => line.replace('"turn":1,"step":0', '"step":0,"turn":1')],
    ['an exponent in dt', (line: string) => line.replace('"dt":[1', '"dt":[1e0')],
    ['a -0 time step', (line: string) => line.replace('"dt":[1', '"dt":[-0')],
    ['an escaped slash', (line: string) => line.replace('"b"', '"\\/"')],
    ['another seq', (line: string) => line.replace('"seq":0', '"seq":1')],
    [
      'a missing delta part before a string',
      (line: string) => line.replace(/\{"type":"text-delta","id":"t","delta":"a"\}/, '"a"'),
    ],
    ['a dt one short', (line: string) => line.replace('"dt":[1,1]', '"dt":[1]')],
    ['a cut line', (line: string) => line.slice(0, -1)],
    ['text after the run', (line: string) => `${line} `],
  ])('refuse a run with %s, for the parser to decide', (_, change) => {
    const line = linesOf([
      chunk(0, { type: 'text-delta', id: 't', delta: 'a' }),
      chunk(1, { type: 'text-delta', id: 't', delta: 'b' }),
      chunk(2, { type: 'text-delta', id: 't', delta: 'c' }),
    ])[0] as string;
    expect(read(line, 0)).not.toBe(-1);
    const changed = change(line);
    expect(changed).not.toBe(line);
    expect(read(changed, 0)).toBe(-1);
  });
});

describe('a resume that elides finished chunks', () => {
  it('gives a run in a foreign form the stubs it gives the same run as the writer makes it', async () => {
    const events = [
      chunk(0, { type: 'text-start', id: 't' }),
      chunk(1, { type: 'text-delta', id: 't', delta: 'Hel' }),
      chunk(2, { type: 'text-delta', id: 't', delta: 'lo' }),
      assistantMessage(3, [0, 1, 2], 0),
    ];
    const lines = linesOf(events);
    const spaced = (lines[0] as string).replace('"dt":[', '"dt": [');
    const dir = await tempDir();
    const stubsOf = async (batch: readonly string[], count: number) => {
      const file = join(dir, `${encodeSessionId('s')}.jsonl`);
      await writeFile(file, `${JSON.stringify(header('s'))}\n${batchText(batch, count)}`);
      const handle = await nodeFs.open(file, 'r');
      try {
        const result = await scanLog(handle, {
          file,
          expectedId: 's',
          maxLineBytes: MAX_LINE,
          elideFinishedChunks: true,
        });
        return result.log.toEvents();
      } finally {
        await handle.close();
      }
    };
    const ours = await stubsOf(lines, 4);
    expect(ours.slice(0, 3).map((event) => event.data)).toEqual(
      events.slice(0, 3).map((event) => ({ elided: { bytes: dataBytes(event) } })),
    );
    expect(await stubsOf([spaced, ...lines.slice(1)], 4)).toEqual(ours);
    // Without the message nothing cites the run: its chunks come back whole, in either form.
    expect(await stubsOf(lines.slice(0, 1), 3)).toEqual(events.slice(0, 3));
    expect(await stubsOf([spaced], 3)).toEqual(events.slice(0, 3));
  });
});
