/**
 * What a reader makes of one source file: its sessions (the active path first, then one fork per
 * branch the user left) and the entries it did not carry over, counted by reason.
 */
import {
  type JsonObject,
  jsonEqual,
  SESSION_FORMAT_VERSION,
  type SessionEvent,
  type SessionHeader,
} from '../core/index.js';
import type { Harness, SessionBuilder } from './builder.js';
import { forkBoundary, sharedPrefix } from './fork-point.js';

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
  /** Present when the source records this file's history as copied from another session file. */
  readonly forkedFrom?: ForkSource;
}

/**
 * A session file that its harness wrote as a fork of another: it starts with a copy of (a prefix
 * of) the other's history. Import links it as a palimpsest fork of that session's import when the
 * copy matches it (see `link.ts`).
 */
export interface ForkSource {
  /** The palimpsest id the parent's import has (its active path; in-file branches add `~leaf`). */
  readonly parent: string;
  /** The parent's id as the source names it (a Codex thread id, a Claude Code or pi session id). */
  readonly sourceId: string;
  /** The parent's file, when the source names it by path (pi), absolute. */
  readonly parentPath?: string;
  /**
   * The source lines of the entries copied from the parent, when the format marks them (Claude
   * Code stamps each with `forkedFrom`; pi keeps their timestamps, older than the child's
   * header). Absent when it does not (Codex).
   */
  readonly copiedLines?: ReadonlySet<number>;
}

/** Options every reader takes. */
export interface ReadOptions {
  /**
   * Leave out a last model response the source has not said is finished (Claude Code writes one
   * response over several lines; Codex ends one with its `token_count` line), so that reading a
   * file its harness is still writing gives a prefix of what the finished file gives.
   */
  readonly holdUnfinished?: boolean;
  /**
   * The `agent-<id>.meta.json` Claude Code writes beside a subagent's transcript (newer
   * versions): it names the call that spawned the agent (`toolUseId`).
   */
  readonly subagentMeta?: JsonObject;
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
 * the active path does not. A fork shares its parent's events up to the last turn
 * and compaction boundary before the two differ (`seedLength`), as `palimpsest fork` would have
 * made it.
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
    const shared = sharedPrefix(parent, events, sameEvent);
    if (shared === events.length) continue;
    sessions.push({
      header: {
        ...baseHeader({
          ...base,
          id: `${base.id}~${leaf}`,
          metadata: { ...base.metadata, branch: { leaf } },
        }),
        parentSession: base.id,
        seedLength: forkBoundary(events, shared),
      },
      events,
      sourceMessages: builder.sourceMessages,
      madeResults: builder.madeResults,
    });
  }
  return sessions;
}

function sameEvent(a: SessionEvent, b: SessionEvent): boolean {
  return jsonEqual(a, b);
}
