/**
 * "Why is this event here?": what an event was derived from, what shadowed it, what cites it and
 * whether the model still sees it. The CLI's `why` and the viewer's provenance pane both ask it,
 * so the answer is computed once, here.
 */
import type { SessionEvent } from './events.js';
import type { Session } from './session.js';
import { replaySurface } from './surface.js';

/** How deep {@link eventProvenance} follows sources; a summary of summaries rarely goes deeper. */
export const PROVENANCE_DEPTH = 4;

/** One cited event and, up to {@link PROVENANCE_DEPTH}, what it was derived from in turn. */
export interface ProvenanceNode {
  readonly seq: number;
  readonly type: string;
  /** Absent when the event records no sources, or the depth limit was reached. */
  readonly derivedFrom?: readonly ProvenanceNode[];
}

/** The provenance of one event of a session. */
export interface EventProvenance {
  readonly event: SessionEvent;
  /** Absent when the event records no sources (`sourceEventSeqs` absent). */
  readonly derivedFrom?: readonly ProvenanceNode[];
  /** The replaces that removed it from the surface (at most one, unless a later one did again). */
  readonly shadowedBy: readonly number[];
  /** The events whose `sourceEventSeqs` name it. */
  readonly citedBy: readonly number[];
  /** Whether the model sees it now. */
  readonly onSurface: boolean;
}

/**
 * The provenance of event `seq` of `session`, or `undefined` when the session has no such event.
 * O(events): it scans the log once for citations and folds the surface once for shadows.
 */
export function eventProvenance(session: Session, seq: number): EventProvenance | undefined {
  const event = session.event(seq);
  if (event === undefined) return undefined;
  const citedBy = session.events
    .filter((other) => other.sourceEventSeqs?.includes(seq) === true)
    .map((other) => other.seq);
  // The session's log is validated already: a replay finds its replaces without checking again.
  const shadowedBy: number[] = [];
  replaySurface(session.events, session.seq - 1, (replacement) => {
    if (replacement.shadowedSeqs.includes(seq)) shadowedBy.push(replacement.seq);
  });
  const derivedFrom = sourcesOf(session, event, 0);
  return {
    event,
    ...(derivedFrom === undefined ? {} : { derivedFrom }),
    shadowedBy,
    citedBy,
    onSurface: session.surface.has(seq),
  };
}

function sourcesOf(
  session: Session,
  event: SessionEvent,
  depth: number,
): ProvenanceNode[] | undefined {
  if (event.sourceEventSeqs === undefined || depth >= PROVENANCE_DEPTH) return undefined;
  return event.sourceEventSeqs.flatMap((source) => {
    // Sources are validated to be earlier seqs of the same log, so the lookup always succeeds.
    const parent = session.event(source);
    if (parent === undefined) return [];
    const derivedFrom = sourcesOf(session, parent, depth + 1);
    return [
      { seq: source, type: parent.type, ...(derivedFrom === undefined ? {} : { derivedFrom }) },
    ];
  });
}
