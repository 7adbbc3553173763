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
 */
import { describeValue, InvalidArgumentError, SessionValidationError } from './errors.js';
import type { SessionEvent } from './events.js';
import type { JsonValue } from './json.js';
import type { ShapeIssue } from './messages.js';
import { Stamp } from './stamp.js';

/** The `data` of an elided chunk: `{elided: {bytes}}`, nothing else (a JSON object). */
export type ElidedChunkData = {
  readonly elided: {
    /** The UTF-8 length of the chunk's `data` as JSON text, as stored. */
    readonly bytes: number;
  };
};

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

const NONE = new Uint8Array(0);

/**
 * Follows the elided chunks of a seed while it is admitted, event by event, and checks at the
 * end that a later `assistant/message` cited every one of them. O(1) per event while no stub
 * waits for its message (the usual case: a message follows its chunks within a few hundred
 * events).
 */
export class ElidedChunkTracker {
  /** Elided chunks admitted so far. */
  count = 0;
  /** The seq of the first elided chunk, if any. */
  first: number | undefined;
  private waiting = NONE;
  private pending = 0;

  /** Records the stub at `seq` as waiting for its message. */
  noteElided(seq: number): void {
    if (seq >= this.waiting.length) {
      const grown = new Uint8Array(Math.max(1024, (seq + 1) * 2));
      grown.set(this.waiting);
      this.waiting = grown;
    }
    this.waiting[seq] = 1;
    this.pending++;
    this.count++;
    this.first ??= seq;
  }

  /** Marks the stubs an admitted `assistant/message` cites as finished. */
  noteEvent(event: SessionEvent): void {
    if (this.pending === 0 || event.type !== 'assistant/message') return;
    const sources = event.sourceEventSeqs;
    if (sources === undefined) return;
    const waiting = this.waiting;
    for (const seq of sources) {
      if (seq < waiting.length && waiting[seq] === 1) {
        waiting[seq] = 0;
        this.pending--;
      }
    }
  }

  /**
   * Throws for the first stub no later `assistant/message` cited. Runs after the whole seed was
   * admitted (a citation can only come later), so an error in a later event is reported first.
   */
  finish(): void {
    if (this.pending === 0) return;
    const seq = this.waiting.indexOf(1);
    throw new SessionValidationError(
      'ELIDED_CHUNK_NOT_FINISHED',
      `an elided assistant/chunk must be a finished chunk, cited by a later assistant/message of the same seed; none cites seq ${seq}, so load it with its body`,
      { index: seq, seq, eventType: 'assistant/chunk' },
    );
  }
}
