/**
 * What the loopback server sends the page, and what an HTML export embeds: plain JSON, no
 * `node:` or DOM types, so both sides of the viewer import it.
 */
import type { SessionEvent, SessionHeader } from '../core/index.js';

/** One session of the store's list, as the session list shows it. */
export interface SessionListing {
  readonly id: string;
  readonly createdAt: number;
  readonly lastActivity: number;
  readonly events: number;
  readonly turns: number;
  readonly parent: string | null;
}

/** The answer of `GET /api/sessions`. */
export interface SessionList {
  readonly sessions: readonly SessionListing[];
  /** Sessions the store found but cannot read, by id and reason. */
  readonly damaged: readonly { readonly id: string | null; readonly reason: string }[];
}

/** The first line of a session's event stream, and the data of an HTML export. */
export interface SessionSnapshot {
  readonly kind: 'snapshot';
  readonly header: SessionHeader;
  readonly events: readonly SessionEvent[];
  /** Sessions forked from this one (empty in an export, which has no store to ask). */
  readonly children: readonly string[];
}

/**
 * The answer of `GET /api/sessions/:id/chunks`: the session's stream chunks in full. The event
 * stream's snapshot carries finished chunks as elided stubs (`elidedChunkData`), which the model
 * view, the transcript and time travel never read; the page asks for their bodies once its
 * first render is done, for the raw log and the detail pane.
 */
export interface ChunkBodies {
  readonly chunks: readonly SessionEvent[];
}

/** Each later line of the stream: a batch a writer committed. */
export interface SessionAppend {
  readonly kind: 'events';
  readonly events: readonly SessionEvent[];
}

/** The last line of a stream that failed after it began (the session was deleted, damaged...). */
export interface StreamFailure {
  readonly kind: 'error';
  readonly code: string;
  readonly message: string;
}

/** One line of `GET /api/sessions/:id/events` (newline-delimited JSON). */
export type StreamLine = SessionSnapshot | SessionAppend | StreamFailure;

/** The element id of the JSON data an HTML export embeds. */
export const EMBEDDED_DATA_ID = 'palimpsest-session';

/** Performance marks the page sets, which the benchmark reads. */
export const MARKS = {
  received: 'palimpsest:snapshot-received',
  parsed: 'palimpsest:snapshot-parsed',
  seeded: 'palimpsest:session-seeded',
  firstRender: 'palimpsest:first-render',
  appendStart: 'palimpsest:append-start',
  appendEnd: 'palimpsest:append-end',
  append: 'palimpsest:append',
} as const;
