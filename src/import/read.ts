/**
 * Finding and reading source files: a file, or every `.jsonl` file under a directory, read by the
 * reader of the format `--from` names.
 */
import {
  closeSync,
  constants,
  fstatSync,
  openSync,
  readdirSync,
  readSync,
  statSync,
} from 'node:fs';
import { join, resolve } from 'node:path';
import type { JsonObject } from '../core/index.js';
import { type Harness, readingParsedLines } from './builder.js';
import { looksLikeClaudeCode, readClaudeCode } from './claude-code.js';
import { looksLikeCodex, readCodex } from './codex.js';
import { ImportError } from './errors.js';
import { type ParseLinesOptions, parseLines, type SourceLine } from './lines.js';
import { looksLikePi, readPi } from './pi.js';
import type { ImportedFile, ReadOptions } from './source.js';

/** The formats palimpsest imports, by the name `--from` takes. */
export const HARNESSES: readonly Harness[] = ['claude-code', 'codex', 'pi'];

const READERS: Readonly<
  Record<
    Harness,
    {
      looksLike(lines: readonly SourceLine[]): boolean;
      read(lines: readonly SourceLine[], path: string, options: ReadOptions): ImportedFile;
    }
  >
> = {
  'claude-code': { looksLike: looksLikeClaudeCode, read: readClaudeCode },
  codex: { looksLike: looksLikeCodex, read: readCodex },
  pi: { looksLike: looksLikePi, read: readPi },
};

/**
 * The largest source file read, in bytes: the longest string V8 holds (2^29 - 24 UTF-16 units),
 * which no file of at most that many UTF-8 bytes can exceed.
 */
export const MAX_SOURCE_BYTES = 2 ** 29 - 24;

const PI_SKIPS_MALFORMED = 'line that is not JSON (pi skips it when it reads the file)';

/** True when `value` names a supported format. */
export function isHarness(value: string): value is Harness {
  return (HARNESSES as readonly string[]).includes(value);
}

/**
 * The source files at `path`: the file itself, or the `.jsonl` files under the directory (sorted,
 * recursively; symbolic links are not followed).
 *
 * @throws ImportError `NO_SOURCE` when the path does not exist or the directory holds none.
 */
export function sourceFiles(path: string): string[] {
  let stats: ReturnType<typeof statSync>;
  try {
    stats = statSync(path);
  } catch {
    throw new ImportError('NO_SOURCE', `${path} does not exist`, { file: path });
  }
  if (!stats.isDirectory()) return [path];
  const found: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) =>
      a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
    )) {
      const full = join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.isFile() && entry.name.endsWith('.jsonl')) found.push(full);
    }
  };
  walk(path);
  if (found.length === 0) {
    throw new ImportError('NO_SOURCE', `${path} holds no .jsonl file`, { file: path });
  }
  return found;
}

/**
 * Reads one source file with the reader of `harness`. An empty file reads as no session. With
 * `partialTail: 'wait'`, a final line cut short and a last model response the source has not said
 * is finished are left out, for the next read of a file its harness is still writing.
 *
 * @throws ImportError `MALFORMED_LINE` or `TRUNCATED_LINE` naming the file and line;
 *   `UNKNOWN_FORMAT` when the file's entries are not of that format; `NOT_A_FILE` for a FIFO,
 *   device or socket; `FILE_TOO_LARGE` over `MAX_SOURCE_BYTES`.
 *
 * @example
 * ```ts
 * import { mkdtempSync, writeFileSync } from 'node:fs';
 * import { tmpdir } from 'node:os';
 * import { join } from 'node:path';
 * import { readSourceFile } from 'palimpsest/import';
 *
 * // A Codex rollout: its session line, a prompt, the answer, the end of the turn.
 * const path = join(mkdtempSync(join(tmpdir(), 'read-example-')), 'rollout.jsonl');
 * const line = (type: string, payload: object) =>
 *   JSON.stringify({ timestamp: '2026-11-04T08:00:00.000Z', type, payload });
 * writeFileSync(path, `${[
 *   line('session_meta', { id: 'demo', cwd: '/app', model_provider: 'openai' }),
 *   line('response_item', { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Hi' }] }),
 *   line('response_item', { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Hello!' }] }),
 *   line('event_msg', { type: 'task_complete' }),
 * ].join('\n')}\n`);
 *
 * const file = readSourceFile('codex', path);
 * const [session] = file.sessions;
 * console.log(session?.header.id); // 'codex-demo'
 * console.log(session?.events.at(-1)?.type); // 'turn/end'
 * console.log(session?.sourceMessages); // 2
 * ```
 */
