/**
 * A loaded log that holds most of its chunks without an object each.
 *
 * A long streamed session is mostly `assistant/chunk` events (200 of every 204 events of a turn
 * in the benchmarks). Loading each as an object means a million small objects for a 5,000-turn
 * session, and building, collecting and admitting them was about half of a load. An `ElidedLog`
 * keeps two kinds of chunk as holes in its event list:
 *
 * - an *elided* chunk (a finished chunk loaded without its body, see `elided.ts`): its time and
 *   data length in two typed arrays;
 * - a *held* delta (a text delta loaded in full, see `held-deltas.ts`): its text, joined with the
 *   other deltas of its stream part's run into one string.
 *
 * A session seeded from it keeps the holes and builds a chunk's event (a stub, or the full
 * chunk) only when someone reads that event (`session.event(seq)`, `session.events`). What a
 * reader sees is unchanged: the same events, at the same seqs, with the same times.
 *
 * Stores build one while they load and hand it over as `LoadedSession.log`; a session takes it
 * as its seed. Once handed over the log is sealed: its `LoadedSession` builds `events` from it,
 * and a session seeded from it reads its holes from it lazily, so it must not change.
 */
import { elidedChunk, elidedChunkData } from './elided.js';
import { describeValue, InvalidArgumentError } from './errors.js';
import type { SessionEvent } from './events.js';
import { type DeltaRun, type HeldDeltaRun, HeldDeltas } from './held-deltas.js';

const EMPTY = new Float64Array(0);
const NO_HOLES = new Uint8Array(0);
/** What `#holes` holds per seq. */
const PRESENT = 0;
const ELIDED = 1;
const HELD = 2;

/**
 * The events of a loaded log in seq order, where an elided chunk is only its time and length.
 *
 * @example
 * ```ts
 * import { ElidedLog } from 'palimpsest/backend';
 *
 * const log = new ElidedLog();
 * log.push({ seq: 0, time: 1, type: 'turn/start', data: { turn: 1 } });
 * log.pushElided(2, 57); // the chunk at seq 1: time 2, 57 bytes of data
 * console.log(log.at(1)); // { seq: 1, time: 2, type: 'assistant/chunk', data: { elided: { bytes: 57 } } }
 * ```
 */
export class ElidedLog {
  /** The events in `[0, #length)`; beyond, room allocated ahead (holes that are not events). */
  readonly #events: (SessionEvent | undefined)[];
  #length = 0;
  /** How many events the store said to expect: the typed arrays are allocated at that size. */
  readonly #capacity: number;
  #times = EMPTY;
  #bytes = EMPTY;
  /** A byte per seq: `ELIDED` where an elided chunk is, `HELD` where a held delta is. */
  #holes = NO_HOLES;
  #elided = 0;
  readonly #held = new HeldDeltas();
  #sealed = false;

  /**
   * @param capacity - how many events to expect (a store knows the recorded length), so that the
   *   log is allocated once instead of grown; a hint, never a limit.
   * @throws InvalidArgumentError when `capacity` is not a non-negative integer.
   */
  constructor(capacity = 0) {
    if (!Number.isSafeInteger(capacity) || capacity < 0) {
      throw new InvalidArgumentError(
        `ElidedLog expects its capacity as a non-negative integer, found ${describeValue(capacity)}`,
      );
    }
    this.#capacity = capacity;
    // Holes up front (one allocation); an event written at the end of the room extends it.
    this.#events = new Array<SessionEvent | undefined>(capacity);
  }

  /** The number of events, elided ones included. */
  get length(): number {
    return this.#length;
  }

  /** How many of the events are elided chunks. */
  get elidedCount(): number {
    return this.#elided;
  }

  /** How many of the events are holes: elided chunks and held deltas, built when read. */
  get holeCount(): number {
    return this.#elided + this.#held.count;
  }

  /** Appends an event (for the session to validate when it is seeded). */
  push(event: SessionEvent): void {
    this.#writable();
    this.#events[this.#length++] = event;
  }

  /**
   * Appends an elided chunk: the finished `assistant/chunk` at the next seq, with its time and
   * the UTF-8 length of its data as JSON text.
   *
   * @throws InvalidArgumentError when `time` is not integer epoch ms or `bytes` not a length.
   */
  pushElided(time: number, bytes: number): void {
    this.#writable();
    checkElided(time, bytes);
    const seq = this.#length;
    this.#grow(seq + 1);
    this.#record(seq, time, bytes);
  }

