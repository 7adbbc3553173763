/**
 * What the store remembers of a mirrored transcript between appends, so a batch costs what it
 * adds, not a reload of the session: the uuids seen, the next seq, and the conversation layer
 * with its reader. It is a cache of the log: a write another process made shows as a conflict,
 * and the state is rebuilt from the store.
 */
import { dataAsJson, type JsonObject, type SessionEvent } from '../../core/index.js';
import { DerivedLayer, ENTRY_TYPE, isObject, STOPPED_TYPE } from './derived-events.js';

/** A mirrored transcript as the store holds it. */
export class MirrorState {
  /** The project the transcript is kept under. */
  readonly projectKey: string;
  readonly #layer: DerivedLayer;
  readonly #uuids = new Set<string>();
  #nextSeq = 0;
  #time = 0;
  /** Raw entries held. */
  #entries = 0;
  /** The log holds the mark that the conversation layer stopped. */
  #marked = false;

  private constructor(projectKey: string, layer: DerivedLayer) {
    this.projectKey = projectKey;
    this.#layer = layer;
  }

  /**
   * The state of a session's events, as loaded.
   *
   * @param file The transcript's file name, for the conversation events' `origin`.
   * @param subagent The transcript is a subagent's.
   */
  static of(
    projectKey: string,
    file: string,
    subagent: boolean,
    events: readonly SessionEvent[],
  ): MirrorState {
    const state = new MirrorState(projectKey, new DerivedLayer(file, subagent));
    const entries = state.#take(events);
    if (state.#marked) return state;
    state.#layer.add(entries);
    state.#layer.adopt(events.filter((event) => !event.type.startsWith('claude-code/')));
    return state;
  }

  /** The seq the next batch starts at. */
  get nextSeq(): number {
    return this.#nextSeq;
  }

  /** The entries of `batch` the transcript does not hold yet (a uuid is an entry's identity). */
  fresh(batch: readonly JsonObject[]): JsonObject[] {
    const seen = new Set<string>();
    return batch.filter((entry) => {
      if (typeof entry.uuid !== 'string') return true;
      if (this.#uuids.has(entry.uuid) || seen.has(entry.uuid)) return false;
      seen.add(entry.uuid);
      return true;
    });
  }

  /**
   * The events that mirror `fresh` (entries {@link fresh} kept): one per entry, then the
   * conversation events they complete, or the mark that the conversation stopped following.
   * The state is only valid again once {@link wrote} took in what the store accepted.
   *
   * @param now The time for entries that carry none.
   */
  batch(fresh: readonly JsonObject[], now: () => number): SessionEvent[] {
    let time = this.#time;
    const events = fresh.map((entry, index) => {
      time = Math.max(time, timeOf(entry.timestamp) ?? now());
      return {
        seq: this.#nextSeq + index,
        time,
        type: ENTRY_TYPE,
        data: { entry },
      } as SessionEvent;
    });
    if (this.#marked) return events;
    this.#layer.add(fresh);
    for (const event of this.#layer.next(this.#nextSeq + fresh.length)) events.push(event);
    const stopped = this.#layer.stopped;
    if (stopped !== undefined) {
      const data = { reason: stopped, entries: this.#entries + fresh.length };
      events.push({
        seq: this.#nextSeq + events.length,
        time,
        type: STOPPED_TYPE,
        data,
      } as SessionEvent);
    }
    return events;
  }

  /** Takes in what a successful append wrote. */
  wrote(events: readonly SessionEvent[]): void {
    this.#take(events);
  }

  /** Notes what `events` hold; returns their raw entries. */
  #take(events: readonly SessionEvent[]): JsonObject[] {
    const entries: JsonObject[] = [];
    for (const event of events) {
      this.#nextSeq = event.seq + 1;
      this.#time = Math.max(this.#time, event.time);
      if (event.type === STOPPED_TYPE) this.#marked = true;
      const entry = entryOf(event);
      if (entry === undefined) continue;
      entries.push(entry);
      this.#entries++;
      if (typeof entry.uuid === 'string') this.#uuids.add(entry.uuid);
    }
    return entries;
  }
}

/** The raw entries of a mirrored session's events, in order. */
export function entriesOf(events: readonly SessionEvent[]): JsonObject[] {
  return events.flatMap((event) => {
    const entry = entryOf(event);
    return entry === undefined ? [] : [entry];
  });
}

/** The raw entry an event holds, if it is one. */
function entryOf(event: SessionEvent): JsonObject | undefined {
  if (event.type !== ENTRY_TYPE) return undefined;
  const entry = (dataAsJson(event) as JsonObject).entry;
  return isObject(entry) ? entry : undefined;
}

export function timeOf(value: unknown): number | undefined {
  if (typeof value !== 'string') return undefined;
  const ms = Date.parse(value);
  return Number.isSafeInteger(ms) && ms >= 0 ? ms : undefined;
}
