/**
 * A decision aid, not a benchmark of shipped code: the bytes and the encode and decode cost per
 * turn of candidate JSONL encodings of stream chunks, on bench:store's workload (turns of 200
 * chunks, a message, a tool call and result; one batch per turn, as a flush per turn writes).
 *
 *   node --import tsx bench/chunk-encodings.ts [turns]
 *
 * Candidates: `lines` (format 0: one line per event); `format-1` (what the JSONL store writes
 * since format 1: `src/store/jsonl/chunk-run-line.ts`, a run's later deltas as bare strings); `run-json` (a turn's chunks of one step as one
 * line: first seq, time deltas, the chunk parts verbatim); `run-columns` (the same, a run of text
 * deltas of one id kept as the id and an array of deltas); `run-deflate-1`/`-6` (run-json, the
 * parts' JSON deflated (raw, zlib level 1 or 6) and base64'd, with each chunk's data length kept
 * as a column so an eliding load needs no inflate); `batch-deflate-1` (the whole batch's lines
 * deflated). The workload's deltas are drawn from a seeded word pool, which may deflate better
 * than real model text. pi's bytes per turn on the same conversation (docs/benchmarks.md, 4,900
 * turns, 55.7 MB) are the reference. Writes no docs.
 */
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import type { AssistantChunkData, SessionEvent } from '../src/core/index.js';
import { encodeLines, runEvents, runOf } from '../src/store/jsonl/chunk-run-line.js';
import { DEFAULT_MAX_LINE_BYTES } from '../src/store/jsonl/format.js';
import { median } from './measure.js';
import { turnEvents } from './store-workload.js';

const PI_BYTES_PER_TURN = 55.7e6 / 4_900;

interface Encoding {
  readonly name: string;
  encode(events: readonly SessionEvent[]): string;
  decode(text: string): unknown[];
}

const isChunk = (event: SessionEvent): boolean => event.type === 'assistant/chunk';
const lines = (events: readonly SessionEvent[]): string =>
  events.map((event) => `${JSON.stringify(event)}\n`).join('');

/** The parts as columns when every one is a text delta of one id, else `undefined`. */
function columns(parts: readonly unknown[]): { id: unknown; deltas: string[] } | undefined {
  const first = parts[0] as { type?: unknown; id?: unknown };
  const deltas: string[] = [];
  for (const part of parts as { type?: unknown; id?: unknown; delta?: unknown }[]) {
    if (part.type !== 'text-delta' || part.id !== first.id || typeof part.delta !== 'string')
      return undefined;
    if (Object.keys(part).length !== 3) return undefined;
    deltas.push(part.delta);
  }
  return { id: first.id, deltas };
}

function columnarLine(chunks: readonly SessionEvent[]): string {
  const first = chunks[0] as SessionEvent;
  const data = first.data as unknown as AssistantChunkData;
  const parts = chunks.map((event) => (event.data as unknown as AssistantChunkData).chunk);
  const times = chunks.map((event) => event.time - first.time);
  const text = columns(parts);
  const body = text === undefined ? { parts } : { textDeltas: text };
  return `${JSON.stringify({ run: { first: first.seq, time: first.time, turn: data.turn, step: data.step, times, ...body } })}\n`;
}

function runLine(chunks: readonly SessionEvent[], deflateLevel?: number | 'columns'): string {
  if (deflateLevel === 'columns') return columnarLine(chunks);
  const first = chunks[0] as SessionEvent;
  const data = first.data as unknown as AssistantChunkData;
  const parts = chunks.map((event) => (event.data as unknown as AssistantChunkData).chunk);
  const times = chunks.map((event) => event.time - first.time);
  if (deflateLevel === undefined) {
    return `${JSON.stringify({ run: { first: first.seq, time: first.time, turn: data.turn, step: data.step, times, parts } })}\n`;
  }
  const sizes = chunks.map((event) => Buffer.byteLength(JSON.stringify(event.data)));
  const packed = deflateRawSync(JSON.stringify(parts), { level: deflateLevel }).toString('base64');
  return `${JSON.stringify({ run: { first: first.seq, time: first.time, turn: data.turn, step: data.step, times, sizes, parts: packed } })}\n`;
}