  /**
   * Appends a run of elided chunks at the next seqs: `times[i]` and `sizes[i]` for each `i` from
   * `from` on, checked as {@link ElidedLog.pushElided} checks one. One call per run instead of
   * one per chunk: a resume appends a million of them.
   *
   * @throws InvalidArgumentError when a time or a size is not one a chunk can have; the log is
   *   unchanged.
   */
  pushElidedRun(times: Float64Array, sizes: Float64Array, from = 0): void {
    this.#writable();
    const count = times.length - from;
    if (sizes.length !== times.length || !Number.isSafeInteger(from) || from < 0 || count < 0) {
      throw new InvalidArgumentError(
        `pushElidedRun expects as many times as sizes and a start within them, found ${times.length} times, ${sizes.length} sizes, from ${describeValue(from)}`,
      );
    }
    for (let i = from; i < times.length; i++) {
      const time = times[i] as number;
      const bytes = sizes[i] as number;
      // The common case inline; anything else gets the check (and the error) of one chunk.
      if (!Number.isSafeInteger(time) || !Number.isSafeInteger(bytes) || bytes <= 0 || time === 0) {
        checkElided(time, bytes);
      }
    }
    const seq = this.#length;
    this.#reserve(seq + count);
    this.#times.set(times.subarray(from), seq);
    this.#bytes.set(sizes.subarray(from), seq);
    this.#holes.fill(ELIDED, seq, seq + count);
    this.#grow(seq + count);
    this.#elided += count;
  }

  /**
   * Appends the chunks of a run of text deltas at the next seqs, held as strings: the chunk at
   * the `i`-th of them is `{seq, time: times[i], type: 'assistant/chunk', data: {turn, step,
   * chunk: {type, id, delta: deltas[i]}}}`, built when read. The run is copied. Its values are
   * checked by the session the log seeds, as that session admits every event, so a run that
   * breaks a rule fails the seed with the error its events would have had.
   *
   * @example
   * ```ts
   * import { ElidedLog } from 'palimpsest/backend';
   *
   * const log = new ElidedLog();
   * log.pushDeltaRun({ turn: 1, step: 1, type: 'text-delta', id: 't', deltas: ['Hel', 'lo'], times: [5, 6] });
   * console.log(log.at(1)?.data); // { turn: 1, step: 1, chunk: { type: 'text-delta', id: 't', delta: 'lo' } }
   * ```
   *
   * @throws InvalidArgumentError when the run has fewer times than deltas; the log is unchanged.
   */
  pushDeltaRun(run: DeltaRun): void {
    this.#writable();
    const count = run.deltas.length;
    if (run.times.length < count) {
      throw new InvalidArgumentError(
        `pushDeltaRun expects a time per delta, found ${run.times.length} times for ${count} deltas`,
      );
    }
    if (count === 0) return;
    const seq = this.#length;
    this.#held.add(seq, run);
    this.#reserveHoles(seq + count);
    this.#holes.fill(HELD, seq, seq + count);
    this.#grow(seq + count);
  }

  /** The runs of held deltas, in seq order (for the session the log seeds, which checks them). */
  heldRuns(): readonly HeldDeltaRun[] {
    return this.#held.runs;
  }

