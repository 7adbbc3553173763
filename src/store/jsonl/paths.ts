/**
 * Session ids to file names. Ids come from users, HTTP requests and model-driven tools, so an id
 * is never used as a path: it is encoded into one path segment that cannot name a parent, a
 * separator, a hidden file or a device, and the resulting path is checked to stay inside the
 * store's directory (defense in depth, should the encoding ever regress).
 */
import { createHash } from 'node:crypto';
import * as path from 'node:path';
import { InvalidSessionIdError } from '../contract/errors.js';

/** Suffix of session logs. */
export const LOG_SUFFIX = '.jsonl';
/** Suffix of writer-lock files. */
export const LOCK_SUFFIX = '.lock';
/**
 * The search index beside the logs (an FTS5 database `store/session/search.ts` keeps through the
 * SQLite backend). It is a cache of the logs: the store removes it, with its journals, when it
 * deletes a session, so that no word of a deleted session outlives its log on disk.
 */
export const SEARCH_INDEX_FILE = 'search-index.sqlite';
/** The index file and the journals SQLite may keep beside it. */
export const SEARCH_INDEX_FILES: readonly string[] = ['', '-journal', '-wal', '-shm'].map(
  (suffix) => `${SEARCH_INDEX_FILE}${suffix}`,
);
/** Longest encoded name before the id is hashed instead (well below the 255-byte name limit). */
export const MAX_ENCODED_LENGTH = 200;

const KEPT = /^[A-Za-z0-9_-]$/;

/**
 * Encodes a session id into one file-name segment, injectively: ASCII letters, digits, `_` and
 * `-` are kept and every other UTF-16 code unit (including `.`, `~`, `/`, `\`, NUL and lone
 * surrogates) becomes `~` followed by four lowercase hex digits. Because `~` itself is escaped,
 * decoding is unambiguous, so two ids never share a name. An encoding longer than
 * {@link MAX_ENCODED_LENGTH} becomes `~h` plus the SHA-256 of the id (`h` is not a hex digit, so
 * it cannot collide with an escape); the header stores the id and load checks it, so even a hash
 * collision could not mix two sessions up.
 *
 * The result never starts with `.`, which keeps it apart from the backend's temp files.
 */
export function encodeSessionId(id: string): string {
  let out = '';
  for (let i = 0; i < id.length; i++) {
    const char = id[i] as string;
    out += KEPT.test(char) ? char : `~${id.charCodeAt(i).toString(16).padStart(4, '0')}`;
    if (out.length > MAX_ENCODED_LENGTH) break;
  }
  if (out.length > MAX_ENCODED_LENGTH) {
    out = `~h${createHash('sha256').update(id, 'utf16le').digest('hex')}`;
  }
  return out;
}

/**
 * The id a log's file name encodes (the name without {@link LOG_SUFFIX}), or `undefined` for a
 * hashed name or one {@link encodeSessionId} never produces: for naming a log whose header
 * cannot be read.
 */
export function decodeSessionId(name: string): string | undefined {
  if (name.startsWith('~h')) return undefined;
  let id = '';
  for (let i = 0; i < name.length; i++) {
    const char = name[i] as string;
    if (char !== '~') {
      if (!KEPT.test(char)) return undefined;
      id += char;
      continue;
    }
    const hex = name.slice(i + 1, i + 5);
    if (!/^[0-9a-f]{4}$/.test(hex)) return undefined;
    id += String.fromCharCode(Number.parseInt(hex, 16));
    i += 4;
  }
  return encodeSessionId(id) === name ? id : undefined;
}

/** True when `name` is a session log this backend could have written (not a temp file). */
export function isLogFileName(name: string): boolean {
  return /^[A-Za-z0-9_~-]+\.jsonl$/.test(name);
}

/** The files of one session. */
export interface SessionPaths {
  /** The encoded id (one path segment). */
  readonly name: string;
  /** `<dir>/<name>.jsonl` */
  readonly log: string;
  /** `<dir>/<name>.lock` */
  readonly lock: string;
}

/**
 * The files of session `id` in `directory` (absolute). Throws `InvalidSessionIdError` if a path
 * would leave the directory, which the encoding should make impossible.
 */
export function sessionPaths(directory: string, id: string): SessionPaths {
  const name = encodeSessionId(id);
  const log = contained(directory, `${name}${LOG_SUFFIX}`);
  const lock = contained(directory, `${name}${LOCK_SUFFIX}`);
  return { name, log, lock };
}

/** `directory/entry`, verified to be a direct child of `directory`. */
export function contained(directory: string, entry: string): string {
  const resolved = path.resolve(directory, entry);
  const relative = path.relative(directory, resolved);
  if (
    relative === '' ||
    path.isAbsolute(relative) ||
    relative.split(/[\\/]/).some((segment) => segment === '..') ||
    path.dirname(resolved) !== path.resolve(directory)
  ) {
    throw new InvalidSessionIdError(
      `the file name '${entry.slice(0, 80)}' would leave the store directory`,
    );
  }
  return resolved;
}
