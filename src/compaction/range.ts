/**
 * Which part of the surface a compaction replaces. By default: from the head of the surface up
 * to a cut that keeps the most recent `keepRecentTokens` verbatim, moved toward the head until
 * it separates no tool call from its result, and never past the start of the newest complete
 * turn. A rolling compaction therefore always includes the previous summary, which sits at the
 * head.
 */
import type { Session } from '../core/index.js';
import { CompactionError } from './errors.js';
import { newestCompleteTurnStart, type PricedSurface } from './surface-entries.js';

/** A range of surface positions, inclusive. */
export interface SurfaceRange {
  readonly from: number;
  readonly to: number;
}

/**
 * The default range, or `undefined` when nothing can be compacted (everything must be kept, or
 * the only candidate is a lone earlier summary).
 */
export function selectRange(
  session: Session,
  surface: PricedSurface,
  keepRecentTokens: number,
): SurfaceRange | undefined {
  const { entries, balanced } = surface;
  let cut = entries.length;
  let kept = 0;
  while (cut > 0 && kept < keepRecentTokens) {
    cut -= 1;
    kept += entries[cut]?.tokens ?? 0;
  }
  cut = Math.min(cut, newestCompleteTurnStart(session, surface));
  while (cut > 0 && balanced[cut] !== true) cut -= 1;
  if (cut === 0) return undefined;
  if (cut === 1 && isSummary(entries[0]?.event.data)) return undefined;
  return { from: 0, to: cut - 1 };
}

/** Resolves an explicit `{start, end}` seq range to surface positions, or throws. */
export function resolveRange(
  session: Session,
  surface: PricedSurface,
  range: { readonly start: number; readonly end: number },
): SurfaceRange {
  const from = session.surface.indexOf(range.start);
  const to = session.surface.indexOf(range.end);
  if (from === -1 || to === -1) {
    const missing = from === -1 ? range.start : range.end;
    throw new CompactionError(
      'INVALID_RANGE',
      `expected the range ends to be on the surface, but seq ${missing} is not (the surface has ${surface.entries.length} entries)`,
    );
  }
  if (from > to) {
    throw new CompactionError(
      'INVALID_RANGE',
      `expected start (seq ${range.start}, position ${from}) at or before end (seq ${range.end}, position ${to}) in surface order`,
    );
  }
  if (surface.balanced[from] !== true || surface.balanced[to + 1] !== true) {
    const edge =
      surface.balanced[from] !== true ? `before seq ${range.start}` : `after seq ${range.end}`;
    throw new CompactionError(
      'INVALID_RANGE',
      `the cut ${edge} would separate a tool call from its result; widen the range to include both`,
    );
  }
  return { from, to };
}

function isSummary(data: unknown): boolean {
  const source = (data as { source?: { kind?: unknown } } | null)?.source;
  return source?.kind === 'compaction';
}
