/**
 * What an MCP server may show: one store, narrowed to a project directory and an allow-list of
 * session ids. A session out of scope is answered exactly like one that does not exist, so a
 * client cannot learn which ids the store holds.
 */
import { isAbsolute, resolve, sep } from 'node:path';
import type { Session, SessionHeader } from '../../core/index.js';
import {
  inspectSession,
  NotFoundError,
  type SearchOptions,
  type SearchResult,
  type SessionStore,
  type SessionSummary,
  searchSessions,
} from '../../store/index.js';
import { everySession } from '../../store/session/list-all.js';
import { McpAdapterError } from './errors.js';

/** Which sessions of the store an MCP server shows. */
export interface McpScope {
  /**
   * An absolute directory: only sessions whose header names a working directory at or under it
   * (`metadata.cwd`, `metadata.project`, or the `cwd` an imported session came from).
   */
  readonly project?: string;
  /** Only these session ids. */
  readonly sessions?: readonly string[];
}

/** The sessions of one store that a scope lets through: listed and loaded read-only. */
export class ScopedSessions {
  readonly #store: SessionStore;
  readonly #project: string | undefined;
  readonly #allowed: ReadonlySet<string> | undefined;

  constructor(store: SessionStore, scope: McpScope = {}) {
    this.#store = store;
    this.#project = scope.project === undefined ? undefined : projectRoot(scope.project);
    if (scope.sessions !== undefined && scope.sessions.length === 0) {
      throw new McpAdapterError(
        'INVALID_SCOPE',
        'expected at least one session id in the scope, found an empty list (omit it to show every session)',
      );
    }
    this.#allowed = scope.sessions === undefined ? undefined : new Set(scope.sessions);
  }

  /** Whether a session with this header is in scope. */
  includes(header: SessionHeader): boolean {
    if (this.#allowed !== undefined && !this.#allowed.has(header.id)) return false;
    if (this.#project === undefined) return true;
    const directory = workingDirectory(header);
    if (directory === undefined) return false;
    const normal = resolve(directory);
    return normal === this.#project || normal.startsWith(`${this.#project}${sep}`);
  }

  /** The sessions in scope, newest first (headers only: no log is read). */
  async list(): Promise<SessionSummary[]> {
    const { sessions } = await everySession(this.#store);
    return sessions.filter((summary) => this.includes(summary.header));
  }

  /**
   * The messages in scope that match `query` (see `searchSessions`): the search is held to the
   * sessions {@link ScopedSessions.list} gives, so a hit never names a session out of scope.
   */
  async search(
    query: string,
    options: Omit<SearchOptions, 'sessions' | 'project'>,
  ): Promise<SearchResult> {
    // A server that shows every session has nothing to hold the search to: no listing first.
    if (this.#allowed === undefined && this.#project === undefined) {
      return searchSessions(this.#store, query, options);
    }
    const inScope = (await this.list()).map((summary) => summary.header.id);
    if (inScope.length === 0) return { hits: [], method: 'scan', indexedSessions: 0 };
    return searchSessions(this.#store, query, { ...options, sessions: inScope });
  }

  /**
   * A session in scope, loaded read-only (a turn a crash left open is closed in memory only).
   *
   * @throws McpAdapterError `SESSION_NOT_FOUND` when it does not exist or is out of scope.
   */
  async load(id: string): Promise<Session> {
    if (this.#allowed !== undefined && !this.#allowed.has(id)) throw notFound(id);
    let session: Session;
    try {
      session = await inspectSession(this.#store, id);
    } catch (error) {
      if (NotFoundError.isInstance(error)) throw notFound(id);
      throw error;
    }
    if (!this.includes(session.header)) throw notFound(id);
    return session;
  }
}

function notFound(id: string): McpAdapterError {
  const shown = id.length > 80 ? `${id.slice(0, 80)}…` : id;
  return new McpAdapterError(
    'SESSION_NOT_FOUND',
    `expected the id of a session this server shows, found '${shown}' (list_sessions lists them)`,
  );
}

function projectRoot(directory: string): string {
  if (typeof directory !== 'string' || !isAbsolute(directory)) {
    throw new McpAdapterError(
      'INVALID_SCOPE',
      `expected the project as an absolute directory, found ${JSON.stringify(directory)}`,
    );
  }
  return resolve(directory);
}

/** Where a session was recorded, as its header says: set by the application or by the importer. */
export function workingDirectory(header: SessionHeader): string | undefined {
  const metadata = header.metadata;
  if (metadata === undefined) return undefined;
  const imported = metadata.imported;
  const candidates = [
    metadata.cwd,
    metadata.project,
    typeof imported === 'object' && imported !== null && !Array.isArray(imported)
      ? (imported as { readonly cwd?: unknown }).cwd
      : undefined,
  ];
  return candidates.find(
    (value): value is string => typeof value === 'string' && isAbsolute(value),
  );
}
