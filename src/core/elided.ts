/**
 * Elided chunks: finished `assistant/chunk` events loaded without their bodies.
 *
 * A streamed session is mostly stream parts (every part of the model's stream is one
 * `assistant/chunk`), yet resuming it needs only the surface, the open turn and the seqs: the
 * parts of messages that finished long ago are provenance. A store can therefore load a
 * *finished* chunk — one that a later `assistant/message` of the log cites in its
 * `sourceEventSeqs` — as a stub: the chunk's own `seq`, `time` and `type` (and
 * `sourceEventSeqs`, if it had any) with the marker `{elided: {bytes}}` as its `data`, where
 * `bytes` is the UTF-8 length of the chunk's data as JSON text. The body is never parsed.
 *
 * A session accepts stubs only in a seed (a load), only for `assistant/chunk`, and only when a
 * later `assistant/message` of the same seed cites them; a live append of a stub is refused, a
 * fork of a prefix holding one is refused, and a recorder never writes one back (it writes only
 * new appends). The format is unchanged: a stub is what a reader was handed, never what a log
 * holds.
 *
 * The rules every store shares live here too, so a backend brings only its I/O: which chunks a
 * log's messages finish ({@link CitedSeqs}) and how a stub is built ({@link elidedChunk}).
 */
import { describeValue, InvalidArgumentError, SessionValidationError } from './errors.js';
import type { ElidedChunkData, SessionEvent } from './events.js';
import type { JsonValue } from './json.js';
import type { ShapeIssue } from './messages.js';
import { Stamp } from './stamp.js';

/** Marks the markers {@link elidedChunkData} made (valid and frozen by construction). */
class ElidedMarker extends Stamp {
  readonly #marker = true;

  static stamp(marker: object): void {
    new ElidedMarker(marker);
  }

  static has(value: object): boolean {
    return #marker in value;
  }
}

/**
 * Markers are shared per byte count: frozen and equal as JSON, so sharing is invisible, and a
 * session of a million stubs pays for a few hundred markers instead of two objects per stub.
 * The cache is bounded; rarer sizes get a marker of their own.
 */
const MAX_SHARED_MARKERS = 4096;
const markers = new Map<number, ElidedChunkData>();

/**
 * The frozen marker that stands for the data of an elided chunk of `bytes` bytes. Stores use it
 * to build stubs: `{seq, time, type: 'assistant/chunk', data: elidedChunkData(bytes)}`.
 *
 * @throws InvalidArgumentError when `bytes` is not a non-negative safe integer.
 */
export function elidedChunkData(bytes: number): ElidedChunkData {
  const shared = markers.get(bytes);
  if (shared !== undefined) return shared;
  if (!isByteCount(bytes)) {
    throw new InvalidArgumentError(
      `elidedChunkData expects the data's length as a non-negative integer, found ${describeValue(bytes)}`,
    );
  }
  const marker = { elided: Object.freeze({ bytes }) };
  ElidedMarker.stamp(marker);
  Object.freeze(marker);
  if (markers.size < MAX_SHARED_MARKERS) markers.set(bytes, marker);
  return marker;
}

/** True when `data` is an elided chunk's marker: exactly `{elided: {bytes}}`. */
export function isElidedChunkData(data: unknown): data is ElidedChunkData {
  if (typeof data !== 'object' || data === null) return false;
  return (
    ElidedMarker.has(data) || (isElisionCandidate(data) && elidedShapeIssue(data) === undefined)
  );
}

/** True for a stub: an `assistant/chunk` whose data is the elided marker. */
export function isElidedChunk(event: SessionEvent): boolean {
  return event.type === 'assistant/chunk' && isElidedChunkData(event.data);
}

/** True when `data` is a marker made by {@link elidedChunkData} (an O(1) test). */
export function isSharedElidedMarker(data: unknown): data is ElidedChunkData {
  return typeof data === 'object' && data !== null && ElidedMarker.has(data);
}

/**
 * True when chunk data claims to be elided: an object whose one own key is `elided`. Real chunk
 * data always has `turn`, `step` and `chunk`, so no valid chunk is ever mistaken for a stub.
 */
export function isElisionCandidate(data: object): boolean {
  if (ElidedMarker.has(data)) return true;
  if (Array.isArray(data) || !Object.hasOwn(data, 'elided')) return false;
  return Object.keys(data).length === 1;
}