/** A batch with its consecutive chunks as run lines and other events as lines. */
function withRuns(events: readonly SessionEvent[], deflateLevel?: number | 'columns'): string {
  let out = '';
  let run: SessionEvent[] = [];
  const close = (): void => {
    if (run.length > 0) out += runLine(run, deflateLevel);
    run = [];
  };
  for (const event of events) {
    if (isChunk(event)) run.push(event);
    else {
      close();
      out += lines([event]);
    }
  }
  close();
  return out;
}

function decodeRuns(text: string, deflated: boolean): unknown[] {
  const out: unknown[] = [];
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const value = JSON.parse(line) as {
      run?: { parts: unknown; textDeltas?: { id: unknown; deltas: string[] } };
    };
    if (value.run === undefined) out.push(value);
    else if (value.run.textDeltas !== undefined) {
      const { id, deltas } = value.run.textDeltas;
      for (const delta of deltas) out.push({ type: 'text-delta', id, delta });
    } else {
      const parts = deflated
        ? JSON.parse(inflateRawSync(Buffer.from(value.run.parts as string, 'base64')).toString())
        : value.run.parts;
      for (const part of parts as unknown[]) out.push(part);
    }
  }
  return out;
}

/** The lines the JSONL store writes for a batch (format 1), without the commit marker. */
function format1(events: readonly SessionEvent[]): string {
  let out = '';
  encodeLines(
    events,
    DEFAULT_MAX_LINE_BYTES,
    (value) => JSON.stringify(value),
    (text) => {
      out += `${text}\n`;
    },
  );
  return out;
}

/** What the JSONL store's readers do with format-1 lines: each parsed, each run expanded. */
function decodeFormat1(text: string): unknown[] {
  const out: unknown[] = [];
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const value = JSON.parse(line) as { seq?: number; run?: { seq: number } };
    const run = value.run === undefined ? undefined : runOf(value, value.run.seq);
    if (run === undefined || typeof run === 'string') out.push(value);
    else out.push(...(runEvents(run) as unknown[]));
  }
  return out;
}

const ENCODINGS: Encoding[] = [
  { name: 'lines', encode: lines, decode: (text) => decodeRuns(text, false) },
  { name: 'format-1', encode: format1, decode: decodeFormat1 },
  { name: 'run-json', encode: (e) => withRuns(e), decode: (text) => decodeRuns(text, false) },
  {
    name: 'run-columns',
    encode: (e) => withRuns(e, 'columns'),
    decode: (t) => decodeRuns(t, false),
  },
  { name: 'run-deflate-1', encode: (e) => withRuns(e, 1), decode: (t) => decodeRuns(t, true) },
  { name: 'run-deflate-6', encode: (e) => withRuns(e, 6), decode: (t) => decodeRuns(t, true) },
  {
    name: 'batch-deflate-1',
    encode: (e) => `${deflateRawSync(lines(e), { level: 1 }).toString('base64')}\n`,
    decode: (text) =>
      inflateRawSync(Buffer.from(text.trim(), 'base64'))
        .toString()
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as unknown),
  },
];

const turns = turnEvents(Number(process.argv[2] ?? 500));
process.stdout.write(
  `${turns.length} turns; pi: ${(PI_BYTES_PER_TURN / 1024).toFixed(1)} KiB per turn\n`,
);
for (const encoding of ENCODINGS) {
  let bytes = 0;
  const encodeNs: number[] = [];
  const decodeNs: number[] = [];
  for (const events of turns) {
    const start = process.hrtime.bigint();
    const text = encoding.encode(events);
    const encoded = process.hrtime.bigint();
    encoding.decode(text);
    decodeNs.push(Number(process.hrtime.bigint() - encoded));
    encodeNs.push(Number(encoded - start));
    bytes += Buffer.byteLength(text);
  }
  const perTurn = bytes / turns.length;
  process.stdout.write(
    `${encoding.name.padEnd(16)} ${(perTurn / 1024).toFixed(1).padStart(6)} KiB/turn  ${(perTurn / PI_BYTES_PER_TURN).toFixed(2)}× pi  encode ${(median(encodeNs) / 1e3).toFixed(0).padStart(4)} µs  decode ${(median(decodeNs) / 1e3).toFixed(0).padStart(4)} µs\n`,
  );
}
