/**
 * `ClaudeTranscriptStore`: the Claude Agent SDK's `SessionStore` over any palimpsest store. Each
 * transcript (a main session or a subagent's) is one palimpsest session holding two layers:
 * every entry the SDK mirrors, verbatim, as a `claude-code/entry` event (what `load` gives back),
 * and after each batch's entries the conversation events `palimpsest import` makes of the same
 * transcript (what `show`, `verify`, the viewer, forks and exports read).
 */
import type {
  SessionStore as SdkSessionStore,
  SessionKey,
  SessionStoreEntry,
} from '@anthropic-ai/claude-agent-sdk';
import {
  DEFAULT_JSON_LIMITS,
  isJsonValue,
  type JsonObject,
  SESSION_FORMAT_VERSION,
  Session,
  type SessionHeader,
} from '../../core/index.js';
import { subagentLink } from '../../import/index.js';
import {
  AlreadyExistsError,
  ConflictError,
  type LoadedSession,
  NotFoundError,
  type SessionStore,
  type SessionSummary,
} from '../../store/index.js';
import { ClaudeSessionStoreError } from './errors.js';
import { entriesOf, MirrorState, timeOf } from './mirror-state.js';
import {
  type ClaudeSessionKey,
  ID_PREFIX,
  KEY_FIELD,
  keyMetadata,
  keyOf,
  sessionIdOf,
  subkeyPrefixOf,
} from './session-key.js';

/** Options of {@link ClaudeTranscriptStore}. */
export interface ClaudeTranscriptStoreOptions {
  /** The clock for times the entries do not carry (default `Date.now`). */
  readonly now?: () => number;
}

/** How many transcripts' states a store keeps between appends. */
const REMEMBERED_SESSIONS = 32;

/** How often a batch is tried again after another writer appended first. */
const CONFLICT_RETRIES = 5;

/**
 * The Claude Agent SDK's `SessionStore` over a palimpsest store: pass it as `sessionStore` to
 * `query()` and to the SDK's session functions, and every Claude Code transcript is mirrored into
 * the store as a palimpsest session.
 *
 * - `append` keeps each entry verbatim and treats `uuid` as an idempotency key (a replayed entry
 *   is not stored twice); after the entries it writes the conversation events `palimpsest
 *   import` makes of the transcript, turn by turn, in the same atomic batch.
 * - `load` returns the entries in the order they were appended, deep-equal to them.
 * - `listSessions`, `listSubkeys` and `delete` read and remove sessions by their key (deleting a
 *   main transcript deletes its subagents' too).
 *
 * With Claude Code: `query({ prompt, options: { sessionStore: new ClaudeTranscriptStore(store) } })`.
 * Here, the calls the SDK makes while it runs:
 *
 * @example
 * ```ts
 * import { ClaudeTranscriptStore } from 'palimpsest/claude-agent-sdk';
 * import { openStore } from 'palimpsest/store';
 *
 * const store = await openStore('memory:');
 * const sessionStore = new ClaudeTranscriptStore(store);
 * const key = { projectKey: '-work-app', sessionId: '7d0c9a52-4b1e-4f7a-9c3d-2e8f6a1b5c40' };
 * await sessionStore.append(key, [
 *   { type: 'user', uuid: 'u1', parentUuid: null, timestamp: '2026-12-06T10:00:00.000Z',
 *     message: { role: 'user', content: 'Hello' } },
 *   { type: 'assistant', uuid: 'a1', parentUuid: 'u1', timestamp: '2026-12-06T10:00:02.000Z',
 *     message: { id: 'msg_1', role: 'assistant', model: 'claude-sonnet-4-5',
 *       content: [{ type: 'text', text: 'Hi!' }], stop_reason: 'end_turn' } },
 * ]);
 * console.log((await sessionStore.load(key))?.length); // 2: the entries, as appended
 * const session = await store.load('claude-code-7d0c9a52-4b1e-4f7a-9c3d-2e8f6a1b5c40');
 * console.log(session.events.filter((event) => event.type === 'assistant/message').length); // 1
 * await store.close();
 * ```
 */
