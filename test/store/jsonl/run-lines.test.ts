/**
 * Chunk run lines (format 1): consecutive chunks of one step written as one line give back
 * every event exactly, to the batch scanner, the line-by-line reader, an eliding load, the stats
 * pass and a watcher; damage inside a run is named as damage anywhere else is; chunks a run could
 * not give back byte for byte stay lines of their own.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ElidedLog } from '../../../src/core/backend.js';
import {
  isElidedChunk,
  Session,
  type SessionEvent,
  SessionValidationError,
} from '../../../src/core/index.js';
import { CorruptLogError, LimitExceededError } from '../../../src/store/contract/errors.js';
import { encodeBatch } from '../../../src/store/jsonl/format.js';
import { nodeFs } from '../../../src/store/jsonl/fs.js';
import { scanLines } from '../../../src/store/jsonl/line-scan.js';
import { encodeSessionId } from '../../../src/store/jsonl/paths.js';
import { scanLog } from '../../../src/store/jsonl/scan.js';
import { readStats } from '../../../src/store/jsonl/stats.js';
import { jsonlLogSource } from '../../../src/store/jsonl/watch.js';
import { fuzzRuns } from '../../fuzz-runs.js';
import { assistantMessage, header, note, tempDir } from './helpers.js';

const MAX_LINE = 1024 * 1024;
const T0 = 1_700_000_000_000;

function chunk(seq: number, part: unknown, extra: Record<string, unknown> = {}): SessionEvent {
  return {
    seq,
    time: T0 + seq,
    type: 'assistant/chunk',
    data: { turn: 1, step: 0, chunk: part },
    ...extra,
  } as SessionEvent;
}

const delta = (seq: number, text: string, id = 't0'): SessionEvent =>
  chunk(seq, { type: 'text-delta', id, delta: text });

const message = (seq: number, cites: readonly number[]): SessionEvent =>
  assistantMessage(seq, cites, 0);

/** Writes the batches as the store's writer frames them; returns the file and its lines. */
async function writeBatches(
  id: string,
  batches: readonly (readonly SessionEvent[])[],
  maxLineBytes = MAX_LINE,
): Promise<{ file: string; lines: string[] }> {
  const dir = await tempDir();
  const file = join(dir, `${encodeSessionId(id)}.jsonl`);
  const parts: Buffer[] = [Buffer.from(`${JSON.stringify(header(id))}\n`)];
  let committed = 0;
  for (const events of batches) {
    committed += events.length;
    parts.push(encodeBatch(id, events, committed, maxLineBytes));
  }
  const bytes = Buffer.concat(parts);
  await writeFile(file, bytes);
  return { file, lines: bytes.toString('utf8').split('\n').slice(1, -1) };
}

async function withHandle<T>(
  file: string,
  use: (handle: Awaited<ReturnType<typeof nodeFs.open>>) => Promise<T>,
): Promise<T> {
  const handle = await nodeFs.open(file, 'r');
  try {
    return await use(handle);
  } finally {
    await handle.close();
  }
}

async function scan(
  file: string,
  id: string,
  options: { chunkBytes?: number; elide?: boolean } = {},
) {
  return withHandle(file, async (handle) => {
    const result = await scanLog(handle, {
      file,
      expectedId: id,
      maxLineBytes: MAX_LINE,
      ...(options.chunkBytes === undefined ? {} : { chunkBytes: options.chunkBytes }),
      elideFinishedChunks: options.elide === true,
    });
    return { ...result, events: result.log.toEvents() };
  });
}

/** The line-by-line reader alone, from the first line after the header. */
async function reference(file: string): Promise<{ events: SessionEvent[] } | Error> {
  const bytes = await readFile(file);
  const headerEnd = bytes.indexOf(0x0a) + 1;
  return withHandle(file, async (handle) => {
    const events: SessionEvent[] = [];
    try {
      await scanLines(
        handle,
        { file, maxLineBytes: MAX_LINE, offset: headerEnd, lineNumber: 2, committedEnd: headerEnd },
        events,
      );
      return { events };
    } catch (error) {
      return error as Error;
    }
  });
}

