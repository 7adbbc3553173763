/**
 * Checks and helpers every backend shares: session ids, batch shape, list pagination.
 */
import { isElidedChunk, type SessionEvent } from '../core/index.js';
import type { AppendOptions, ListOptions, SessionPage, SessionSummary } from './contract.js';
import { InvalidSessionIdError, InvalidStoreError } from './errors.js';

/** Longest session id, in UTF-16 code units. */
export const MAX_SESSION_ID_LENGTH = 200;

/** Throws `InvalidSessionIdError` unless `id` is a non-empty string of sane length. */
export function checkSessionId(id: unknown): asserts id is string {
  if (typeof id !== 'string' || id === '')
    throw new InvalidSessionIdError('expected a non-empty string');
  if (id.length > MAX_SESSION_ID_LENGTH) {
    throw new InvalidSessionIdError(
      `${id.length} characters exceed the limit of ${MAX_SESSION_ID_LENGTH}`,
    );
  }
}

/**
 * Throws unless the batch's seqs run contiguously from `expectedSeq` (the conflict check against
 * the stored next seq is each backend's, inside its write transaction), and unless it is free of
 * elided chunks: a stub stands for a body the store did not load, so writing one would replace
 * a chunk's data by its marker for good.
 */
export function checkBatch(
  id: string,
  events: readonly SessionEvent[],
  options: AppendOptions,
): void {
  const expected = options.expectedSeq;
  if (!Number.isSafeInteger(expected) || expected < 0) {
    throw new InvalidStoreError(
      `append to session '${id}': expectedSeq must be a non-negative integer, found ${String(expected)}`,
    );
  }
  for (let i = 0; i < events.length; i++) {
    const seq = (events[i] as SessionEvent).seq;
    if (seq !== expected + i) {
      throw new InvalidStoreError(
        `append to session '${id}': the batch must hold contiguous seqs from ${expected}; event ${i} has seq ${String(seq)}`,
      );
    }
    if (isElidedChunk(events[i] as SessionEvent)) {
      throw new InvalidStoreError(
        `append to session '${id}': event seq ${seq} is an elided assistant/chunk (a stub of a load without chunk bodies); expected the chunk itself`,
      );
    }
  }
}

const DEFAULT_PAGE = 100;

/** Sorts newest first (createdAt, then id) and cuts one page after `cursor`. */
export function pageOf(summaries: SessionSummary[], options: ListOptions): SessionPage {
  const limit = options.limit ?? DEFAULT_PAGE;
  if (!Number.isSafeInteger(limit) || limit < 1) {
    throw new InvalidStoreError(`list limit must be a positive integer, found ${String(limit)}`);
  }
  summaries.sort(newestFirst);
  let start = 0;
  if (options.cursor !== undefined) {
    const after = decodeCursor(options.cursor);
    start = summaries.findIndex((summary) => newestFirst(summary, after) > 0);
    if (start === -1) start = summaries.length;
  }
  const sessions = summaries.slice(start, start + limit);
  const last = sessions.at(-1);
  return start + limit < summaries.length && last !== undefined
    ? { sessions, nextCursor: encodeCursor(last) }
    : { sessions };
}

interface CursorKey {
  readonly header: { readonly createdAt: number; readonly id: string };
}

function newestFirst(a: CursorKey, b: CursorKey): number {
  if (a.header.createdAt !== b.header.createdAt) return b.header.createdAt - a.header.createdAt;
  return a.header.id < b.header.id ? -1 : a.header.id > b.header.id ? 1 : 0;
}

/** An opaque cursor: the sort key of the last session of a page. */
export function encodeCursor(summary: CursorKey): string {
  return JSON.stringify([summary.header.createdAt, summary.header.id]);
}

/** Reads a cursor of {@link encodeCursor}; `InvalidStoreError` for anything else. */
export function decodeCursor(cursor: string): CursorKey {
  try {
    const value: unknown = JSON.parse(cursor);
    if (Array.isArray(value) && typeof value[0] === 'number' && typeof value[1] === 'string') {
      return { header: { createdAt: value[0], id: value[1] } };
    }
  } catch {
    // Reported below.
  }
  throw new InvalidStoreError('list cursor is not one this store returned');
}
