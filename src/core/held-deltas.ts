/**
 * Text deltas a loaded log holds as strings, building their `assistant/chunk` events only when
 * they are read.
 *
 * A full load of a streamed session is mostly chunks whose data is `{turn, step, chunk: {type,
 * id, delta}}` (200 of every 204 events of a turn in the benchmarks). Built as events, each is
 * three frozen objects, a million of them for a 5,000-turn session: building, checking, freezing
 * and collecting them was about half of such a load. The stores already read a message's deltas
 * as one array of strings (a run line, a run row), so a log can keep them (joined into one string
 * per run, see {@link HeldDeltaRun}) and the parts the deltas share, and make a chunk's event
 * when someone reads it. What a reader sees is unchanged: the same events, at the same seqs,
 * with the same times.
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

/**
 * A run as held: its first seq, its times copied, and its deltas joined into one string with
 * where each ends (`ends[i]`; delta `i` begins where delta `i - 1` ends). A resume holds a
 * million deltas: as a string each they were most of the objects its heap kept, each copied by
 * the young generation's collections on its way to the old one; joined, a run is one string and
 * one array of ends, and the strings the store parsed die young. A run with a delta that is not
 * a string (which admission refuses) keeps its deltas as given, for the session to report.
 */
export interface HeldDeltaRun {
  readonly seq: number;
  readonly turn: number;
  readonly step: number;
  readonly type: string;
  readonly id: string;
  /** How many chunks the run holds. */
  readonly count: number;
  readonly times: Float64Array;
  /** The deltas joined (empty when {@link HeldDeltaRun.given} holds them). */
  readonly text: string;
  readonly ends: Uint32Array;
  /** The deltas as given, when one of them is not a string. */
  readonly given: readonly unknown[] | undefined;
}

/** The delta of the `i`-th chunk of a held run. */
export function heldDelta(run: HeldDeltaRun, i: number): unknown {
  if (run.given !== undefined) return run.given[i];
  return run.text.slice(i === 0 ? 0 : (run.ends[i - 1] as number), run.ends[i] as number);
}

/** The deltas joined, with their ends; `undefined` when one is not a string. */
function join(deltas: readonly unknown[]): { text: string; ends: Uint32Array } | undefined {
  const ends = new Uint32Array(deltas.length);
  let end = 0;
  for (let i = 0; i < deltas.length; i++) {
    const delta = deltas[i];
    if (typeof delta !== 'string') return undefined;
    end += delta.length;
    ends[i] = end;
  }
  // No run's text nears 2^32 UTF-16 units: a V8 string is shorter than 2^29.
  return { text: deltas.join(''), ends };
}

const NO_ENDS = new Uint32Array(0);

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
    const joined = join(run.deltas);
    this.#runs.push({
      seq,
      turn,
      step,
      type,
      id,
      count,
      times,
      text: joined?.text ?? '',
      ends: joined?.ends ?? NO_ENDS,
      given: joined === undefined ? run.deltas.slice() : undefined,
    });
    this.#count += count;
  }

  /** Holds a run another log holds (a held run never changes). */
  keep(run: HeldDeltaRun): void {
    this.#runs.push(run);
    this.#count += run.count;
  }

  /** The frozen event of the held chunk at `seq`; only for a seq a held run covers. */
  event(seq: number): SessionEvent<'assistant/chunk'> {
    const run = this.#find(seq);
    const i = seq - run.seq;
    const chunk = Object.freeze({ type: run.type, id: run.id, delta: heldDelta(run, i) as string });
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
      const end = last.seq + last.count;
      if (end <= length) return;
      runs.pop();
      this.#count -= last.count;
      const kept = length - last.seq;
      if (kept > 0) {
        runs.push({
          ...last,
          count: kept,
          times: last.times.subarray(0, kept),
          text: last.given === undefined ? last.text.slice(0, last.ends[kept - 1]) : '',
          ends: last.given === undefined ? last.ends.subarray(0, kept) : NO_ENDS,
          given: last.given?.slice(0, kept),
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
  const { turn, step, type, id, count, times, ends, given } = run;
  if (
    !isSeqLike(turn) ||
    !isSeqLike(step) ||
    typeof type !== 'string' ||
    typeof id !== 'string' ||
    limits.maxDepth < DELTA_CHUNK_DEPTH ||
    limits.maxNodes < DELTA_CHUNK_NODES
  ) {
    return from < count ? from : -1;
  }
  const room = limits.maxChars - deltaChunkChars(type, id, '');
  for (let i = from; i < count; i++) {
    const time = times[i] as number;
    const delta = given?.[i];
    // A delta that is not a string has no length that fits: the general admission refuses it.
    const chars =
      given === undefined
        ? (ends[i] as number) - (i === 0 ? 0 : (ends[i - 1] as number))
        : typeof delta === 'string'
          ? delta.length
          : Number.POSITIVE_INFINITY;
    if (chars > room || !Number.isSafeInteger(time) || Object.is(time, -0)) {
      return i;
    }
  }
  return -1;
}
