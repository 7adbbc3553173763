/**
 * A search's options and its hits, the same for every backend.
 */
import { InvalidArgumentError } from '../../core/index.js';

/** Options of `searchSessions`. */
export interface SearchOptions {
  /** Only messages at or after this time (epoch ms). */
  readonly since?: number;
  /** Only messages before this time (epoch ms). */
  readonly until?: number;
  /** Only messages written under this model (the message's own, or the request header's). */
  readonly model?: string;
  /** Only messages that call this tool or hold its result. */
  readonly tool?: string;
  /** Only sessions whose header names this project or working directory. */
  readonly project?: string;
  /** Search forks too (their own events; what they copied is found in the parent). */
  readonly includeForks?: boolean;
  /** Search subagents' sessions too (header `metadata.subagentOf`). */
  readonly includeChildren?: boolean;
  /** Only these sessions (an allow-list). */
  readonly sessions?: readonly string[];
  /** At most this many hits (default 20, at most 1000). */
  readonly limit?: number;
  /**
   * Bring the index up to date before the query (default `true`). `false` asks the index as it
   * stands, for a burst of searches right after one that caught up; a store without an index
   * is scanned either way.
   */
  readonly catchUp?: boolean;
}

/** One message that matched, best first. */
export interface SearchHit {
  readonly session: string;
  readonly seq: number;
  readonly type: string;
  readonly role: string;
  readonly time: number;
  /** The model in effect; `''` when the session named none. */
  readonly model: string;
  /** The tools the message calls or answers, space-separated. */
  readonly tools: string;
  /** A few words around the best match, each matched word inside `«` and `»`. */
  readonly snippet: string;
  /** Higher is better; comparable within one search only. */
  readonly score: number;
}

/** The default number of hits. */
export const DEFAULT_LIMIT = 20;
/** The most hits one search returns. */
export const MAX_LIMIT = 1000;

/** The marks a snippet puts around a matched word. */
export const MATCH_OPEN = '«';
export const MATCH_CLOSE = '»';

/**
 * Checks a search's options and fills the limit in.
 *
 * @throws InvalidArgumentError naming the option and what it held.
 */
export function checkSearchOptions(options: SearchOptions): SearchOptions & { limit: number } {
  const limit = options.limit ?? DEFAULT_LIMIT;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) {
    throw new InvalidArgumentError(
      `expected limit as an integer from 1 to ${MAX_LIMIT}, found ${String(options.limit)}`,
    );
  }
  for (const key of ['since', 'until'] as const) {
    const value = options[key];
    if (value !== undefined && !Number.isFinite(value)) {
      throw new InvalidArgumentError(`expected ${key} as epoch ms, found ${String(value)}`);
    }
  }
  return { ...options, limit };
}

/** Whether a session's kind is searched under these options. */
export function kindSearched(kind: string, options: SearchOptions): boolean {
  if (kind === 'fork') return options.includeForks === true;
  if (kind === 'child') return options.includeChildren === true;
  return true;
}