const json = (events: readonly SessionEvent[]): string[] => events.map((e) => JSON.stringify(e));

/** The events of the session `seed` seeds, or the error the seed fails with. */
function seedOutcome(seed: ElidedLog | unknown[]): string[] | string {
  try {
    return json(Session.create({ id: 'seeded', seed, seedMode: 'parsed' }).events);
  } catch (error) {
    if (!(error instanceof SessionValidationError)) throw error;
    return `${error.code}: ${error.message}`;
  }
}

describe('a chunk run line', () => {
  it('holds the consecutive chunks of one step, and every reader gives them back byte for byte', async () => {
    const events = [
      note(0),
      chunk(1, { type: 'text-start', id: 't0' }),
      delta(2, 'Hel'),
      delta(3, 'lo 🌍 "quoted" \u2028'),
      chunk(4, { type: 'text-end', id: 't0' }),
      chunk(5, { type: 'finish', finishReason: 'stop' }),
      message(6, [1, 2, 3, 4, 5]),
    ];
    const { file, lines } = await writeBatches('run', [events]);
    expect(lines).toHaveLength(4); // the note, one run, the message, the commit marker
    expect(JSON.parse(lines[1] as string)).toEqual({
      run: {
        seq: 1,
        time: T0 + 1,
        turn: 1,
        step: 0,
        dt: [1, 1, 1, 1],
        chunks: [
          { type: 'text-start', id: 't0' },
          { type: 'text-delta', id: 't0', delta: 'Hel' },
          'lo 🌍 "quoted" \u2028',
          { type: 'text-end', id: 't0' },
          { type: 'finish', finishReason: 'stop' },
        ],
      },
    });
    for (const chunkBytes of [16, 100, MAX_LINE]) {
      expect(json((await scan(file, 'run', { chunkBytes })).events)).toEqual(json(events));
    }
    // A full load holds the run's delta as a string, with no event until it is read.
    const { log } = await scan(file, 'run');
    expect(log.holeCount).toBe(1);
    expect(log.peek(3)).toBeUndefined();
    const byLine = await reference(file);
    expect(byLine instanceof Error ? byLine : json(byLine.events)).toEqual(json(events));
    const stats = await withHandle(file, (handle) => readStats(handle, file, 'run', MAX_LINE));
    expect(stats).toMatchObject({ eventCount: events.length, lastEventTime: T0 + 6 });
  });

  it('stays lines where a run could not give the chunks back exactly', async () => {
    const events = [
      delta(0, 'a'),
      chunk(1, { type: 'text-delta', id: 't0', delta: 'b' }, { sourceEventSeqs: [0] }),
      delta(2, 'c'),
      {
        ...delta(3, 'd'),
        data: { turn: 1, step: 0, attempt: 2, chunk: { type: 'x' } },
      } as SessionEvent,
      delta(4, 'e'),
      { ...delta(5, 'f'), data: { turn: 1, step: 1, chunk: { type: 'x' } } } as SessionEvent,
      {
        time: T0 + 6,
        seq: 6,
        type: 'assistant/chunk',
        data: { turn: 1, step: 0, chunk: {} },
      } as SessionEvent,
      { ...delta(7, 'g'), data: { turn: 1.5, step: 0, chunk: {} } } as SessionEvent,
      { ...delta(8, 'h'), data: { turn: 1, step: 0, chunk: {} } } as SessionEvent,
    ];
    const { file, lines } = await writeBatches('lines', [events]);
    expect(lines.some((text) => text.startsWith('{"run":'))).toBe(false);
    expect(json((await scan(file, 'lines')).events)).toEqual(json(events));
  });

  it('writes a delta as a string only after a delta part of the same type and id', async () => {
    const events = [
      delta(0, 'a'),
      delta(1, 'b'),
      delta(2, 'c', 't1'),
      chunk(3, { type: 'reasoning-delta', id: 't1', delta: 'r' }),
      chunk(4, { id: 't1', type: 'reasoning-delta', delta: 's' }),
      chunk(5, { type: 'reasoning-delta', id: 't1', delta: 't' }),
      chunk(6, { type: 'reasoning-delta', id: 't1', delta: 'u' }),
    ];
    const { file, lines } = await writeBatches('deltas', [events]);
    expect((JSON.parse(lines[0] as string) as { run: { chunks: unknown[] } }).run.chunks).toEqual([
      { type: 'text-delta', id: 't0', delta: 'a' },
      'b',
      { type: 'text-delta', id: 't1', delta: 'c' },
      { type: 'reasoning-delta', id: 't1', delta: 'r' },
      { id: 't1', type: 'reasoning-delta', delta: 's' },
      { type: 'reasoning-delta', id: 't1', delta: 't' },
      'u',
    ]);
    expect(json((await scan(file, 'deltas')).events)).toEqual(json(events));
  });

  it('keeps time steps of any sign, and splits a run that would pass the line limit', async () => {
    const times = [5, 5, 3, 90_000, 2];
    let time = T0;
    const events = times.map((step, seq) => {
      time += step;
      return { ...delta(seq, 'x'.repeat(40)), time };
    });
    const { file } = await writeBatches('times', [events]);
    expect(json((await scan(file, 'times')).events)).toEqual(json(events));

    const long = Array.from({ length: 40 }, (_, seq) => delta(seq, 'y'.repeat(100)));
    const limit = 2048;
    const split = await writeBatches('split', [long], limit);
    const runs = split.lines.filter((text) => text.startsWith('{"run":'));
    expect(runs.length).toBeGreaterThan(1);
    for (const text of split.lines) expect(Buffer.byteLength(text)).toBeLessThanOrEqual(limit);
    expect(json((await scan(split.file, 'split')).events)).toEqual(json(long));
  });

  it('still refuses a chunk too long for any line', () => {
    const events = [delta(0, 'z'), delta(1, 'z'.repeat(5000))];
    expect(() => encodeBatch('big', events, 2, 1024)).toThrow(LimitExceededError);
  });
});