export function readSourceFile(
  harness: Harness,
  path: string,
  options: ParseLinesOptions = {},
): ImportedFile {
  // pi skips a line that is not JSON when it reads a session (a real write glitch joins two
  // entries on one line): its import reads what pi reads, and counts the line.
  let malformed = 0;
  const lines = parseLines(readSource(path), path, {
    ...options,
    ...(harness === 'pi' ? { onMalformed: () => malformed++ } : {}),
  });
  const reader = READERS[harness];
  if (lines.length === 0) return { harness, path, sessions: [], skipped: new Map() };
  if (!reader.looksLike(lines)) {
    const other = HARNESSES.find((name) => name !== harness && READERS[name].looksLike(lines));
    throw new ImportError(
      'UNKNOWN_FORMAT',
      `${path} is not a ${harness} session file${other === undefined ? '' : ` (it looks like ${other}: pass --from ${other})`}`,
      { file: path },
    );
  }
  // The header names the file by its absolute path, whatever the working directory was.
  const meta = harness === 'claude-code' ? subagentMeta(path) : undefined;
  const held = {
    holdUnfinished: options.partialTail === 'wait',
    ...(meta === undefined ? {} : { subagentMeta: meta }),
  };
  // The lines were parsed here and nothing else has seen them.
  const read = readingParsedLines(() => reader.read(lines, resolve(path), held));
  if (malformed === 0) return { ...read, path };
  return { ...read, path, skipped: new Map([...read.skipped, [PI_SKIPS_MALFORMED, malformed]]) };
}

/**
 * The text of a regular file. Opened without blocking and checked on the open descriptor, so a
 * FIFO with no writer or a device such as `/dev/zero` is refused at once instead of read forever.
 */
function readSource(path: string): string {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new ImportError('NO_SOURCE', `${path} does not exist`, { file: path });
    }
    throw error;
  }
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile()) {
      throw new ImportError(
        'NOT_A_FILE',
        `${path} is not a regular file (expected a session file, found a ${kindOf(stats)})`,
        { file: path },
      );
    }
    if (stats.size > MAX_SOURCE_BYTES) {
      throw new ImportError(
        'FILE_TOO_LARGE',
        `${path} holds ${stats.size} bytes, more than the ${MAX_SOURCE_BYTES} one import reads`,
        { file: path },
      );
    }
    const buffer = Buffer.allocUnsafe(stats.size);
    let filled = 0;
    while (filled < buffer.length) {
      const read = readSync(fd, buffer, filled, buffer.length - filled, filled);
      if (read === 0) break;
      filled += read;
    }
    // A file that shrank while read ends where it ends now; one that grew is read next time.
    return buffer.toString('utf8', 0, filled);
  } finally {
    closeSync(fd);
  }
}

function kindOf(stats: ReturnType<typeof fstatSync>): string {
  if (stats.isFIFO()) return 'FIFO';
  if (stats.isCharacterDevice()) return 'character device';
  if (stats.isBlockDevice()) return 'block device';
  if (stats.isSocket()) return 'socket';
  if (stats.isDirectory()) return 'directory';
  return 'special file';
}

/**
 * The `agent-<id>.meta.json` beside a Claude Code subagent transcript, when there is one and it
 * is a JSON object: anything else is no metadata (the transcript imports the same without it).
 */
function subagentMeta(path: string): JsonObject | undefined {
  if (!/[/\\]subagents[/\\]agent-[^/\\]+\.jsonl$/.test(path)) return undefined;
  try {
    const value: unknown = JSON.parse(readSource(path.replace(/\.jsonl$/, '.meta.json')));
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as JsonObject)
      : undefined;
  } catch {
    return undefined;
  }
}
