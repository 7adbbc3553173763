/**
 * Where a segment of the chain went wrong: the short leaves a checkpoint recorded against those
 * of the events now in its place, compared from the start. The first difference is the first
 * broken link; what follows it tells a removed or inserted event (the rest matches shifted by
 * one), two swapped events, or an altered one.
 */
import { SHORT_LEAF_CHARS } from './chain.js';

/** What happened at the first broken link. */
export type BreakKind = 'altered' | 'removed' | 'inserted' | 'reordered';

/** The first difference between what a checkpoint recorded and what is there now. */
export interface LocatedBreak {
  /** Its index in the segment (add the segment's first seq for a seq). */
  readonly index: number;
  readonly kind: BreakKind;
}

/** Splits a checkpoint's run of short leaves. */
export function splitLeaves(leaves: string): string[] {
  const out: string[] = [];
  for (let at = 0; at < leaves.length; at += SHORT_LEAF_CHARS) {
    out.push(leaves.slice(at, at + SHORT_LEAF_CHARS));
  }
  return out;
}

/**
 * The first difference between `recorded` and `found` (short leaves of one segment), or
 * `undefined` when they are equal.
 */
export function locateBreak(
  recorded: readonly string[],
  found: readonly string[],
): LocatedBreak | undefined {
  const shared = Math.min(recorded.length, found.length);
  let index = 0;
  while (index < shared && recorded[index] === found[index]) index++;
  if (index === shared && recorded.length === found.length) return undefined;
  if (index === shared) {
    return { index, kind: found.length > recorded.length ? 'inserted' : 'removed' };
  }
  if (sameFrom(recorded, index + 1, found, index)) return { index, kind: 'removed' };
  if (sameFrom(recorded, index, found, index + 1)) return { index, kind: 'inserted' };
  if (recorded[index] === found[index + 1] && recorded[index + 1] === found[index]) {
    return { index, kind: 'reordered' };
  }
  return { index, kind: 'altered' };
}

/** Whether `a` from `i` and `b` from `j` agree for as long as both last (at least one leaf). */
function sameFrom(a: readonly string[], i: number, b: readonly string[], j: number): boolean {
  const length = Math.min(a.length - i, b.length - j);
  if (length <= 0) return a.length - i === b.length - j;
  for (let k = 0; k < length; k++) if (a[i + k] !== b[j + k]) return false;
  return true;
}
