/**
 * Linking a file its harness wrote as a fork of another session (a Codex rollout with
 * `forked_from_id`, a pi file with `parentSession`, a Claude Code `/branch` transcript) as a
 * palimpsest fork of that session's import.
 *
 * Every harness writes such a child by copying a prefix of the parent's history into the new
 * file, then appending the child's own entries. Read on its own, the copy gives the same events
 * as the parent's import but for where and when each was read (`sameImportedEvent`). The child is
 * linked with `seedLength` = the shared prefix, cut back to a turn and compaction boundary, and
 * its first `seedLength` events are then the parent's own, verbatim: `Session` fork semantics
 * hold by construction. It is not linked — never linked wrongly — when the copy contradicts the
 * parent: where the two first differ, the child's event is one the copy made (an entry the
 * source marks as copied, or, when it marks none, a model response or tool result, which a fork
 * never starts with: every harness forks before a user input).
 */
import type { SessionEvent } from '../core/index.js';
import { type ImportOrigin, sameImportedEvent } from './builder.js';
import { forkBoundary, sharedPrefix } from './fork-point.js';
import type { ForkSource, ImportedSession } from './source.js';

/** A session the child may fork: the named parent's import, or one of its in-file branches. */
export interface ParentCandidate {
  readonly id: string;
  readonly events: readonly SessionEvent[];
}

/** Why a fork was not linked, in words the summary counts by. */
export const NOT_LINKED = {
  missing: 'its parent session is neither in this import nor in the store',
  diverged: "its copy of the parent's history differs from the parent's import",
  disjoint: "it shares no complete turn with its parent's import",
  earlier:
    'it was imported before its parent, unlinked (sessions are append-only: delete it and import again to link it)',
} as const;

/** Why a fork was not linked. */
export type NotLinkedReason = keyof typeof NOT_LINKED;

/** What {@link linkFork} decided. */
export type LinkResult =
  | {
      readonly linked: true;
      /** The file's sessions, the first now a fork of `parent`, its in-file branches following. */
      readonly sessions: readonly ImportedSession[];
      readonly parent: string;
      readonly seedLength: number;
    }
  | { readonly linked: false; readonly reason: NotLinkedReason; readonly detail: string };

/**
 * Links the sessions of a child file (its active path first, then its in-file branches, as a
 * reader returns them) to the best of `candidates`: the one it shares the longest forkable
 * prefix with, the first on a tie. With `fixed`, only that parent and seed length are tried (a
 * child the store already holds as a fork must be rebuilt exactly as it was linked).
 */
export function linkFork(
  sessions: readonly ImportedSession[],
  fork: ForkSource,
  candidates: readonly ParentCandidate[],
  fixed?: { readonly parent: string; readonly seedLength: number },
): LinkResult {
  const child = sessions[0];
  if (child === undefined) return notLinked('disjoint', 'the file holds no conversation');
  let best: { parent: ParentCandidate; seedLength: number } | undefined;
  let contradiction: string | undefined;
  for (const parent of candidates) {
    if (fixed !== undefined && parent.id !== fixed.parent) continue;
    const shared = sharedPrefix(child.events, parent.events, sameImportedEvent);
    const first = child.events[shared];
    if (
      first !== undefined &&
      shared < parent.events.length &&
      madeByCopy(first, fork.copiedLines)
    ) {
      contradiction ??= `the copy differs from '${parent.id}' at seq ${shared} (${first.type})`;
      continue;
    }
    const seedLength =
      fixed === undefined
        ? forkBoundary(child.events, shared)
        : fixed.seedLength <= shared
          ? fixed.seedLength
          : -1;
    if (seedLength >= 0 && (best === undefined || seedLength > best.seedLength)) {
      best = { parent, seedLength };
    }
  }
  if (best === undefined) {
    return contradiction === undefined
      ? notLinked('missing', `no session '${fork.parent}' to link to`)
      : notLinked('diverged', contradiction);
  }
  const copied = fork.copiedLines === undefined || fork.copiedLines.size > 0;
  if (fixed === undefined && best.seedLength === 0 && copied) {
    return notLinked('disjoint', `no whole turn of '${best.parent.id}' begins the copy`);
  }
  return {
    linked: true,
    sessions: reseed(sessions, best.parent, best.seedLength),
    parent: best.parent.id,
    seedLength: best.seedLength,
  };
}

/** True when the source entry that made `event` is part of the copy of the parent. */
function madeByCopy(event: SessionEvent, copiedLines: ReadonlySet<number> | undefined): boolean {
  const origin = (event.data as { origin?: ImportOrigin }).origin;
  // An error result made for an unanswered call closes a step when the next input comes: the
  // child's own entry made it, wherever the step began.
  if (origin?.made === 'no-result') return false;
  if (copiedLines !== undefined) return origin !== undefined && copiedLines.has(origin.line);
  return (
    event.type === 'assistant/message' || event.type === 'tool/call' || event.type === 'tool/result'
  );
}

/**
 * The child's sessions with the parent's first `seedLength` events in place of the child's copy
 * of them, and each in-file branch of the child re-seeded from the child's new events in turn
 * (a branch's prefix is its parent's, whatever that became).
 */
function reseed(
  sessions: readonly ImportedSession[],
  parent: ParentCandidate,
  seedLength: number,
): ImportedSession[] {
  const [child, ...branches] = sessions as [ImportedSession, ...ImportedSession[]];
  const events = [...parent.events.slice(0, seedLength), ...child.events.slice(seedLength)];
  const linked: ImportedSession = {
    ...child,
    header: { ...child.header, parentSession: parent.id, seedLength },
    events,
  };
  return [
    linked,
    ...branches.map((branch) => {
      if (branch.header.parentSession !== child.header.id) return branch;
      const own = branch.header.seedLength ?? 0;
      return { ...branch, events: [...events.slice(0, own), ...branch.events.slice(own)] };
    }),
  ];
}

function notLinked(reason: NotLinkedReason, detail: string): LinkResult {
  return { linked: false, reason, detail };
}
