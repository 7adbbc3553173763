/**
 * A log built event by event under the rules of a seed: for writers that make whole events (seq,
 * time, type, data and surface intent) rather than appending through a live session, such as an
 * importer. Every event is checked as it is added, exactly as a session's seed checks it (the
 * surface rules included), so a refused event names itself when it is made; the log it gives is
 * marked admitted, so a session seeded with it applies only the surface rules again.
 */
import { type AdmissionMode, markAdmittedLog, seedAdmission } from './admission.js';
import { isElisionCandidate } from './elided.js';
import { SessionValidationError } from './errors.js';
import type { SessionEvent } from './events.js';
import { DEFAULT_JSON_LIMITS, type JsonLimits } from './json.js';
import { type SessionSurface, SurfaceManager } from './surface.js';

/** An event as a {@link SeededLog} takes it: the envelope a store writes, keys in this order. */
export interface SeedRecord {
  readonly seq: number;
  readonly time: number;
  readonly type: string;
  readonly data: unknown;
  readonly surfaceOp?: unknown;
  readonly sourceEventSeqs?: readonly number[];
}

/**
 * A log whose events are admitted one at a time as a seed's are. `adopt` validates and freezes
 * each event's objects in place; `parsed` does the same for objects `JSON.parse` built, or plain
 * object literals around such values, skipping the checks those pass by construction (symbol and
 * non-enumerable keys, accessors: see `SessionOptions.seedMode`). A `parsed` log lists keys with
 * `for...in`, after checking once, when it is made, that the prototypes have no enumerable key:
 * fill it while no other code runs (within one synchronous read).
 */
export class SeededLog {
  readonly #log: SessionEvent[] = [];
  readonly #manager = new SurfaceManager(this.#log);
  readonly #admit: (raw: unknown, index: number) => SessionEvent;
  #snapshot: readonly SessionEvent[] | undefined;

  constructor(mode: Extract<AdmissionMode, 'adopt' | 'parsed'>, limits?: Partial<JsonLimits>) {
    this.#admit = seedAdmission(mode, Object.freeze({ ...DEFAULT_JSON_LIMITS, ...limits }));
  }

  /** The seq the next event must carry (the number of events). */
  get seq(): number {
    return this.#log.length;
  }

  /** The surface of the events so far, read-only. */
  get surface(): SessionSurface {
    return this.#manager;
  }

  /** The events so far, frozen and marked admitted; the same array until the next add. */
  get events(): readonly SessionEvent[] {
    if (this.#snapshot === undefined) this.#snapshot = markAdmittedLog(this.#log.slice());
    return this.#snapshot;
  }

  /** The event with `seq`, or `undefined`. */
  event(seq: number): SessionEvent | undefined {
    return this.#log[seq];
  }

  /**
   * Admits `record` as the next event and returns it, frozen.
   *
   * @throws SessionValidationError when it breaks a rule (a seed's error, naming its index);
   *   nothing is added then, though parts of its data may be left frozen.
   */
  add(record: SeedRecord): SessionEvent {
    const index = this.#log.length;
    const { type, data } = record;
    // A seed may hold elided chunks (stubs of chunks a store did not load); a log made here
    // cannot, as an append cannot.
    if (
      type === 'assistant/chunk' &&
      typeof data === 'object' &&
      data !== null &&
      isElisionCandidate(data)
    ) {
      throw new SessionValidationError(
        'ELIDED_CHUNK_OUTSIDE_SEED',
        'an elided assistant/chunk ({elided: {bytes}}) stands for a chunk a store did not load and exists only in a loaded seed; append the chunk itself',
        { index, seq: record.seq, eventType: type, path: 'data.elided' },
      );
    }
    const event = this.#admit(record, index);
    this.#manager.validateSeeded(event, index);
    this.#log.push(event);
    this.#snapshot = undefined;
    return event;
  }
}
