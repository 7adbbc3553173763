/**
 * What several tools share: the session argument, page cursors, times, and one line per surface
 * message.
 */
import { z } from 'zod';
import {
  deriveEventMessage,
  formatMessage,
  type Message,
  type Session,
} from '../../../core/index.js';
import { replaySurface } from '../../../core/surface.js';
import { McpAdapterError } from '../errors.js';
import { clip, fitLines } from '../results.js';

/** The `session` argument of the tools that read one session. */
export const sessionArgument = z.string().min(1).describe('a session id from list_sessions');

/** The optional `maxChars` argument: the caller may ask for less text than the server's cap. */
export const maxCharsArgument = z
  .number()
  .int()
  .min(200)
  .optional()
  .describe('characters of text at most (the server caps it too)');

/** An epoch-ms time as ISO text. */
export function time(epochMs: number): string {
  return new Date(epochMs).toISOString();
}

/**
 * The start index a cursor names; a cursor this server did not issue for a list this long is
 * refused.
 */
export function pageCursor(cursor: string | undefined, length: number): number {
  if (cursor === undefined) return 0;
  const start = /^\d{1,9}$/.test(cursor) ? Number(cursor) : Number.NaN;
  if (!(start >= 0 && start <= length)) {
    throw new McpAdapterError(
      'INVALID_ARGUMENTS',
      `expected a cursor from a previous page (0..${length}), found ${JSON.stringify(cursor.slice(0, 40))}`,
    );
  }
  return start;
}

/** One message on a surface and the event it comes from. */
export interface SurfaceEntry {
  readonly seq: number;
  readonly message: Message;
}

/** The surface now, or right after event `at` was appended: each message with its event's seq. */
export function surfaceEntries(session: Session, at?: number): SurfaceEntry[] {
  const seqs = at === undefined ? session.surface.seqs : replaySurface(session.events, at);
  const entries: SurfaceEntry[] = [];
  for (const seq of seqs) {
    const event = session.event(seq);
    const message = event === undefined ? null : deriveEventMessage(event);
    if (message !== null) entries.push({ seq, message });
  }
  return entries;
}

/** A surface message as the structured content carries it. */
export const surfaceMessage = z.object({
  seq: z.number().int().describe('the event it comes from (ask why about it)'),
  role: z.string(),
  text: z.string(),
});

/** A message's text for a model to read, each block written out, cut when long. */
export function messageText(message: Message): string {
  return clip(formatMessage(message, { callIds: true }));
}

/** One surface message as a text line. */
export function surfaceLine(entry: { seq: number; role: string; text: string }): string {
  return `#${entry.seq} ${entry.role}: ${entry.text}`;
}

/** The maximum characters of text of one answer: the caller's, if lower than the server's. */
export function charsFor(asked: number | undefined, server: number): number {
  return asked === undefined ? server : Math.min(asked, server);
}

/** Checks that `seq` is an event of `session`. */
export function requireEvent(session: Session, seq: number): void {
  if (session.event(seq) === undefined) throw eventNotFound(session, seq);
}

/** The error for a seq that is not an event of `session`. */
export function eventNotFound(session: Session, seq: number): McpAdapterError {
  return new McpAdapterError(
    'EVENT_NOT_FOUND',
    `expected the seq of an event of session '${session.id}' (0..${session.seq - 1}), found ${seq}`,
  );
}

/** One page of a list: the entries that fit, their lines, and where the next page starts. */
export interface Page<E> {
  /** 1-based position of the first entry, for headings. */
  readonly first: number;
  readonly last: number;
  readonly entries: E[];
  readonly lines: readonly string[];
  /** The cursor of the next page, when there is one. */
  readonly next?: string;
}

/**
 * The page of `items` that starts at `cursor`: at most `limit` entries, as many as fit in
 * `maxChars` of text. Only the page's items are turned into entries.
 */
export function pageOf<T, E>(
  items: readonly T[],
  request: {
    readonly cursor: string | undefined;
    readonly limit: number;
    readonly maxChars: number;
  },
  entryOf: (item: T) => E,
  lineOf: (entry: E) => string,
): Page<E> {
  const start = pageCursor(request.cursor, items.length);
  const range = items.slice(start, start + request.limit).map(entryOf);
  const { taken, lines } = fitLines(range, lineOf, request.maxChars);
  const end = start + taken.length;
  return {
    first: start + 1,
    last: end,
    entries: [...taken],
    lines,
    ...(end < items.length ? { next: String(end) } : {}),
  };
}

/** `(more: from "N")` when a page has a next one. */
export function moreNote(page: Page<unknown>, argument: string): string {
  return page.next === undefined ? '' : ` (more: ${argument} "${page.next}")`;
}
