/**
 * The rules every backend shares, so that a backend brings only its I/O: session ids, batch
 * shape, stored headers, list pagination, torn-tail arguments, the closed state and error
 * wrapping of an operation, and the read-back of unfinished chunks in coalesced ranges.
 */
import { validateHeader } from '../../core/header.js';
import {
  InvalidArgumentError,
  isElidedChunk,
  type JsonValue,
  PalimpsestError,
  SESSION_FORMAT_VERSION,
  type SessionEvent,
  type SessionHeader,
} from '../../core/index.js';
import { USAGE_EVENT_TYPES, usageTotals, usageTotalsByModel } from '../../core/session-usage.js';
import {
  ClosedError,
  type CorruptionSite,
  CorruptLogError,
  FormatVersionError,
  InvalidSessionIdError,
  StorageError,
  StoreBusyError,
} from './errors.js';
import type {
  AppendOptions,
  ListOptions,
  ReplaceLogOptions,
  SessionLock,
  SessionPage,
  SessionStats,
  SessionSummary,
  TornTail,
} from './session-store.js';

/**
 * Longest session id, in UTF-8 bytes: the unit every backend stores (a SQLite or PostgreSQL text
 * value, an index entry) and the one a reader in any language can count the same way, where
 * UTF-16 code units are JavaScript's own. An ASCII id may have 200 characters.
 */
export const MAX_SESSION_ID_LENGTH = 200;

/**
 * Throws `InvalidSessionIdError` unless `id` can be stored and read back unchanged by every
 * backend, and shown safely: a non-empty string of well-formed Unicode (a lone surrogate has no
 * UTF-8 form, so SQLite would store bytes no load could match again), at most
 * {@link MAX_SESSION_ID_LENGTH} UTF-8 bytes, without NUL (PostgreSQL text cannot hold it) or any
 * other C0 or C1 control character or DEL (they would reach terminals and file listings raw).
 * Checked before anything is written, identically in every backend.
 */
export function checkSessionId(id: unknown): asserts id is string {
  if (typeof id !== 'string' || id === '')
    throw new InvalidSessionIdError('expected a non-empty string');
  let bytes = 0;
  for (let i = 0; i < id.length; i++) {
    const unit = id.charCodeAt(i);
    if (unit < 0x20 || (unit >= 0x7f && unit <= 0x9f)) {
      throw new InvalidSessionIdError(
        `expected no control characters, found U+${hex(unit)} at index ${i}`,
      );
    }
    if (unit >= 0xd800 && unit <= 0xdfff) {
      const next = id.charCodeAt(i + 1);
      if (unit > 0xdbff || !(next >= 0xdc00 && next <= 0xdfff)) {
        throw new InvalidSessionIdError(
          `expected well-formed Unicode, found a lone surrogate U+${hex(unit)} at index ${i}`,
        );
      }
      bytes += 4;
      i++;
    } else bytes += unit < 0x80 ? 1 : unit < 0x800 ? 2 : 3;
  }
  if (bytes > MAX_SESSION_ID_LENGTH) {
    throw new InvalidSessionIdError(
      `${bytes} UTF-8 bytes exceed the limit of ${MAX_SESSION_ID_LENGTH}`,
    );
  }
}

function hex(unit: number): string {
  return unit.toString(16).toUpperCase().padStart(4, '0');
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
    throw new InvalidArgumentError(
      `append to session '${id}': expectedSeq must be a non-negative integer, found ${String(expected)}`,
    );
  }
  for (let i = 0; i < events.length; i++) {
    const seq = (events[i] as SessionEvent).seq;
    if (seq !== expected + i) {
      throw new InvalidArgumentError(
        `append to session '${id}': the batch must hold contiguous seqs from ${expected}; event ${i} has seq ${String(seq)}`,
      );
    }
    if (isElidedChunk(events[i] as SessionEvent)) {
      throw new InvalidArgumentError(
        `append to session '${id}': event seq ${seq} is an elided assistant/chunk (a stub of a load without chunk bodies); expected the chunk itself`,
      );
    }
  }
}

/** Sessions per page of `list` when the caller sets no limit. */
export const DEFAULT_PAGE = 100;

/** The filters of a `list` call, checked (each absent when not asked for). */
export interface ListFilter {
  readonly createdAfter?: number;
  readonly createdBefore?: number;
  readonly parentSession?: string;
  readonly idPrefix?: string;
}

/** The page a `list` call asks for: its size, the sort key it starts after, its filters. */
export interface ListRequest {
  readonly limit: number;
  readonly after: CursorKey | undefined;
  readonly filter: ListFilter;
}

