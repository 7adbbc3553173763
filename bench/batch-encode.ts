/**
 * A narrow benchmark for what a group commit's batch costs to encode per turn: the same turns of
 * the side-by-side benchmark's conversation (204 admitted events each) encoded by the JSONL
 * store's `encodeBatch` in batches of 1, 25, 100 and 400 turns (a per-turn flush makes batches of
 * one turn; the recorder's 50 ms window makes batches of as many turns as run in 50 ms, a few
 * hundred on a quiet machine). Sizes are interleaved round by round, and each figure is the CPU
 * time of the process per turn (so a busy machine's waits are not counted), median (min–max)
 * over the rounds. Prints one line per batch size; writes no docs.
 *
 *   node --expose-gc --import tsx bench/batch-encode.ts [--smoke]
 */
import { DEFAULT_MAX_LINE_BYTES, encodeBatch } from '../src/store/jsonl/format.js';
import { collectGarbage, consume, median } from './measure.js';
import { formatDuration } from './report.js';
import { turnEvents } from './store-workload.js';

const smoke = process.argv.includes('--smoke');
const TURNS = smoke ? 8 : 400;
const ROUNDS = smoke ? 1 : 7;
const BATCH_TURNS = smoke ? [1, 4] : [1, 25, 100, 400];

const turns = turnEvents(TURNS);

/** CPU ns per turn of encoding every turn in batches of `size` turns. */
function encodeAll(size: number): number {
  collectGarbage();
  const start = process.cpuUsage();
  for (let first = 0; first < turns.length; first += size) {
    const events = turns.slice(first, first + size).flat();
    const last = events[events.length - 1];
    consume(encodeBatch('bench', events, (last?.seq ?? 0) + 1, DEFAULT_MAX_LINE_BYTES).length);
  }
  const used = process.cpuUsage(start);
  return ((used.user + used.system) * 1000) / turns.length;
}

const samples = new Map<number, number[]>(BATCH_TURNS.map((size) => [size, []]));
for (let round = 0; round < ROUNDS; round++) {
  const order = round % 2 === 0 ? BATCH_TURNS : [...BATCH_TURNS].reverse();
  for (const size of order) samples.get(size)?.push(encodeAll(size));
}
for (const [size, values] of samples) {
  const figure = `${formatDuration(median(values))} (${formatDuration(Math.min(...values))}–${formatDuration(Math.max(...values))})`;
  process.stdout.write(`batches of ${size} turn${size === 1 ? '' : 's'}: ${figure} CPU per turn\n`);
}