  /** Turns the event at `seq` into an elided chunk (a store that finds it finished late). */
  elide(seq: number, time: number, bytes: number): void {
    this.#writable();
    checkElided(time, bytes);
    if (this.#events[this.#index(seq)] === undefined) return;
    this.#events[seq] = undefined;
    this.#record(seq, time, bytes);
  }

  /** Puts a chunk's full event in place of its elided form (a store that read it back). */
  restore(seq: number, event: SessionEvent): void {
    this.#writable();
    if (this.#holes[this.#index(seq)] !== ELIDED) return;
    this.#events[seq] = event;
    this.#holes[seq] = PRESENT;
    this.#elided--;
  }

  /**
   * A new log: this log's events, holes kept as holes, followed by `events`. The copy is not
   * sealed, and this log is only read: a reader that adds events to a log it was handed (a repair
   * adds the closers of a crashed turn) adds them to a copy.
   */
  concat(events: readonly SessionEvent[]): ElidedLog {
    const length = this.#length;
    const copy = new ElidedLog(length + events.length);
    for (let seq = 0; seq < length; seq++) {
      const event = this.#events[seq];
      if (event !== undefined) copy.#events[seq] = event;
    }
    if (this.#elided > 0) {
      copy.#reserve(length);
      copy.#times.set(this.#times.subarray(0, length));
      copy.#bytes.set(this.#bytes.subarray(0, length));
    }
    if (this.holeCount > 0) {
      copy.#reserveHoles(length);
      copy.#holes.set(this.#holes.subarray(0, length));
    }
    copy.#elided = this.#elided;
    for (const run of this.#held.runs) copy.#held.keep(run);
    copy.#length = length;
    for (const event of events) copy.push(event);
    return copy;
  }

  /** Drops every event from seq `length` on. */
  truncate(length: number): void {
    this.#writable();
    const events = this.#events;
    if (!Number.isSafeInteger(length) || length < 0) {
      throw new InvalidArgumentError(
        `truncate expects a length (0..${this.#length}), found ${describeValue(length)}`,
      );
    }
    if (length >= this.#length) return;
    for (let seq = length; seq < this.#length; seq++) {
      if (this.#holes[seq] === ELIDED) this.#elided--;
    }
    this.#held.truncate(length);
    this.#holes.fill(PRESENT, length, this.#length);
    events.fill(undefined, length, this.#length);
    this.#length = length;
  }

  /** The event at `seq` as it was pushed, or `undefined` where a hole is. */
  peek(seq: number): SessionEvent | undefined {
    return seq < this.#length ? this.#events[seq] : undefined;
  }

  /** True when the event at `seq` is an elided chunk. */
  isElided(seq: number): boolean {
    return Number.isInteger(seq) && seq >= 0 && seq < this.#length
      ? this.#holes[seq] === ELIDED
      : false;
  }

  /**
   * The event at `seq`, an elided chunk as its stub and a held delta as its chunk (built anew,
   * frozen, on every call); `undefined` outside the log.
   */
  at(seq: number): SessionEvent | undefined {
    if (!Number.isInteger(seq) || seq < 0 || seq >= this.#length) return undefined;
    return this.#events[seq] ?? this.#hole(seq);
  }

  /**
   * The stub of the elided chunk at `seq`, frozen: its seq and time, and the shared marker of
   * its data length as its data. Only for a seq where {@link ElidedLog.isElided} is true.
   */
  stub(seq: number): SessionEvent<'assistant/chunk'> {
    return Object.freeze(elidedChunk(seq, this.#times[seq] as number, this.#bytes[seq] as number));
  }

  /** Every event in a new array, each elided chunk as a stub and each held delta as its chunk. */
  toEvents(): SessionEvent[] {
    const events = this.#events.slice(0, this.#length) as SessionEvent[];
    if (this.holeCount === 0) return events;
    for (let seq = 0; seq < events.length; seq++) {
      if (events[seq] === undefined) events[seq] = this.#hole(seq);
    }
    return events;
  }

  /** The event of the hole at `seq`: an elided chunk's stub or a held delta's chunk. */
  #hole(seq: number): SessionEvent {
    return this.#holes[seq] === HELD ? this.#held.event(seq) : this.stub(seq);
  }

  /**
   * Every event in a new array as it was pushed, `undefined` where a hole is (a session seeded
   * from this log keeps it so, and builds a hole's event only when it is read).
   */
  slots(): (SessionEvent | undefined)[] {
    return this.#events.slice(0, this.#length);
  }

  /** A new array of a byte per seq: 1 where an elided chunk is, 0 elsewhere. */
  elidedMap(): Uint8Array {
    const map = this.#holes.slice(0, this.#length);
    for (const run of this.#held.runs) map.fill(PRESENT, run.seq, run.seq + run.count);
    return map;
  }

  /**
   * From now on the log may not change. Called by the session it seeds and by the
   * `LoadedSession` that hands it over (whose `events` are built from it).
   */
  seal(): void {
    this.#sealed = true;
  }

  #writable(): void {
    if (this.#sealed) {
      throw new InvalidArgumentError(
        'this ElidedLog seeded a session, which reads its elided chunks from it; it can no longer change',
      );
    }
  }

  #index(seq: number): number {
    if (!Number.isInteger(seq) || seq < 0 || seq >= this.#length) {
      throw new InvalidArgumentError(
        `expected the seq of an event of the log (0..${this.#length - 1}), found ${describeValue(seq)}`,
      );
    }
    return seq;
  }

  /** Lengthens the log to `length` with holes (elided chunks recorded by the caller). */
  #grow(length: number): void {
    // Within the room allocated ahead the holes are there already; beyond, lengthening the array
    // makes them in one step, without a write each, and by half again, so that a log grown run
    // by run is reallocated a few dozen times rather than once a run.
    const room = this.#events.length;
    if (length > room) this.#events.length = Math.max(length, Math.floor(room * 1.5));
    this.#length = length;
  }

  #record(seq: number, time: number, bytes: number): void {
    this.#reserve(seq + 1);
    this.#times[seq] = time;
    this.#bytes[seq] = bytes;
    this.#holes[seq] = ELIDED;
    this.#elided++;
  }

  /** Room for `length` seqs in the map of holes and in the elided chunks' times and lengths. */
  #reserve(length: number): void {
    this.#reserveHoles(length);
    if (length <= this.#times.length) return;
    const size = Math.max(1024, length * 2, this.#capacity);
    const times = new Float64Array(size);
    times.set(this.#times);
    this.#times = times;
    const lengths = new Float64Array(size);
    lengths.set(this.#bytes);
    this.#bytes = lengths;
  }

  /** Room for `length` seqs in the map of holes alone (held deltas keep their times apart). */
  #reserveHoles(length: number): void {
    if (length <= this.#holes.length) return;
    const holes = new Uint8Array(Math.max(1024, length * 2, this.#capacity));
    holes.set(this.#holes);
    this.#holes = holes;
  }
}

/** Throws unless `time` is integer epoch ms and `bytes` a data length (as a stub needs). */
function checkElided(time: number, bytes: number): void {
  if (!Number.isSafeInteger(time) || Object.is(time, -0)) {
    throw new InvalidArgumentError(
      `expected the elided chunk's time as integer epoch ms, found ${describeValue(time)}`,
    );
  }
  // The common case without a call; anything else gets the marker's own check and error.
  if (!Number.isSafeInteger(bytes) || bytes < 0 || Object.is(bytes, -0)) elidedChunkData(bytes);
}