export class ClaudeTranscriptStore implements SdkSessionStore {
  /** The palimpsest store the transcripts are kept in. */
  readonly store: SessionStore;
  readonly #now: () => number;
  /** The transcripts this store wrote last, by id (a cache of their logs). */
  readonly #states = new Map<string, MirrorState>();

  constructor(store: SessionStore, options: ClaudeTranscriptStoreOptions = {}) {
    this.store = store;
    this.#now = options.now ?? Date.now;
  }

  /**
   * Mirrors a batch of transcript entries, atomically with the conversation events they
   * complete. Entries whose `uuid` the session already holds are left out.
   *
   * @throws ClaudeSessionStoreError `INVALID_KEY`, `INVALID_ENTRY`, `PROJECT_MISMATCH` or
   *   `NOT_A_MIRROR`; the store's own errors otherwise. Nothing is written when it throws.
   */
  async append(key: SessionKey, entries: SessionStoreEntry[]): Promise<void> {
    const id = sessionIdOf(key);
    const batch = entries.map(checkEntry);
    if (batch.length === 0) return;
    for (let attempt = 0; ; attempt++) {
      try {
        await this.#appendOnce(key, id, batch);
        return;
      } catch (error) {
        const raced = ConflictError.isInstance(error) || AlreadyExistsError.isInstance(error);
        if (!raced || attempt >= CONFLICT_RETRIES) throw error;
      }
    }
  }

  /**
   * The entries appended under `key`, in order, or `null` for a key never written.
   *
   * @throws ClaudeSessionStoreError `INVALID_KEY`; the store's errors for a damaged session.
   */
  async load(key: SessionKey): Promise<SessionStoreEntry[] | null> {
    const loaded = await this.#loaded(key, sessionIdOf(key));
    if (loaded === undefined) return null;
    return entriesOf(loaded.events) as SessionStoreEntry[];
  }

  /** The main transcripts of a project, with the time each was last written (epoch ms). */
  async listSessions(projectKey: string): Promise<Array<{ sessionId: string; mtime: number }>> {
    const found: Array<{ sessionId: string; mtime: number }> = [];
    for (const summary of await this.#mirrored(ID_PREFIX)) {
      const key = keyOf(summary.header);
      if (key === undefined || key.projectKey !== projectKey || key.subpath !== undefined) continue;
      found.push({ sessionId: key.sessionId, mtime: Math.floor(mtimeOf(summary)) });
    }
    return found;
  }

  /** The subpaths of a session's subagent transcripts (`subagents/agent-<id>`). */
  async listSubkeys(key: { projectKey: string; sessionId: string }): Promise<string[]> {
    const subpaths: string[] = [];
    for (const summary of await this.#mirrored(subkeyPrefixOf(key))) {
      const stored = keyOf(summary.header);
      if (stored?.projectKey !== key.projectKey || stored.subpath === undefined) continue;
      subpaths.push(stored.subpath);
    }
    return subpaths;
  }

