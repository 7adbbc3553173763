/**
 * Typed errors of compaction and pruning. A summary that fails, is not shorter, or arrives after
 * the surface changed is not an error: it is reported in the result and in `compaction/end`.
 */
import { PalimpsestError } from '../core/index.js';
import { countOption as checkCount } from '../model/index.js';

/**
 * Stable codes of {@link CompactionError}:
 * - `INVALID_RANGE`: a requested range is not on the surface, is reversed, or would separate a
 *   tool call from its result.
 * - `BUSY`: a compaction is already running on this session.
 * - `INVALID_OPTIONS`: an option is out of range (a negative token budget, a threshold outside
 *   (0, 1]...).
 */
export type CompactionErrorCode = 'INVALID_RANGE' | 'BUSY' | 'INVALID_OPTIONS';

/** A misuse of compaction or pruning, with a stable `code`. */
export class CompactionError extends PalimpsestError {
  static override readonly kind: string = 'CompactionError';
  declare readonly code: CompactionErrorCode;

  constructor(code: CompactionErrorCode, message: string) {
    super(code, message);
  }
}

/** Checks a non-negative integer option. */
export function countOption(name: string, value: number | undefined, fallback: number): number {
  return checkCount(name, value, fallback, invalidOptions);
}

/** Builds compaction's error for a malformed option. */
export function invalidOptions(message: string): CompactionError {
  return new CompactionError('INVALID_OPTIONS', message);
}
