/**
 * Reading a source JSONL file into its entries, each with its 1-based line number. Damage is
 * never skipped silently: a line that is not a JSON object is a `MALFORMED_LINE`, and a final line
 * cut short a `TRUNCATED_LINE`, both naming the file and the line.
 */
import type { JsonObject, JsonValue } from '../core/index.js';
import { ImportError } from './errors.js';

/** One JSON object of a source file. */
export interface SourceLine {
  /** 1-based line number in the file. */
  readonly line: number;
  readonly value: JsonObject;
}

/** Options of {@link parseLines}. */
export interface ParseLinesOptions {
  /**
   * What to do with a final line that has no newline and is not JSON: `'error'` (default) throws
   * `TRUNCATED_LINE`; `'wait'` leaves it out, for a file its harness is still writing (watch).
   */
  readonly partialTail?: 'error' | 'wait';
  /**
   * Called for a line before the last that is not JSON, instead of throwing `MALFORMED_LINE`:
   * for a format whose harness skips such lines when it reads the file (pi), so that the import
   * reads what the harness reads. The caller counts it.
   */
  readonly onMalformed?: (line: number) => void;
}

/**
 * Parses the JSONL text of `file`. Blank lines are ignored.
 *
 * @throws ImportError `MALFORMED_LINE` or `TRUNCATED_LINE`, naming the file and line.
 */
export function parseLines(
  text: string,
  file: string,
  options: ParseLinesOptions = {},
): SourceLine[] {
  const out: SourceLine[] = [];
  const endsWithNewline = text.endsWith('\n');
  let start = 0;
  let line = 0;
  while (start < text.length) {
    line++;
    const newline = text.indexOf('\n', start);
    const end = newline === -1 ? text.length : newline;
    const raw = text.slice(start, end).trim();
    start = end + 1;
    if (raw === '') continue;
    const last = newline === -1 && !endsWithNewline;
    let value: JsonValue;
    try {
      value = JSON.parse(raw) as JsonValue;
    } catch {
      if (last) {
        if (options.partialTail === 'wait') break;
        throw new ImportError(
          'TRUNCATED_LINE',
          `${file}, line ${line}: the last line is cut short (${raw.length} characters, no newline, not complete JSON); the harness may still be writing it, or the file was cut`,
          { file, line },
        );
      }
      if (options.onMalformed !== undefined) {
        options.onMalformed(line);
        continue;
      }
      throw new ImportError(
        'MALFORMED_LINE',
        `${file}, line ${line}: expected one JSON object per line, found text that is not JSON (${excerpt(raw)})`,
        { file, line },
      );
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      throw new ImportError(
        'MALFORMED_LINE',
        `${file}, line ${line}: expected a JSON object, found ${Array.isArray(value) ? 'an array' : value === null ? 'null' : typeof value}`,
        { file, line },
      );
    }
    out.push({ line, value: value as JsonObject });
  }
  return out;
}

/** A malformed-entry error for `field` of the entry on `line`. */
export function malformedEntry(file: string, line: number, what: string): ImportError {
  return new ImportError('MALFORMED_LINE', `${file}, line ${line}: ${what}`, { file, line });
}

function excerpt(raw: string): string {
  return raw.length > 40 ? `${JSON.stringify(raw.slice(0, 39))}…` : JSON.stringify(raw);
}