  /**
   * Deletes a transcript; a main transcript's subagent transcripts go with it. A key never
   * written is left as it is.
   */
  async delete(key: SessionKey): Promise<void> {
    const id = sessionIdOf(key);
    if (key.subpath === undefined) {
      for (const subpath of await this.listSubkeys(key)) {
        await this.#deleteIfAny(sessionIdOf({ ...key, subpath }));
      }
    }
    if ((await this.#loaded(key, id)) !== undefined) await this.#deleteIfAny(id);
  }

  async #appendOnce(
    key: ClaudeSessionKey,
    id: string,
    batch: readonly JsonObject[],
  ): Promise<void> {
    let state = this.#states.get(id);
    let header: SessionHeader | undefined;
    // The id holds no project: a key of another project goes to the store, which refuses it.
    if (state?.projectKey !== key.projectKey) {
      const loaded = await this.#loaded(key, id);
      if (loaded === undefined) header = this.#header(key, id, batch);
      state = MirrorState.of(
        key.projectKey,
        fileOf(key),
        key.subpath !== undefined,
        loaded?.events ?? [],
      );
    }
    const fresh = state.fresh(batch);
    if (fresh.length === 0) return;
    const events = state.batch(fresh, this.#now);
    // Forgotten until the append succeeds: a failed or raced append leaves the state unknown.
    this.#states.delete(id);
    if (header !== undefined) {
      // Checked before the session exists, so that a batch the store would refuse (an entry over
      // its limits) leaves no empty session behind.
      Session.create({ header, seed: events });
      await this.store.create(header);
    }
    await this.store.append(id, events, { expectedSeq: state.nextSeq });
    state.wrote(events);
    this.#remember(id, state);
  }

  #remember(id: string, state: MirrorState): void {
    this.#states.set(id, state);
    // The oldest transcript goes first: a process mirrors a few sessions at a time.
    const oldest = this.#states.keys().next().value;
    if (this.#states.size > REMEMBERED_SESSIONS && oldest !== undefined)
      this.#states.delete(oldest);
  }

  #header(key: ClaudeSessionKey, id: string, batch: readonly JsonObject[]): SessionHeader {
    const first = batch.map((entry) => timeOf(entry.timestamp)).find((time) => time !== undefined);
    const subagentOf = key.subpath === undefined ? undefined : subagentLink(batch, key.sessionId);
    return {
      version: SESSION_FORMAT_VERSION,
      id,
      createdAt: first ?? this.#now(),
      metadata: {
        [KEY_FIELD]: keyMetadata(key),
        ...(subagentOf === undefined ? {} : { subagentOf }),
      },
    };
  }

  /** The session this store wrote under `key`, or `undefined` when there is none. */
  async #loaded(key: ClaudeSessionKey, id: string): Promise<LoadedSession | undefined> {
    let loaded: LoadedSession;
    try {
      loaded = await this.store.load(id);
    } catch (error) {
      if (NotFoundError.isInstance(error)) return undefined;
      throw error;
    }
    const stored = keyOf(loaded.header);
    if (stored === undefined) {
      throw new ClaudeSessionStoreError(
        'NOT_A_MIRROR',
        `session '${id}' is in the store but was not written by a Claude transcript store (an import of the transcript file?); delete it or use another store`,
      );
    }
    if (stored.projectKey !== key.projectKey) {
      throw new ClaudeSessionStoreError(
        'PROJECT_MISMATCH',
        `session '${id}' is stored under project ${JSON.stringify(stored.projectKey)}, not ${JSON.stringify(key.projectKey)}`,
      );
    }
    return loaded;
  }

  async #mirrored(idPrefix: string): Promise<SessionSummary[]> {
    const found: SessionSummary[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.store.list({ idPrefix, ...(cursor === undefined ? {} : { cursor }) });
      found.push(...page.sessions);
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    return found;
  }

  async #deleteIfAny(id: string): Promise<void> {
    this.#states.delete(id);
    try {
      await this.store.delete(id);
    } catch (error) {
      if (!NotFoundError.isInstance(error)) throw error;
    }
  }
}

function checkEntry(entry: unknown, index: number): JsonObject {
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
    throw invalidEntry(
      index,
      `expected an object, found ${entry === null ? 'null' : Array.isArray(entry) ? 'an array' : typeof entry}`,
    );
  }
  if (typeof (entry as { type?: unknown }).type !== 'string') {
    throw invalidEntry(index, 'expected a string type');
  }
  if (!isJsonValue(entry)) {
    throw invalidEntry(
      index,
      `expected JSON values within the data limits (no undefined, NaN, functions or class instances; nesting at most ${DEFAULT_JSON_LIMITS.maxDepth} deep, at most ${DEFAULT_JSON_LIMITS.maxNodes} values)`,
    );
  }
  return entry as JsonObject;
}

function invalidEntry(index: number, reason: string): ClaudeSessionStoreError {
  return new ClaudeSessionStoreError(
    'INVALID_ENTRY',
    `invalid transcript entry at index ${index}: ${reason}`,
  );
}

function mtimeOf(summary: SessionSummary): number {
  return summary.updatedAt ?? summary.header.createdAt;
}

/** The file Claude Code writes the transcript to, named in the events' `origin`. */
function fileOf(key: ClaudeSessionKey): string {
  const name = key.subpath === undefined ? key.sessionId : key.subpath.split('/').pop();
  return `${name}.jsonl`;
}
