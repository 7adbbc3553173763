/**
 * What a reader makes of one source file: its sessions (the active path first, then one fork per
 * branch the user left) and the entries it did not carry over, counted by reason.
 */
import {
  type JsonObject,
  type JsonValue,
  jsonEqual,
  SESSION_FORMAT_VERSION,
  type SessionEvent,
  type SessionHeader,
} from '../core/index.js';
import type { Harness, SessionBuilder } from './builder.js';

/** One palimpsest session read from a source. */
export interface ImportedSession {
  readonly header: SessionHeader;
  /** Every event, validated; a fork's first `header.seedLength` events are its parent's. */
  readonly events: readonly SessionEvent[];
  /** Messages read from the source (user, context, assistant, tool results, summaries). */
  readonly sourceMessages: number;
  /** Error results made for calls the source recorded no result for. */
  readonly madeResults: number;
}

/** One source file, read. */
export interface ImportedFile {
  readonly harness: Harness;
  /** The file's path, as given. */
  readonly path: string;
  /** The active path first, then its forks. Empty when the file holds no conversation. */
  readonly sessions: readonly ImportedSession[];
  /** Entries (and content blocks) not carried over, by reason. */
  readonly skipped: ReadonlyMap<string, number>;
}

/** Options every reader takes. */
export interface ReadOptions {
  /**
   * Leave out a last model response the source has not said is finished (Claude Code writes one
   * response over several lines; Codex ends one with its `token_count` line), so that reading a
   * file its harness is still writing gives a prefix of what the finished file gives.
   */
  readonly holdUnfinished?: boolean;
}

/** A count of entries left out, by reason. */
export class Skips {
  readonly counts = new Map<string, number>();
  /** While false, nothing is counted (a branch re-reads entries the active path counted). */
  active = true;

  add(reason: string): void {
    if (this.active) this.counts.set(reason, (this.counts.get(reason) ?? 0) + 1);
  }
}

/** The header fields every session of a file shares. */
export interface SessionBase {
  readonly id: string;
  readonly createdAt: number;
  readonly metadata: JsonObject;
}

/** A header for the active path. */
export function baseHeader(base: SessionBase): SessionHeader {
  return {
    version: SESSION_FORMAT_VERSION,
    id: base.id,
    createdAt: base.createdAt,
    metadata: base.metadata,
  };
}

/**
 * The sessions of a file: the active path's, then a fork for each branch that holds something
 * the active path does not. A fork shares its parent's events up to the last turn boundary
 * before the two differ (`seedLength`), as `palimpsest fork` would have made it.
 */
export function assemble(
  base: SessionBase,
  active: SessionBuilder,
  branches: readonly { readonly leaf: string; readonly builder: SessionBuilder }[],
): ImportedSession[] {
  const parent = active.events;
  const sessions: ImportedSession[] = [
    {
      header: baseHeader(base),
      events: parent,
      sourceMessages: active.sourceMessages,
      madeResults: active.madeResults,
    },
  ];
  for (const { leaf, builder } of branches) {
    const events = builder.events;
    const shared = sharedPrefix(parent, events);
    if (shared === events.length) continue;
    sessions.push({
      header: {
        ...baseHeader({
          ...base,
          id: `${base.id}~${leaf}`,
          metadata: { ...base.metadata, branch: { leaf } },
        }),
        parentSession: base.id,
        seedLength: turnBoundaryAtOrBefore(events, shared),
      },
      events,
      sourceMessages: builder.sourceMessages,
      madeResults: builder.madeResults,
    });
  }
  return sessions;
}

function sharedPrefix(a: readonly SessionEvent[], b: readonly SessionEvent[]): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    if (!jsonEqual(a[i] as unknown as JsonValue, b[i] as unknown as JsonValue)) return i;
  }
  return n;
}

/** The largest length at or below `length` whose prefix does not end inside a turn. */
function turnBoundaryAtOrBefore(events: readonly SessionEvent[], length: number): number {
  let boundary = 0;
  let open = false;
  for (let i = 0; i < length; i++) {
    const type = (events[i] as SessionEvent).type;
    if (type === 'turn/start') open = true;
    else if (type === 'turn/end') open = false;
    if (!open) boundary = i + 1;
  }
  return boundary;
}
