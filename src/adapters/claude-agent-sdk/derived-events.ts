/**
 * The conversation layer of a mirrored transcript: the events `palimpsest import` makes of the
 * same entries, placed in the log after the raw entries they come from. A
 * `GrowingClaudeTranscript` reads the entries as they come; its events are numbered from 0 in its
 * own session, so each is renumbered to its seq in the log, and the seqs it cites with it.
 * Only whole turns are written: a turn read half-way could still change.
 */

import {
  type JsonObject,
  type JsonValue,
  jsonEqual,
  replaceOpOf,
  type SessionEvent,
} from '../../core/index.js';
import { GrowingClaudeTranscript, ImportError } from '../../import/index.js';

/** The event type of one raw transcript entry, kept verbatim as `data.entry`. */
export const ENTRY_TYPE = 'claude-code/entry';

/** The event type marking where the conversation events stopped following the entries. */
export const STOPPED_TYPE = 'claude-code/derive-stopped';

/** The conversation layer as written so far, and the reader that extends it. */
export class DerivedLayer {
  readonly #transcript: GrowingClaudeTranscript;
  /** The reader's events written to the log so far. */
  #written = 0;
  /** The log seq of each of the reader's events written, by the reader's seq. */
  readonly #seqOf = new Map<number, number>();
  #stopped: string | undefined;

  constructor(file: string, subagent: boolean) {
    this.#transcript = new GrowingClaudeTranscript(file, subagent);
  }

  /** Why the layer stopped following the entries, once it has. */
  get stopped(): string | undefined {
    return this.#stopped;
  }

  /**
   * Takes in entries, as the log holds them or as a batch brings them.
   */
  add(entries: readonly JsonObject[]): void {
    for (const entry of entries) {
      if (this.#stopped !== undefined) return;
      try {
        this.#transcript.add([entry]);
      } catch (error) {
        if (!ImportError.isInstance(error)) throw error;
        this.#stopped = error.message;
        return;
      }
      // Read where a turn may settle, so that entries read from a loaded log are read as they
      // were when they came: a rewind is only seen as one by a reader that read what it left.
      if (!mayEndTurn(entry)) continue;
      const read = this.#transcript.events();
      if (typeof read === 'string') this.#stopped = read;
    }
  }

  /**
   * Takes in the conversation events a loaded log holds, checking that the reader makes the same
   * (it may not: a log written by a version of palimpsest that read the transcript otherwise).
   */
  adopt(written: readonly SessionEvent[]): void {
    if (this.#stopped !== undefined || written.length === 0) return;
    const ours = this.#transcript.events();
    if (typeof ours === 'string') {
      this.#stopped = ours;
      return;
    }
    for (const theirs of written) {
      const event = ours[this.#written];
      if (event === undefined || !jsonEqual(this.#renumbered(event, theirs.seq), theirs)) {
        this.#stopped = `the transcript now reads differently from the conversation written at seq ${theirs.seq}`;
        return;
      }
      this.#written++;
    }
  }

  /**
   * The conversation events the entries taken in complete, numbered from `nextSeq`; empty when
   * they complete no turn. Marks the layer stopped when the reader can no longer extend it.
   */
  next(nextSeq: number): SessionEvent[] {
    if (this.#stopped !== undefined) return [];
    const ours = this.#transcript.events();
    if (typeof ours === 'string') {
      this.#stopped = ours;
      return [];
    }
    const whole = lastTurnEnd(ours) + 1;
    const events: SessionEvent[] = [];
    for (let i = this.#written; i < whole; i++) {
      events.push(this.#renumbered(ours[i] as SessionEvent, nextSeq + events.length));
    }
    this.#written = Math.max(this.#written, whole);
    return events;
  }

  /** `event` at `seq`, its references to earlier events moved to their seqs in the log. */
  #renumbered(event: SessionEvent, seq: number): SessionEvent {
    this.#seqOf.set(event.seq, seq);
    const moved = (at: number): number => this.#seqOf.get(at) ?? at;
    const replace = replaceOpOf(event);
    return {
      ...event,
      seq,
      ...(replace === undefined
        ? {}
        : { surfaceOp: { op: 'replace', start: moved(replace.start), end: moved(replace.end) } }),
      ...(event.sourceEventSeqs === undefined
        ? {}
        : { sourceEventSeqs: event.sourceEventSeqs.map(moved) }),
    } as SessionEvent;
  }
}

/**
 * True for an entry after which a turn may settle: a response with a final stop reason, a
 * prompt (it closes a turn cut short), or a system entry (a compaction's boundary). Other
 * entries (a response's blocks before its last, tool results, attachments, metadata) only ever
 * join a turn still open.
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

/** True for a JSON object (not an array, not null). */
export function isObject(value: JsonValue | undefined): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function lastTurnEnd(events: readonly SessionEvent[]): number {
  for (let i = events.length - 1; i >= 0; i--) {
    if ((events[i] as SessionEvent).type === 'turn/end') return i;
  }
  return -1;
}
