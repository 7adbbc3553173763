/**
 * The conversation events of a mirrored transcript: what `palimpsest import` writes for the same
 * entries, placed in the log after the raw entries they come from. The importer reads the whole
 * transcript each time; its events for a prefix of the entries are a prefix of its events for all
 * of them (the builder's contract), so what a new batch adds is the tail past what is written.
 * Only whole turns are written: inside a turn Claude Code writes one entry per content block and
 * parallel results in completion order, and a turn read half-way could still change.
 */
import { type JsonObject, jsonEqual, replaceOpOf, type SessionEvent } from '../../core/index.js';
import { ImportError, readClaudeCode, type SourceLine } from '../../import/index.js';

/** The event type of one raw transcript entry, kept verbatim as `data.entry`. */
export const ENTRY_TYPE = 'claude-code/entry';

/** The event type marking where the conversation events stopped following the entries. */
export const STOPPED_TYPE = 'claude-code/derive-stopped';

/** What a batch adds besides its raw entries. */
export type DerivedTail =
  | { readonly events: readonly SessionEvent[] }
  | { readonly stopped: string };

/**
 * The conversation events `entries` add to those `written` already holds, numbered from
 * `nextSeq`, or why they no longer follow (the transcript took another path than the one written,
 * or an entry the importer cannot read).
 *
 * @param file The transcript's file name, for the events' `origin`.
 */
export function derivedTail(
  entries: readonly JsonObject[],
  written: readonly SessionEvent[],
  nextSeq: number,
  file: string,
): DerivedTail {
  let imported: readonly SessionEvent[];
  try {
    const lines: SourceLine[] = entries.map((value, index) => ({ line: index + 1, value }));
    const read = readClaudeCode(lines, file, { holdUnfinished: true });
    imported = read.sessions[0]?.events ?? [];
  } catch (error) {
    if (ImportError.isInstance(error)) return { stopped: error.message };
    throw error;
  }
  const whole = lastTurnEnd(imported) + 1;
  const seqOf = new Map<number, number>();
  for (let i = 0; i < written.length; i++) {
    const ours = imported[i];
    const theirs = written[i] as SessionEvent;
    if (ours === undefined) {
      return {
        stopped: `the transcript now reads as ${imported.length} events, ${written.length} are written`,
      };
    }
    seqOf.set(ours.seq, theirs.seq);
    if (!jsonEqual(renumbered(ours, seqOf, theirs.seq), theirs)) {
      return {
        stopped: `the transcript now reads differently at its event ${i} ('${ours.type}'), written as seq ${theirs.seq}`,
      };
    }
  }
  const events: SessionEvent[] = [];
  for (let i = written.length; i < whole; i++) {
    const ours = imported[i] as SessionEvent;
    const seq = nextSeq + events.length;
    seqOf.set(ours.seq, seq);
    events.push(renumbered(ours, seqOf, seq));
  }
  return { events };
}

function lastTurnEnd(events: readonly SessionEvent[]): number {
  for (let i = events.length - 1; i >= 0; i--)
    if ((events[i] as SessionEvent).type === 'turn/end') return i;
  return -1;
}

/** `event` at `seq`, its references to earlier events moved the way `seqOf` says. */
function renumbered(
  event: SessionEvent,
  seqOf: ReadonlyMap<number, number>,
  seq: number,
): SessionEvent {
  const moved = (at: number): number => seqOf.get(at) ?? at;
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
