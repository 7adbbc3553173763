/**
 * Retention policies over a store: which sessions go by age, by count and by total size, and
 * which stay because forks descend from them. The plan is pure (the clock is an argument), so
 * what `palimpsest gc` would remove can be shown, tested and only then applied
 * (`retention-apply.ts`).
 */
import { InvalidArgumentError } from '../../core/index.js';

/**
 * What to keep. Every criterion set must hold for a session to stay; a policy names at least one.
 */
export interface RetentionPolicy {
  /** Sessions whose last activity is more than this many ms before `now` go. */
  readonly olderThanMs?: number;
  /** Only the newest this many sessions (by last activity) stay. */
  readonly keep?: number;
  /** The oldest sessions go until the rest take at most this many bytes. */
  readonly maxSizeBytes?: number;
  /**
   * Keep every session from which a kept session descends (through `parentSession`, at any
   * depth), even when a criterion above would remove it. A fork works without its parent (its
   * seed is its own), so this is not needed to keep forks readable: it keeps their provenance,
   * the parent a fork's header names, in the store. Default `false`.
   */
  readonly keepForks?: boolean;
}

/** What a plan needs to know of one session. */
export interface RetentionCandidate {
  readonly id: string;
  /** The session it was forked (or salvaged) from, if any. */
  readonly parentSession?: string;
  /** Last activity, epoch ms: the store's last write, or the header's `createdAt`. */
  readonly lastActivity: number;
  /** What the session takes in the store, in bytes (0 when unknown and not measured). */
  readonly sizeBytes: number;
}

/** Why a session would go. */
export type RetentionReason = 'age' | 'count' | 'size';

/** A session the plan removes, and why. */
export interface PlannedRemoval extends RetentionCandidate {
  readonly reasons: readonly RetentionReason[];
}

/** A session a criterion would remove but `keepForks` keeps, and the kept forks that need it. */
export interface HeldForForks extends PlannedRemoval {
  readonly forks: readonly string[];
}

/** What {@link planRetention} decided. */
export interface RetentionPlan {
  /** The sessions to remove, oldest first. */
  readonly remove: readonly PlannedRemoval[];
  /** Sessions a criterion selected that stay for the forks descending from them. */
  readonly heldForForks: readonly HeldForForks[];
  /** How many sessions stay. */
  readonly kept: number;
  /** Bytes of every candidate, and of those that stay. */
  readonly bytesBefore: number;
  readonly bytesAfter: number;
  /** Whether what stays still exceeds `maxSizeBytes` (sessions held for forks can make it so). */
  readonly overBudget: boolean;
}

/**
 * Decides which sessions a policy removes. Sessions are ranked by last activity, newest first
 * (ties by id); `keep` removes those past the first N, `olderThanMs` those last active more than
 * that before `now`, and `maxSizeBytes` then removes the oldest of the rest until what stays
 * fits. With `keepForks`, a selected session from which a kept one descends stays.
 *
 * @throws InvalidArgumentError when the policy names no criterion or a negative or non-integer
 * bound.
 * @example
 * ```ts
 * import { planRetention } from 'palimpsest/store';
 *
 * const day = 86_400_000;
 * const plan = planRetention(
 *   [
 *     { id: 'old', lastActivity: 0, sizeBytes: 10 },
 *     { id: 'fork', parentSession: 'old', lastActivity: 99 * day, sizeBytes: 10 },
 *     { id: 'stale', lastActivity: 1 * day, sizeBytes: 10 },
 *   ],
 *   { olderThanMs: 90 * day, keepForks: true },
 *   100 * day,
 * );
 * console.log(plan.remove.map((session) => session.id)); // [ 'stale' ]
 * console.log(plan.heldForForks[0]?.forks); // [ 'fork' ]
 * ```
 */