describe('reading run lines', () => {
  it('elides the chunks of a run a later message cites and restores the others from the run', async () => {
    const events = [
      delta(0, 'kept'),
      delta(1, 'kept too'),
      message(2, [0, 1]),
      delta(3, 'lost'),
      delta(4, 'lost 🌍'),
    ];
    const { file } = await writeBatches('elide', [events.slice(0, 3), events.slice(3)]);
    const full = (await scan(file, 'elide')).events;
    for (const chunkBytes of [24, MAX_LINE]) {
      const fast = (await scan(file, 'elide', { chunkBytes, elide: true })).events;
      expect(fast.map(isElidedChunk)).toEqual([true, true, false, false, false]);
      for (const seq of [0, 1]) {
        expect(fast[seq]).toEqual({
          seq,
          time: T0 + seq,
          type: 'assistant/chunk',
          data: { elided: { bytes: Buffer.byteLength(JSON.stringify(full[seq]?.data)) } },
        });
      }
      expect(json(fast.slice(2))).toEqual(json(events.slice(2)));
    }
  });

  it('names damage inside a run exactly as the line reader does, for a flipped byte or a cut anywhere', async () => {
    const events = [
      note(0),
      chunk(1, { type: 'text-start', id: 't0' }),
      delta(2, 'héllo'),
      delta(3, '世界'),
      message(4, [1, 2, 3]),
    ];
    const { file } = await writeBatches('flip', [events.slice(0, 2), events.slice(2)]);
    const original = await readFile(file);
    const headerEnd = original.indexOf(0x0a) + 1;
    const outcome = (result: unknown): unknown =>
      result instanceof Error
        ? { error: result.constructor.name, message: result.message }
        : json((result as { events: SessionEvent[] }).events);
    for (let at = headerEnd; at < original.length; at += 3) {
      const flipped = Buffer.from(original);
      flipped[at] = (flipped[at] as number) ^ 0x20;
      for (const bytes of [flipped, original.subarray(0, at)]) {
        await writeFile(file, bytes);
        const fast = await scan(file, 'flip', { chunkBytes: 32 }).catch((error: unknown) => error);
        const slow = await reference(file);
        expect(outcome(fast), `at ${at}`).toEqual(outcome(slow));
      }
    }
  });

  it('names a run that parses and matches its checksum but is malformed', async () => {
    const cases: [string, string][] = [
      [
        '{"run":{"seq":0,"time":1,"turn":1,"step":0,"dt":[1],"chunks":["a","b"]}}',
        'chunk 0 is a delta with no delta part before it',
      ],
      [
        '{"run":{"seq":0,"time":1,"turn":1,"step":0,"dt":[],"chunks":[{},{}]}}',
        'dt does not hold one step per further chunk',
      ],
      [
        '{"run":{"seq":3,"time":1,"turn":1,"step":0,"dt":[1],"chunks":[{},{}]}}',
        'a run from seq 3 where seq 0 was expected',
      ],
      [
        '{"run":{"seq":0,"time":1,"turn":1,"step":0,"dt":[1],"chunks":[{}]}}',
        'fewer than 2 chunks',
      ],
      [
        '{"run":{"seq":0,"time":1,"turn":"1","step":0,"dt":[1],"chunks":[{},{}]}}',
        'turn or step is not an integer',
      ],
      [
        '{"run":{"seq":0,"time":1,"turn":1,"step":0,"dt":[1],"chunks":[{},7]}}',
        'chunk 1 is neither a part nor a delta',
      ],
    ];
    for (const [run, reason] of cases) {
      const dir = await tempDir();
      const file = join(dir, `${encodeSessionId('bad')}.jsonl`);
      const count = 2;
      const { batchText } = await import('../../../src/store/jsonl/format.js');
      // A committed batch of one line holding two events, then a further batch.
      const body = batchText([run], count).replace(/^\{"commit":\d+/m, `{"commit":${count}`);
      await writeFile(
        file,
        `${JSON.stringify(header('bad'))}\n${body}${batchText([JSON.stringify(note(2))], 3)}`,
      );
      for (const read of [
        () => scan(file, 'bad'),
        async () => {
          const r = await reference(file);
          if (r instanceof Error) throw r;
          return r;
        },
      ]) {
        const error = await read().catch((caught: unknown) => caught);
        expect(error, run).toBeInstanceOf(CorruptLogError);
        expect((error as CorruptLogError).message, run).toContain(reason);
        expect((error as CorruptLogError).message).toContain('line 2');
      }
    }
  });

  it('reach a watcher as the events they hold, from any seq', async () => {
    const events = [note(0), delta(1, 'a'), delta(2, 'b'), delta(3, 'c'), message(4, [1, 2, 3])];
    const { file } = await writeBatches('watch', [events]);
    const source = await jsonlLogSource(
      await nodeFs.open(file, 'r'),
      file,
      'watch',
      MAX_LINE,
      async () => undefined,
    );
    try {
      expect(json(await source.read(2))).toEqual(json(events.slice(2)));
    } finally {
      await source.close();
    }
  });
});

describe('any batch of chunks and other events', () => {
  const part = fc.oneof(
    fc.record({
      type: fc.constantFrom('text-delta', 'reasoning-delta'),
      id: fc.constantFrom('t0', 't1'),
      delta: fc.string({ unit: 'binary' }),
    }),
    fc.record({ type: fc.constantFrom('text-start', 'finish'), id: fc.constantFrom('t0', 't1') }),
    fc.jsonValue(),
  );
  const item = fc.record({
    kind: fc.constantFrom('chunk', 'chunk', 'chunk', 'note', 'cited-chunk'),
    part,
    step: fc.constantFrom(0, 0, 0, 1),
    dt: fc.integer({ min: -3, max: 70_000 }),
  });

  it('seeds, from a full load, the session its streamed events seed', async () => {
    // Streams of deltas switching part and id, some cited, some left open: every run a writer
    // makes of them, held as strings by the load.
    const streamed = fc.record({
      type: fc.constantFrom('text-delta', 'reasoning-delta'),
      id: fc.constantFrom('t0', 't1'),
      delta: fc.string({ unit: 'binary', maxLength: 8 }),
      dt: fc.integer({ min: -3, max: 70_000 }),
    });
    await fc.assert(
      fc.asyncProperty(
        fc.array(streamed, { minLength: 1, maxLength: 40 }),
        fc.boolean(),
        fc.array(fc.nat(40), { maxLength: 3 }),
        async (parts, finished, cuts) => {
          let time = T0;
          const events: SessionEvent[] = [note(0)];
          for (const { dt, ...part } of parts) {
            time += dt;
            events.push({ ...chunk(events.length, part), time });
          }
          if (finished) {
            events.push(
              message(
                events.length,
                events.slice(1).map((event) => event.seq),
              ),
            );
          }
          const bounds = [
            ...new Set([0, ...cuts.filter((cut) => cut < events.length), events.length]),
          ];
          bounds.sort((a, b) => a - b);
          const batches = bounds.slice(1).map((end, i) => events.slice(bounds[i], end));
          const { file } = await writeBatches(
            'held',
            batches.filter((batch) => batch.length > 0),
          );
          const { log } = await scan(file, 'held', { chunkBytes: 64 });
          const outcome = seedOutcome(log);
          expect(outcome).toEqual(seedOutcome(json(events).map((line) => JSON.parse(line))));
          expect(outcome).toEqual(json(events));
        },
      ),
    );
  });

  it('is read back exactly by every reader, whole and elided, however it is batched', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(item, { maxLength: 40 }),
        fc.array(fc.nat(40), { maxLength: 4 }),
        async (items, cuts) => {
          let time = T0;
          const events: SessionEvent[] = items.map((entry, seq) => {
            time += entry.dt;
            if (entry.kind === 'note') return { ...note(seq), time };
            const base = {
              seq,
              time,
              type: 'assistant/chunk',
              data: { turn: 1, step: entry.step, chunk: entry.part },
            };
            return (
              entry.kind === 'cited-chunk' && seq > 0
                ? { ...base, sourceEventSeqs: [seq - 1] }
                : base
            ) as SessionEvent;
          });
          events.push(
            message(
              events.length,
              events.filter((e) => e.type === 'assistant/chunk').map((e) => e.seq),
            ),
          );
          const bounds = [
            ...new Set([0, ...cuts.filter((cut) => cut < events.length), events.length]),
          ].sort((a, b) => a - b);
          const batches = bounds
            .slice(1)
            .map((end, i) => events.slice(bounds[i], end))
            .filter((batch) => batch.length > 0);
          const { file } = await writeBatches('prop', batches);
          const expected = json(events);
          const full = await scan(file, 'prop', { chunkBytes: 64 });
          expect(json(full.events)).toEqual(expected);
          // The deltas a full load holds as strings seed the session (or fail the seed) that
          // these very events do.
          const reparsed = expected.map((line) => JSON.parse(line) as unknown);
          expect(seedOutcome(full.log)).toEqual(seedOutcome(reparsed));
          const byLine = await reference(file);
          expect(byLine instanceof Error ? byLine : json(byLine.events)).toEqual(expected);
          const fast = (await scan(file, 'prop', { elide: true })).events;
          fast.forEach((event, seq) => {
            const original = events[seq] as SessionEvent;
            if (isElidedChunk(event)) {
              expect(event.time).toBe(original.time);
              expect(event.data).toEqual({
                elided: { bytes: Buffer.byteLength(JSON.stringify(original.data)) },
              });
            } else expect(JSON.stringify(event)).toBe(JSON.stringify(original));
          });
          const stats = await withHandle(file, (handle) =>
            readStats(handle, file, 'prop', MAX_LINE),
          );
          expect(stats).toMatchObject({
            eventCount: events.length,
            lastEventTime: events.at(-1)?.time,
          });
        },
      ),
      { numRuns: fuzzRuns(150) },
    );
  });
});