/**
 * Checks `list` options before anything is read; `InvalidArgumentError` for a bad limit, cursor
 * or filter.
 */
export function checkListOptions(options: ListOptions): ListRequest {
  const limit = options.limit ?? DEFAULT_PAGE;
  if (!Number.isSafeInteger(limit) || limit < 1) {
    throw new InvalidArgumentError(`list limit must be a positive integer, found ${String(limit)}`);
  }
  const filter: { -readonly [K in keyof ListFilter]: ListFilter[K] } = {};
  for (const key of ['createdAfter', 'createdBefore'] as const) {
    const value = options[key];
    if (value === undefined) continue;
    if (!Number.isSafeInteger(value)) {
      throw new InvalidArgumentError(
        `list ${key} must be an integer epoch ms, found ${String(value)}`,
      );
    }
    filter[key] = value;
  }
  for (const key of ['parentSession', 'idPrefix'] as const) {
    const value = options[key];
    if (value === undefined) continue;
    if (typeof value !== 'string' || (key === 'parentSession' && value === '')) {
      throw new InvalidArgumentError(
        `list ${key} must be a non-empty string, found ${String(value)}`,
      );
    }
    filter[key] = value;
  }
  return {
    limit,
    after: options.cursor === undefined ? undefined : decodeCursor(options.cursor),
    filter,
  };
}

/** Whether a session's header passes the filters of a `list` call. */
export function passesFilter(header: SessionHeader, filter: ListFilter): boolean {
  return (
    (filter.createdAfter === undefined || header.createdAt > filter.createdAfter) &&
    (filter.createdBefore === undefined || header.createdAt < filter.createdBefore) &&
    (filter.parentSession === undefined || header.parentSession === filter.parentSession) &&
    (filter.idPrefix === undefined || header.id.startsWith(filter.idPrefix))
  );
}

/** Filters, sorts newest first (createdAt, then id) and cuts one page after `cursor`. */
export function pageOf(all: SessionSummary[], options: ListOptions): SessionPage {
  const { limit, after, filter } = checkListOptions(options);
  const summaries = all.filter((summary) => passesFilter(summary.header, filter));
  summaries.sort(newestFirst);
  let start = 0;
  if (after !== undefined) {
    start = summaries.findIndex((summary) => newestFirst(summary, after) > 0);
    if (start === -1) start = summaries.length;
  }
  const sessions = summaries.slice(start, start + limit);
  const last = sessions.at(-1);
  return start + limit < summaries.length && last !== undefined
    ? { sessions, nextCursor: encodeCursor(last) }
    : { sessions };
}

