/**
 * Writing to the terminal: colour only on a TTY (and never with NO_COLOR or --no-color),
 * progress only on a TTY, and every piece of model or tool output escaped so that it cannot
 * move the cursor, change colours or retitle the window (terminal escape injection).
 */
import { styleText } from 'node:util';

type Style = Parameters<typeof styleText>[0];

/** Where output goes, and whether it may be decorated. */
export class Terminal {
  readonly color: boolean;
  readonly interactive: boolean;

  constructor(
    readonly out: NodeJS.WriteStream = process.stdout,
    readonly err: NodeJS.WriteStream = process.stderr,
    options: { readonly color?: boolean } = {},
  ) {
    const noColor = process.env.NO_COLOR !== undefined && process.env.NO_COLOR !== '';
    this.color =
      options.color !== false && !noColor && out.isTTY === true && process.env.TERM !== 'dumb';
    this.interactive = err.isTTY === true;
  }

  /** Writes a line to stdout, escaped as {@link printable} (the last guard of every output). */
  line(text = ''): void {
    this.out.write(`${printable(text, this.color)}\n`);
  }

  /** Writes a line to stderr, escaped as {@link printable}. */
  note(text: string): void {
    this.err.write(`${printable(text, this.color)}\n`);
  }

  /** Styles text when colour is on. */
  style(format: Style, text: string): string {
    return this.color ? styleText(format, text) : text;
  }

  /** Prints a value as JSON (for --json), every unsafe character escaped. */
  json(value: unknown): void {
    this.out.write(`${jsonText(value)}\n`);
  }

  /**
   * A progress reporter for a long operation: a redrawn line on an interactive stderr, nothing
   * at all in a pipe.
   */
  progress(label: string, total: number): Progress {
    if (!this.interactive || total <= 1) return { tick: () => {}, done: () => {} };
    let done = 0;
    const width = 24;
    const draw = (): void => {
      const filled = Math.round((done / total) * width);
      this.err.write(
        `\r${label} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${done}/${total}`,
      );
    };
    draw();
    return {
      tick: () => {
        done += 1;
        draw();
      },
      done: () => this.err.write('\r\u001b[2K'),
    };
  }
}

/** A progress reporter (see {@link Terminal.progress}). */
export interface Progress {
  tick(): void;
  done(): void;
}

// C0 controls but tab and newline, DEL, C1 controls, and the bidirectional overrides and
// isolates that can make text display in another order than it is (Trojan Source).
// The line and paragraph separators (U+2028, U+2029) end a line in some terminals and editors.
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is its job.
const UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/** Text from a model, tool or log, made safe to print: control characters become `\u….`. */
export function safe(text: string): string {
  return text.replace(UNSAFE, unicodeEscape);
}

// A colour or style change as `styleText` writes it (SGR): the one escape a styled line holds.
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding escapes is its job.
const STYLED = /(\u001b\[[0-9;]*m)|[^\u001b]+|\u001b/g;

/**
 * Text as a command prints it, whatever it holds: {@link safe}, except that with colour on the
 * style changes `styleText` makes stay (every other escape, and any escape without colour, is
 * shown as `\u001b`). Strings are made safe where they are formatted too; this is the guard
 * for the ones a formatter missed.
 */
export function printable(text: string, color: boolean): string {
  if (!color || !text.includes('\u001b')) return safe(text);
  return text.replace(STYLED, (piece, sgr: string | undefined) =>
    sgr === undefined ? safe(piece) : piece,
  );
}

// JSON.stringify escapes C0 controls only. These appear in its output only inside strings, where
// `\\uXXXX` stands for the same character, so the text stays equal JSON.
const UNSAFE_IN_JSON = /[\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/**
 * JSON text (indented by `space`; 0 for one line) with DEL, C1 controls, line separators and bidi
 * controls escaped.
 */
export function jsonText(value: unknown, space = 2): string {
  return escapedJson(JSON.stringify(value, null, space) ?? 'null');
}

/** JSON text (or JSON lines) with the characters {@link jsonText} escapes escaped. */
export function escapedJson(text: string): string {
  return text.replace(UNSAFE_IN_JSON, unicodeEscape);
}

function unicodeEscape(char: string): string {
  return `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`;
}

/** {@link safe}, on one line: newlines and tabs become visible `↵` and `→`. */
export function safeLine(text: string, max = 0): string {
  const line = safe(text).replace(/\r?\n/g, '↵ ').replace(/\t/g, '→');
  return max > 0 && line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/** Renders rows as an aligned table (cells are made safe and single-line). */
export function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const cells = [header, ...rows].map((row) => row.map((cell) => safeLine(cell)));
  const widths = header.map((_, column) =>
    Math.max(...cells.map((row) => row[column]?.length ?? 0)),
  );
  return cells
    .map((row) =>
      row
        .map((cell, column) =>
          column === row.length - 1 ? cell : cell.padEnd(widths[column] ?? 0),
        )
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}