/** What is wrong with a candidate's marker (see {@link isElisionCandidate}), if anything. */
export function elidedShapeIssue(data: object): ShapeIssue | undefined {
  if (ElidedMarker.has(data)) return undefined;
  const inner = (data as { readonly elided?: JsonValue }).elided;
  if (
    typeof inner !== 'object' ||
    inner === null ||
    Array.isArray(inner) ||
    Object.keys(inner).length !== 1 ||
    !isByteCount((inner as { readonly bytes?: JsonValue }).bytes)
  ) {
    return {
      path: 'data.elided',
      reason: `expected an elided chunk's marker {bytes: <non-negative integer>}, found ${describeValue(inner)}`,
    };
  }
  return undefined;
}

function isByteCount(value: unknown): value is number {
  return (
    typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 && !Object.is(value, -0)
  );
}

/**
 * The stub of the finished chunk at `seq`: its own seq and time, and the shared marker of
 * {@link elidedChunkData} as its data.
 */
export function elidedChunk(
  seq: number,
  time: number,
  bytes: number,
): SessionEvent<'assistant/chunk'> {
  return { seq, time, type: 'assistant/chunk', data: elidedChunkData(bytes) };
}

const NONE = new Uint8Array(0);

/**
 * The seqs the `assistant/message` events of a log cite: the one rule of which chunks are
 * finished, for validation and for every store that elides them. A byte per seq in a growable
 * typed array, as this runs on the resume path of every event.
 */
export class CitedSeqs {
  #cited = NONE;

  /**
   * Takes the citations of `event` if it is an `assistant/message`. The event may come from a
   * log not validated yet, so only integers naming an *earlier* event count: a session refuses
   * a message citing anything else, and a chunk it cannot finish must stay loadable in full.
   */
  cite(event: SessionEvent): void {
    if (event.type !== 'assistant/message') return;
    const sources: unknown = event.sourceEventSeqs;
    if (!Array.isArray(sources)) return;
    const seq = event.seq;
    for (const source of sources) {
      if (typeof source !== 'number' || !Number.isInteger(source) || source < 0 || source >= seq) {
        continue;
      }
      if (source >= this.#cited.length) {
        const grown = new Uint8Array(Math.max(4096, seq * 2));
        grown.set(this.#cited);
        this.#cited = grown;
      }
      this.#cited[source] = 1;
    }
  }

  /** True once a message taken by {@link CitedSeqs.cite} cited `seq`. */
  has(seq: number): boolean {
    return seq < this.#cited.length && this.#cited[seq] === 1;
  }
}

/**
 * Follows the elided chunks of a seed while it is admitted, event by event, and checks at the
 * end that a later `assistant/message` cited every one of them. O(1) per event until the first
 * stub, then O(citations) per message, and one scan of a byte per seq at the end.
 */
export class ElidedChunkTracker {
  /** Elided chunks admitted so far. */
  count: number;
  /** A byte per seq: 1 for a stub no message has cited yet, 2 once one has. */
  #stubs: Uint8Array;

  /**
   * @param stubs - the stubs known before admission (a loaded log's holes), a byte per seq set
   *   to 1, taken over by the tracker; `count` of them are set.
   */
  constructor(stubs: Uint8Array = NONE, count = 0) {
    this.#stubs = stubs;
    this.count = count;
  }

  /** Records the stub at `seq` as waiting for its message. */
  noteElided(seq: number): void {
    if (seq >= this.#stubs.length) {
      const grown = new Uint8Array(Math.max(1024, (seq + 1) * 2));
      grown.set(this.#stubs);
      this.#stubs = grown;
    }
    this.#stubs[seq] = 1;
    this.count++;
  }

  /**
   * Takes the citations of an admitted event (a message finishes the stubs it cites; an admitted
   * event's citations are integers below its seq). Marks each cited seq, stub or not, without a
   * test per citation: {@link ElidedChunkTracker.finish} looks for a stub left unmarked.
   */
  noteEvent(event: SessionEvent): void {
    if (this.count === 0) return;
    const sources = event.sourceEventSeqs;
    if (event.type !== 'assistant/message' || sources === undefined) return;
    const stubs = this.#stubs;
    // A citation beyond the array names no stub (the write is dropped).
    for (let i = 0; i < sources.length; i++) stubs[sources[i] as number] = 2;
  }

  /**
   * Throws for the first stub no later `assistant/message` cited. Runs after the whole seed was
   * admitted (a citation can only come later), so an error in a later event is reported first.
   */
  finish(): void {
    if (this.count === 0) return;
    const seq = this.#stubs.indexOf(1);
    if (seq === -1) return;
    throw new SessionValidationError(
      'ELIDED_CHUNK_NOT_FINISHED',
      `an elided assistant/chunk must be a finished chunk, cited by a later assistant/message of the same seed; none cites seq ${seq}, so load it with its body`,
      { index: seq, seq, eventType: 'assistant/chunk' },
    );
  }
}