/** The sort key of a session in `list` order. */
export interface CursorKey {
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

/** Reads a cursor of {@link encodeCursor}; `InvalidArgumentError` for anything else. */
export function decodeCursor(cursor: string): CursorKey {
  try {
    const value: unknown = JSON.parse(cursor);
    if (Array.isArray(value) && typeof value[0] === 'number' && typeof value[1] === 'string') {
      return { header: { createdAt: value[0], id: value[1] } };
    }
  } catch {
    // Reported below.
  }
  throw new InvalidArgumentError(
    `list cursor is not one this store returned, found ${typeof cursor === 'string' ? JSON.stringify(cursor.slice(0, 40)) : typeof cursor}`,
  );
}

/** Where a stored header lies, for its `CorruptLogError` (the reason is added). */
export type HeaderSite = Omit<CorruptionSite, 'reason'>;

/** Options of {@link decodeStoredHeader}. */
export interface StoredHeaderOptions {
  readonly where: HeaderSite;
  /** The session the header must name (the file or row it was read from). */
  readonly expectedId?: string | undefined;
  /** Prefixes the reason of a `CorruptLogError` (which session's header, when not obvious). */
  readonly subject?: string;
}

/**
 * Checks a stored header, parsed already. An integer `version` other than
 * {@link SESSION_FORMAT_VERSION} is a `FormatVersionError`, checked before anything else about
 * the header (a newer palimpsest may have changed every other field); anything else wrong,
 * a non-integer version or a header naming another session included, is a `CorruptLogError`:
 * no palimpsest writes such a header.
 */
export function decodeStoredHeader(value: unknown, options: StoredHeaderOptions): SessionHeader {
  const version = (value as { readonly version?: unknown } | null | undefined)?.version;
  if (
    typeof value === 'object' &&
    typeof version === 'number' &&
    Number.isInteger(version) &&
    version !== SESSION_FORMAT_VERSION
  ) {
    throw new FormatVersionError(options.where.file, version, SESSION_FORMAT_VERSION);
  }
  try {
    return validateHeader(value, options.expectedId);
  } catch (error) {
    const message = error instanceof Error ? error.message : 'invalid session header';
    throw new CorruptLogError(
      {
        ...options.where,
        reason: options.subject === undefined ? message : `${options.subject}: ${message}`,
      },
      { cause: error },
    );
  }
}

/**
 * Checks the arguments of `discardTornTail`, the same in every backend: the lock must be one of
 * this session, the tail one a load could have reported (its byte span, when present, too).
 */
export function checkTornTail(id: string, tail: TornTail, lock: SessionLock): void {
  if (lock.sessionId !== id) {
    throw new InvalidArgumentError(
      `the lock passed to discardTornTail is for session '${shortId(lock.sessionId)}', not '${shortId(id)}'`,
    );
  }
  const bytes = tail.bytes;
  if (
    !isCount(tail.committedSeq) ||
    (bytes !== undefined && (!isCount(bytes.offset) || !isCount(bytes.size)))
  ) {
    throw new InvalidArgumentError(
      `torn tail of session '${shortId(id)}': committedSeq, offset and size must be non-negative integers, found committedSeq ${String(tail.committedSeq)}${bytes === undefined ? '' : `, offset ${String(bytes.offset)}, size ${String(bytes.size)}`}`,
    );
  }
}

/**
 * Checks the arguments of `replaceLog`: the lock is this session's, `expectedLength` is a count
 * and the events are at least that many (a log is never shortened), run from seq 0 without a
 * gap and hold no stub.
 */
export function checkReplaceLog(
  id: string,
  events: readonly SessionEvent[],
  options: ReplaceLogOptions,
  lock: SessionLock,
): void {
  if (lock.sessionId !== id) {
    throw new InvalidArgumentError(
      `the lock passed to replaceLog is for session '${shortId(lock.sessionId)}', not '${shortId(id)}'`,
    );
  }
  if (!isCount(options.expectedLength)) {
    throw new InvalidArgumentError(
      `replace the log of session '${shortId(id)}': expectedLength must be a non-negative integer, found ${String(options.expectedLength)}`,
    );
  }
  if (events.length < options.expectedLength) {
    throw new InvalidArgumentError(
      `replace the log of session '${shortId(id)}': a log is never shortened, so expected at least ${options.expectedLength} events, found ${events.length}`,
    );
  }
  checkBatch(id, events, { expectedSeq: 0 });
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

/** A session id cut for a message. */
export function shortId(id: string): string {
  return id.length > 80 ? `${id.slice(0, 79)}…` : id;
}

/** Throws `ClosedError` once the store at `location` is closed. */
export function assertOpen(closed: boolean, location: string): void {
  if (closed) throw new ClosedError(`store ${location}`);
}

/**
 * The error an operation rejects with: palimpsest's own errors pass through (recognized by
 * their marker, so also those of another copy of the package), anything else (a driver's, the
 * file system's, a hook's) becomes a `StorageError` with it as the cause.
 */
export function asStorageError(action: string, location: string, error: unknown): Error {
  if (PalimpsestError.isInstance(error)) return error;
  return new StorageError(`${action} in ${location} failed`, { cause: error });
}

/** A run of positions read back together: indexes `first..last` (inclusive) of the input. */
export interface CoalescedRun {
  readonly first: number;
  readonly last: number;
}

/**
 * Groups sorted positions (rows, byte offsets) into runs that one read covers: a position joins
 * the run when it starts at most `maxGap` after the run's end and the run then spans at most
 * `maxSpan`. What lies between the positions of a run is read and dropped, so a log whose
 * unfinished chunks are many costs a few reads, not one per chunk.
 *
 * @param starts where each item begins, ascending.
 * @param ends where each item ends (default: items of size zero, `starts`).
 */
export function coalesce(
  starts: readonly number[],
  maxGap: number,
  ends: readonly number[] = starts,
  maxSpan = Number.POSITIVE_INFINITY,
): CoalescedRun[] {
  const runs: CoalescedRun[] = [];
  let first = 0;
  while (first < starts.length) {
    const runStart = starts[first] as number;
    let runEnd = ends[first] as number;
    let last = first;
    while (last + 1 < starts.length) {
      const start = starts[last + 1] as number;
      const end = ends[last + 1] as number;
      if (start - runEnd > maxGap || end - runStart > maxSpan) break;
      runEnd = end;
      last++;
    }
    runs.push({ first, last });
    first = last + 1;
  }
  return runs;
}

/**
 * How long a write keeps retrying while other writers hold the store, by default, ms. Long
 * enough for several writers on one database to take turns under load; short enough that a
 * database held for good (a stuck transaction) is reported rather than waited on forever.
 */
export const DEFAULT_BUSY_RETRY_MS = 30_000;
/** First pause between attempts, ms; doubled up to {@link MAX_BUSY_PAUSE_MS}, with jitter. */
const FIRST_BUSY_PAUSE_MS = 5;
const MAX_BUSY_PAUSE_MS = 250;

/** Options of {@link retryWhileBusy}. */
export interface BusyRetry {
  /** Whether a failure is contention (another writer holds the store), which may be retried. */
  readonly isBusy: (error: unknown) => boolean;
  /** Total bound on the wait, attempts included, ms. */
  readonly retryMs: number;
  readonly location: string;
  readonly action: string;
}

/**
 * Runs a write, retrying it while it fails on contention, with jittered exponential pauses (so
 * writers that collided do not collide again in step), until it succeeds, fails otherwise, or
 * the bound passes: then a `StoreBusyError` (retryable) with the last failure as its cause. Each
 * attempt must be atomic (a transaction the failure rolled back), so a retry never doubles one.
 */
export async function retryWhileBusy<T>(options: BusyRetry, attempt: () => T): Promise<T> {
  const start = Date.now();
  let pause = FIRST_BUSY_PAUSE_MS;
  for (;;) {
    try {
      return attempt();
    } catch (error) {
      if (!options.isBusy(error)) throw error;
      const waited = Date.now() - start;
      if (waited >= options.retryMs) {
        throw new StoreBusyError(options.location, options.action, waited, { cause: error });
      }
      const wait = Math.min(pause * (0.5 + Math.random()), options.retryMs - waited);
      await new Promise((resolve) => setTimeout(resolve, wait));
      pause = Math.min(pause * 2, MAX_BUSY_PAUSE_MS);
    }
  }
}

/** Whether an error is a retryable palimpsest error (`StoreBusyError` and the like). */
export function isRetryable(error: unknown): boolean {
  return PalimpsestError.isInstance(error) && (error as { retryable?: unknown }).retryable === true;
}

/**
 * The event types {@link SessionStats} is computed from; a store's `summarize` decodes events of
 * these types only (the count and the last time come from every event's envelope).
 */
export const STATS_EVENT_TYPES: ReadonlySet<string> = new Set(['turn/start', ...USAGE_EVENT_TYPES]);

/** One decoded event of a {@link STATS_EVENT_TYPES} type. */
export interface StatsEvent {
  readonly type: string;
  readonly data: JsonValue;
}

/**
 * The stats of a session from its envelope counts and its decoded events of
 * {@link STATS_EVENT_TYPES}, in log order: the same rule in every backend.
 */
export function statsOf(
  header: SessionHeader,
  eventCount: number,
  lastEventTime: number | undefined,
  events: readonly StatsEvent[],
): SessionStats {
  let lastTurn = 0;
  for (const event of events) {
    if (event.type !== 'turn/start') continue;
    const turn = (event.data as { turn?: unknown } | null)?.turn;
    lastTurn = typeof turn === 'number' ? turn : 0;
  }
  return {
    header,
    eventCount,
    ...(lastEventTime === undefined ? {} : { lastEventTime }),
    lastTurn,
    usage: usageTotals(events),
    usageByModel: usageTotalsByModel(events),
  };
}

/** Where a backend's rows come from, for the messages of its row checks. */
export interface RowSite {
  /** The store's location, reported as the damaged file. */
  readonly file: string;
  readonly id: string;
}

/**
 * The rule every backend's load applies to its rows: seqs `0..recordedLength-1`, each once, in
 * order. Throws a `CorruptLogError` at the first row that breaks it, where seq `expected` is due.
 */
export function checkRowPosition(
  site: RowSite,
  seq: number,
  expected: number,
  recordedLength: number,
): void {
  if (seq !== expected) {
    throw new CorruptLogError({
      file: site.file,
      row: expected,
      reason:
        seq > expected
          ? `session '${site.id}' has no event with seq ${expected} (the next row has seq ${seq})`
          : `session '${site.id}' has an event row with seq ${seq} out of order`,
    });
  }
  if (expected >= recordedLength) {
    throw new CorruptLogError({
      file: site.file,
      row: expected,
      reason: `session '${site.id}' has an event row beyond its recorded length of ${recordedLength}`,
    });
  }
}

/** Throws unless the rows reached the session's recorded length. */
export function checkRowsComplete(site: RowSite, length: number, recordedLength: number): void {
  if (length < recordedLength) {
    throw new CorruptLogError({
      file: site.file,
      row: length,
      reason: `session '${site.id}' records ${recordedLength} events but the rows end at seq ${length}`,
    });
  }
}