export function planRetention(
  candidates: readonly RetentionCandidate[],
  policy: RetentionPolicy,
  now: number,
): RetentionPlan {
  checkPolicy(policy);
  const ranked = [...candidates].sort(
    (a, b) => b.lastActivity - a.lastActivity || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
  );
  const reasons = new Map<string, RetentionReason[]>();
  const select = (id: string, reason: RetentionReason): void => {
    const list = reasons.get(id);
    if (list === undefined) reasons.set(id, [reason]);
    else list.push(reason);
  };
  ranked.forEach((candidate, rank) => {
    if (policy.olderThanMs !== undefined && now - candidate.lastActivity > policy.olderThanMs) {
      select(candidate.id, 'age');
    }
    if (policy.keep !== undefined && rank >= policy.keep) select(candidate.id, 'count');
  });
  const bytesBefore = ranked.reduce((sum, candidate) => sum + candidate.sizeBytes, 0);
  if (policy.maxSizeBytes !== undefined) {
    let staying = ranked
      .filter((candidate) => !reasons.has(candidate.id))
      .reduce((sum, candidate) => sum + candidate.sizeBytes, 0);
    for (let i = ranked.length - 1; i >= 0 && staying > policy.maxSizeBytes; i--) {
      const candidate = ranked[i] as RetentionCandidate;
      if (reasons.has(candidate.id)) continue;
      select(candidate.id, 'size');
      staying -= candidate.sizeBytes;
    }
  }
  const held = policy.keepForks === true ? holdAncestors(ranked, reasons) : new Map();
  const remove: PlannedRemoval[] = [];
  const heldForForks: HeldForForks[] = [];
  for (const candidate of [...ranked].reverse()) {
    const why = reasons.get(candidate.id);
    if (why === undefined) continue;
    const forks = held.get(candidate.id);
    if (forks === undefined) remove.push({ ...candidate, reasons: why });
    else heldForForks.push({ ...candidate, reasons: why, forks: [...forks].sort() });
  }
  const bytesAfter = bytesBefore - remove.reduce((sum, session) => sum + session.sizeBytes, 0);
  return {
    remove,
    heldForForks,
    kept: ranked.length - remove.length,
    bytesBefore,
    bytesAfter,
    overBudget: policy.maxSizeBytes !== undefined && bytesAfter > policy.maxSizeBytes,
  };
}

/**
 * The selected sessions from which a kept session descends, each with the kept sessions that
 * descend from it (the ones no criterion selected; a held session keeps its own ancestors too,
 * but is not named as their fork).
 */
function holdAncestors(
  ranked: readonly RetentionCandidate[],
  selected: ReadonlyMap<string, readonly RetentionReason[]>,
): Map<string, Set<string>> {
  const byId = new Map(ranked.map((candidate) => [candidate.id, candidate]));
  const held = new Map<string, Set<string>>();
  for (const candidate of ranked) {
    if (selected.has(candidate.id)) continue;
    const seen = new Set([candidate.id]);
    for (
      let parent = byId.get(candidate.parentSession ?? '');
      parent !== undefined && !seen.has(parent.id);
      parent = byId.get(parent.parentSession ?? '')
    ) {
      seen.add(parent.id);
      if (!selected.has(parent.id)) continue;
      const forks = held.get(parent.id) ?? new Set<string>();
      forks.add(candidate.id);
      held.set(parent.id, forks);
    }
  }
  return held;
}

function checkPolicy(policy: RetentionPolicy): void {
  const bounds: Array<[string, number | undefined]> = [
    ['olderThanMs', policy.olderThanMs],
    ['keep', policy.keep],
    ['maxSizeBytes', policy.maxSizeBytes],
  ];
  if (bounds.every(([, value]) => value === undefined)) {
    throw new InvalidArgumentError(
      'expected a retention policy with at least one of olderThanMs, keep or maxSizeBytes, found none',
    );
  }
  for (const [name, value] of bounds) {
    if (value !== undefined && !(Number.isSafeInteger(value) && value >= 0)) {
      throw new InvalidArgumentError(
        `expected ${name} as a non-negative integer, found ${String(value)}`,
      );
    }
  }
}
