/**
 * Typed errors of import. A source entry palimpsest does not carry over is not an error: it is
 * counted in the result's `skipped`, by reason.
 */
import { PalimpsestError } from '../core/index.js';

/**
 * Stable codes of {@link ImportError}:
 * - `MALFORMED_LINE`: a line of a source file is not a JSON object, or an entry lacks a field
 *   every entry of its kind has.
 * - `TRUNCATED_LINE`: the last line of a source file is cut short (no newline, not JSON): the
 *   harness was writing it, or the file was cut.
 * - `UNKNOWN_FORMAT`: the file does not look like the format named by `--from` (its first entry
 *   is of another harness), or `--from` names no supported format.
 * - `NO_SOURCE`: the path does not exist, or holds no session file of the format.
 * - `SOURCE_DIVERGED`: the store holds an imported session whose events are not a prefix of what
 *   the source reads as now (the source file was rewritten, not grown); nothing was written.
 * - `NOT_A_FILE`: the path names a FIFO, a device or a socket: refused before reading, as such
 *   a source may never end.
 * - `FILE_TOO_LARGE`: the file is larger than one read can hold (`MAX_SOURCE_BYTES`).
 */
export type ImportErrorCode =
  | 'MALFORMED_LINE'
  | 'TRUNCATED_LINE'
  | 'UNKNOWN_FORMAT'
  | 'NO_SOURCE'
  | 'SOURCE_DIVERGED'
  | 'NOT_A_FILE'
  | 'FILE_TOO_LARGE';

/** A source that cannot be imported as it is, naming the file (and line) where known. */
export class ImportError extends PalimpsestError {
  static override readonly kind: string = 'ImportError';
  declare readonly code: ImportErrorCode;
  /** The source file, when the problem is in one. */
  readonly file: string | undefined;
  /** The 1-based line of `file`, when the problem is on one. */
  readonly line: number | undefined;

  constructor(
    code: ImportErrorCode,
    message: string,
    where: { readonly file?: string; readonly line?: number } = {},
  ) {
    super(code, message);
    this.file = where.file;
    this.line = where.line;
  }
}
