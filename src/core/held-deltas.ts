/**
 * Text deltas a loaded log holds as strings, building their `assistant/chunk` events only when
 * they are read.
 *
 * A full load of a streamed session is mostly chunks whose data is `{turn, step, chunk: {type,
 * id, delta}}` (200 of every 204 events of a turn in the benchmarks). Built as events, each is
 * three frozen objects, a million of them for a 5,000-turn session: building, checking, freezing
 * and collecting them was about half of such a load. The stores already read a message's deltas
 * as one array of strings (a run line, a run row), so a log can keep that array and the parts
 * the deltas share, and make a chunk's event when someone reads it. What a reader sees is
 * unchanged: the same events, at the same seqs, with the same times.
 */
import { DELTA_CHUNK_DEPTH, DELTA_CHUNK_NODES, deltaChunkChars } from './delta-chunk.js';
import { isSeqLike } from './event-shapes.js';
import type { SessionEvent } from './events.js';
import type { JsonLimits } from './json.js';

/**
 * A run of text deltas of one stream part: the chunk at the `i`-th seq of the run has the data
 * `{turn, step, chunk: {type, id, delta: deltas[i]}}` and the time `times[i]`.
 */
export interface DeltaRun {
  readonly turn: number;
  readonly step: number;
  /** The stream part's type (`text-delta`, `reasoning-delta`, `tool-input-delta`). */
  readonly type: string;
  /** The stream part's id. */
  readonly id: string;
  readonly deltas: readonly string[];
  /** Integer epoch ms, one per delta. */
  readonly times: ArrayLike<number>;
}

/** A run as held: its first seq, and copies of its deltas and times (the caller's may change). */
export interface HeldDeltaRun extends DeltaRun {
  readonly seq: number;
  readonly times: Float64Array;
}

/** The held runs of one log, in seq order. */
export class HeldDeltas {
  readonly #runs: HeldDeltaRun[] = [];
  #count = 0;

  /** How many chunks the runs hold. */
  get count(): number {
    return this.#count;
  }

  /** The runs, in seq order (for the session the log seeds, which checks them). */
  get runs(): readonly HeldDeltaRun[] {
    return this.#runs;
  }

  /** Holds `run` from seq `seq` on (after every run held so far). */
  add(seq: number, run: DeltaRun): void {
    const { turn, step, type, id } = run;
    const count = run.deltas.length;
    const times = new Float64Array(count);
    for (let i = 0; i < count; i++) times[i] = run.times[i] as number;
    this.#runs.push({
      seq,
      turn,
      step,
      type,
      id,
      deltas: run.deltas.slice(),
      times,
    });
    this.#count += count;
  }

  /** The frozen event of the held chunk at `seq`; only for a seq a held run covers. */
  event(seq: number): SessionEvent<'assistant/chunk'> {
    const run = this.#find(seq);
    const i = seq - run.seq;
    const chunk = Object.freeze({ type: run.type, id: run.id, delta: run.deltas[i] as string });
    const data = Object.freeze({ turn: run.turn, step: run.step, chunk });
    return Object.freeze({
      seq,
      time: run.times[i] as number,
      type: 'assistant/chunk',
      data,
    }) as SessionEvent<'assistant/chunk'>;
  }

  /** Drops the chunks from seq `length` on. */
  truncate(length: number): void {
    const runs = this.#runs;
    while (runs.length > 0) {
      const last = runs[runs.length - 1] as HeldDeltaRun;
      const end = last.seq + last.deltas.length;
      if (end <= length) return;
      runs.pop();
      this.#count -= last.deltas.length;
      const kept = length - last.seq;
      if (kept > 0) {
        runs.push({
          ...last,
          deltas: last.deltas.slice(0, kept),
          times: last.times.subarray(0, kept),
        });
        this.#count += kept;
      }
    }
  }

  /** The run that covers `seq` (a binary search: reads are rare next to the load). */
  #find(seq: number): HeldDeltaRun {
    const runs = this.#runs;
    let low = 0;
    let high = runs.length - 1;
    while (low < high) {
      const middle = (low + high + 1) >> 1;
      if ((runs[middle] as HeldDeltaRun).seq <= seq) low = middle;
      else high = middle - 1;
    }
    return runs[low] as HeldDeltaRun;
  }
}

/**
 * The index of the first chunk of `run` from `from` on that admission might not take as it is,
 * or `-1` when it would take them all: the delta shape's rules (`turn` and `step` seqs, string parts,
 * `maxChars`, `maxNodes`, `maxDepth`) and integer epoch ms. The session gives a chunk found here
 * to the general admission, which reports what is wrong with it.
 */
export function firstDoubtfulDelta(run: HeldDeltaRun, limits: JsonLimits, from = 0): number {
  const { turn, step, type, id, deltas, times } = run;
  if (
    !isSeqLike(turn) ||
    !isSeqLike(step) ||
    typeof type !== 'string' ||
    typeof id !== 'string' ||
    limits.maxDepth < DELTA_CHUNK_DEPTH ||
    limits.maxNodes < DELTA_CHUNK_NODES
  ) {
    return from < deltas.length ? from : -1;
  }
  const room = limits.maxChars - deltaChunkChars(type, id, '');
  for (let i = from; i < deltas.length; i++) {
    const delta: unknown = deltas[i];
    const time = times[i] as number;
    if (
      typeof delta !== 'string' ||
      delta.length > room ||
      !Number.isSafeInteger(time) ||
      Object.is(time, -0)
    ) {
      return i;
    }
  }
  return -1;
}
