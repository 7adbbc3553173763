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
  /** The messages of the session that match the search text, best first (none when not searching). */
  readonly hits?: readonly SessionListingHit[];
}

/** A message that matched the session list's search text. */
export interface SessionListingHit {
  readonly seq: number;
  readonly role: string;
  /** Words around the match, each matched word or phrase inside `«` and `»`. */
  readonly snippet: string;
}

/** The answer of `GET /api/sessions`. */
export interface SessionList {
  readonly sessions: readonly SessionListing[];
  /** Sessions the store found but cannot read, by id and reason. */
  readonly damaged: readonly { readonly id: string | null; readonly reason: string }[];
}

/** A session as the page loads it: an HTML export's data, or what a stream's snapshot lines carry. */
export interface SessionSnapshot {
  readonly kind: 'snapshot';
  readonly header: SessionHeader;
  readonly events: readonly SessionEvent[];
  /** Sessions forked from this one (empty in an export, which has no store to ask). */
  readonly children: readonly string[];
  /** An export's: what `palimpsest verify` found when the file was written. */
  readonly verify?: VerifyStatus;
  /** An export's: the tree of sessions around this one in the store it came from. */
  readonly tree?: SessionTree;
  /**
   * An export's: the digest of each answered call's request (`requestDigest`, as `palimpsest
   * request` prints it), by the seq of the call's `step/start`, computed when the file was
   * written. The requests themselves are not embedded: each holds its history again, so they
   * grow with the square of the session (the page rebuilds any of them from the log).
   */
  readonly requestDigests?: Readonly<Record<string, string>>;
}

/**
 * The answer of `GET /api/sessions/:id/verify`, and what an export embeds: the checks of
 * `palimpsest verify` (core's fold and invariants, a torn tail, request digests, and the hash
 * chain when the session has one), run by the server on the stored session.
 */
export interface VerifyStatus {
  readonly ok: boolean;
  readonly problems: readonly string[];
  readonly notes: readonly string[];
  /** Whether the store's hash chain was checked (the session has checkpoints) or there is none. */
  readonly integrity: 'checked' | 'none';
  /** How many events the stored log held when it was checked. */
  readonly events: number;
  /** When it was checked (epoch ms). */
  readonly checkedAt: number;
}

/** A session in the tree of sessions: forks under their parent, subagents under their caller. */
export interface SessionTreeNode {
  readonly id: string;
  /** How it hangs off its parent node (`null` for the root). */
  readonly link: 'fork' | 'subagent' | null;
  readonly createdAt: number;
  /** A fork's: how many events it copied from its parent. */
  readonly seedLength?: number;
  /** A subagent's: the parent's tool call that ran it. */
  readonly toolCallId?: string;
  readonly children: readonly SessionTreeNode[];
}

/** The answer of `GET /api/sessions/:id/tree`: the tree from the session's topmost ancestor. */
export interface SessionTree {
  readonly root: SessionTreeNode;
  /** An ancestor the store no longer holds, named by the root's header. */
  readonly missingParent?: string;
  /** Nodes left out past {@link TREE_NODE_LIMIT}. */
  readonly omitted: number;
}

/** The most sessions a tree carries. */
export const TREE_NODE_LIMIT = 500;

/**
 * The answer of `GET /api/sessions/:id/messages`: the session's surface-eligible events (the
 * messages, in log order), which the branch diff compares with another session's.
 */
export interface BranchMessages {
  readonly header: SessionHeader;
  readonly events: readonly SessionEvent[];
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

/** The forms `GET /api/sessions/:id/request` gives a call's request in. */
export const REQUEST_WIRES = ['palimpsest', 'openai', 'anthropic'] as const;

/**
 * The answer of `GET /api/sessions/:id/request?seq=N[&wire=W]`: the request the model call whose
 * step holds seq `N` received, rebuilt from the log by `requestAt`, as `palimpsest request`
 * prints it: palimpsest's canonical form, or the body of the provider's HTTP request.
 */
export interface CallRequest {
  readonly turn: number;
  readonly step: number;
  readonly stepStartSeq: number;
  readonly answerSeq?: number;
  /** The digest of the rebuilt request, and the one the writer recorded where it did. */
  readonly digest: string;
  readonly recordedDigest?: string;
  readonly wire: (typeof REQUEST_WIRES)[number];
  /** `palimpsest`: provider, model and call options; else the provider's JSON body. */
  readonly body: unknown;
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

/**
 * The first line of a session's event stream: the session without its events, which follow in
 * `parts` {@link SnapshotPart} lines. The stored log leaves in parts of about
 * {@link SNAPSHOT_PART_CHARS} characters rather than as one line so that no string grows with
 * the session: a JavaScript string holds at most about 2^29 characters, which one line of a large
 * session's log would pass, in the server's `JSON.stringify` as in the page. (The page parses the
 * parts in about the time it parsed one line; docs/viewer.md has the figures.)
 */
export interface SnapshotStart {
  readonly kind: 'snapshot-start';
  readonly header: SessionHeader;
  readonly children: readonly string[];
  /** How many {@link SnapshotPart} lines follow (0 for a session without events). */
  readonly parts: number;
  /** How many events they carry in all (seqs 0 to `eventCount - 1`). */
  readonly eventCount: number;
}

/** A part of the snapshot's events, in seq order, after its {@link SnapshotStart}. */
export interface SnapshotPart {
  readonly kind: 'snapshot-part';
  readonly events: readonly SessionEvent[];
}

/** How every snapshot part's line begins (its events follow the bracket). */
export const SNAPSHOT_PART_PREFIX: string = JSON.stringify({
  kind: 'snapshot-part',
  events: [],
} satisfies SnapshotPart).slice(0, -2);

/** The size a snapshot part reaches before the next begins: its text's length, in UTF-16 units. */
export const SNAPSHOT_PART_CHARS = 512 * 1024;

/**
 * One line of `GET /api/sessions/:id/events` (newline-delimited JSON): a snapshot start, its
 * parts, then the batches writers commit, and a failure if the stream fails after it began.
 */
export type StreamLine = SnapshotStart | SnapshotPart | SessionAppend | StreamFailure;

/** The element id of the JSON data an HTML export embeds. */
export const EMBEDDED_DATA_ID = 'palimpsest-session';

/** Performance marks the page sets, which the benchmark reads. */
export const MARKS = {
  /** The page's script has run and asks for the session's stream. */
  streamAsked: 'palimpsest:stream-asked',
  /** The stream's first line is in: the server has read the log and encoded the snapshot. */
  streamStarted: 'palimpsest:stream-started',
  /** The snapshot's last part is in (the parts before it were parsed as they came). */
  received: 'palimpsest:snapshot-received',
  /** A measure: the parse of one snapshot part, done as it arrived. */
  partParsed: 'palimpsest:part-parsed',
  /** Every part is parsed and their events are one log. */
  parsed: 'palimpsest:snapshot-parsed',
  seeded: 'palimpsest:session-seeded',
  firstRender: 'palimpsest:first-render',
  appendStart: 'palimpsest:append-start',
  appendEnd: 'palimpsest:append-end',
  append: 'palimpsest:append',
} as const;
