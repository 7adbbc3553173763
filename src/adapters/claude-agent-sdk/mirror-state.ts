/**
 * What the store remembers of a mirrored transcript between appends, so a batch costs what it
 * adds, not a reload of the session: the raw entries (the importer reads them all again when a
 * batch may end a turn), the uuids seen, the conversation events written and the next seq. It is
 * a cache of the log: a write another process made shows as a conflict, and the state is rebuilt
 * from the store.
 */
import {
  dataAsJson,
  type JsonObject,
  type JsonValue,
  type SessionEvent,
} from '../../core/index.js';
import { derivedTail, ENTRY_TYPE, STOPPED_TYPE } from './derived-events.js';

/** A mirrored transcript as the store holds it. */
export class MirrorState {
  /** The project the transcript is kept under. */
  readonly projectKey: string;
  /** The raw entries, in order. */
  readonly entries: JsonObject[] = [];
  /** The conversation events written (everything but the raw layer). */
  readonly derived: SessionEvent[] = [];
  readonly #uuids = new Set<string>();
  #nextSeq = 0;
  #time = 0;
  #stopped = false;

  private constructor(projectKey: string) {
    this.projectKey = projectKey;
  }

  /** The state of a session's events, as loaded. */
  static of(projectKey: string, events: readonly SessionEvent[]): MirrorState {
    const state = new MirrorState(projectKey);
    state.#take(events);
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
   *
   * @param now The time for entries that carry none.
   * @param file The transcript's file name, for the conversation events' `origin`.
   */
  batch(fresh: readonly JsonObject[], now: () => number, file: string): SessionEvent[] {
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
    if (this.#stopped || !fresh.some(mayEndTurn)) return events;
    const all = [...this.entries, ...fresh];
    const tail = derivedTail(all, this.derived, this.#nextSeq + fresh.length, file);
    if ('events' in tail) return [...events, ...tail.events];
    const data = { reason: tail.stopped, entries: all.length };
    return [
      ...events,
      { seq: this.#nextSeq + fresh.length, time, type: STOPPED_TYPE, data } as SessionEvent,
    ];
  }

  /** Takes in what a successful append wrote. */
  wrote(events: readonly SessionEvent[]): void {
    this.#take(events);
  }

  #take(events: readonly SessionEvent[]): void {
    for (const event of events) {
      this.#nextSeq = event.seq + 1;
      this.#time = Math.max(this.#time, event.time);
      if (event.type === STOPPED_TYPE) this.#stopped = true;
      else if (event.type !== ENTRY_TYPE) {
        if (!event.type.startsWith('claude-code/')) this.derived.push(event);
        continue;
      }
      const entry = (dataAsJson(event) as JsonObject).entry;
      if (!isObject(entry)) continue;
      this.entries.push(entry);
      if (typeof entry.uuid === 'string') this.#uuids.add(entry.uuid);
    }
  }
}

/**
 * True for an entry after which the importer may close a turn: a response with a final stop
 * reason, a prompt (it closes a turn cut short), or a system entry (a compaction's boundary).
 * Other entries (a response's blocks before its last, tool results, attachments, metadata) only
 * ever join a turn still open, whose events are written when it closes.
 */
function mayEndTurn(entry: JsonObject): boolean {
  if (entry.type === 'system') return true;
  const message = entry.message;
  if (!isObject(message)) return false;
  if (entry.type === 'assistant') {
    return typeof message.stop_reason === 'string' && message.stop_reason !== 'tool_use';
  }
  if (entry.type !== 'user') return false;
  const content = message.content;
  return (
    !Array.isArray(content) ||
    content.some((block) => !isObject(block) || block.type !== 'tool_result')
  );
}

/** The raw entries of a mirrored session's events, in order. */
export function entriesOf(events: readonly SessionEvent[]): JsonObject[] {
  return MirrorState.of('', events).entries;
}

export function isObject(value: JsonValue | undefined): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function timeOf(value: unknown): number | undefined {
  if (typeof value !== 'string') return undefined;
  const ms = Date.parse(value);
  return Number.isSafeInteger(ms) && ms >= 0 ? ms : undefined;
}
