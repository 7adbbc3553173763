/**
 * `importSessions`: reads source files and writes their sessions to a store, idempotently. A
 * session already imported is compared with what the source reads as now: equal, nothing is
 * written; a prefix of it (the source grew), only the new events are appended; anything else is
 * refused as `SOURCE_DIVERGED`. Every session of a file is read, validated and compared before the
 * first write, and each session's new events go to the store as one batch, which every backend
 * commits atomically.
 *
 * A file its harness wrote as a fork of another session is linked as a palimpsest fork of that
 * session's import (`link.ts`), whichever order the files come in: within a run, it waits until
 * the parent's file is imported; a parent already in the store serves as well.
 */
import { resolve } from 'node:path';
import { jsonEqual, Session, SessionValidationError } from '../core/index.js';
import { AlreadyExistsError, ConflictError, type SessionStore } from '../store/index.js';
import type { Harness } from './builder.js';
import { ImportError } from './errors.js';
import { baseName } from './fields.js';
import { NOT_LINKED } from './link.js';
import { readSourceFile, sourceFiles } from './read.js';
import type { ImportedFile, ImportedSession } from './source.js';
import { linkInStore, storedEvents } from './stored.js';

/** Options of {@link importSessions}. */
export interface ImportOptions {
  /** The source format. */
  readonly from: Harness;
  /** A session file, or a directory searched recursively for `.jsonl` files. */
  readonly path: string;
  /** Where the sessions go. */
  readonly store: SessionStore;
  /**
   * A final line cut short: `'error'` (default) fails with `TRUNCATED_LINE`; `'wait'` leaves it,
   * and a last model response the source has not said is finished, for the next import (a file
   * its harness is still writing).
   */
  readonly partialTail?: 'error' | 'wait';
  /** Called after each source file, for progress. */
  readonly onFile?: (done: number, total: number) => void;
}

/** What happened to one session. */
export interface SessionOutcome {
  readonly id: string;
  /** The source file it was read from. */
  readonly file: string;
  /** `created`: new in the store; `appended`: the source grew; `up to date`: nothing new. */
  readonly result: 'created' | 'appended' | 'up to date';
  /** Events the session holds now. */
  readonly events: number;
  /** Events this import wrote. */
  readonly added: number;
  /** Messages read from the source (user, context, assistant, tool results, summaries). */
  readonly messages: number;
  /** Error results made for calls the source recorded no result for. */
  readonly madeResults: number;
  /** For a fork (a branch of its file, or a file its harness forked): the session it forks. */
  readonly parentSession?: string;
  /**
   * For a file its harness wrote as a fork that was not linked as a palimpsest fork (it was
   * imported standalone, its header keeping what the source says): the parent it names, and why.
   */
  readonly unlinkedFork?: {
    readonly parent: string;
    readonly reason: string;
    readonly detail: string;
  };
}

/** A file of a directory that could not be imported; the others were. */
export interface FailedFile {
  readonly file: string;
  /** The error's stable code (`MALFORMED_LINE`, `NOT_A_FILE`, `SOURCE_DIVERGED`, ...). */
  readonly code: string;
  readonly message: string;
}

/** The result of {@link importSessions}. */
export interface ImportReport {
  readonly from: Harness;
  /** Source files read. */
  readonly files: number;
  readonly sessions: readonly SessionOutcome[];
  /**
   * Files of a directory that could not be imported (damaged, not a regular file, rewritten
   * since their import): nothing of each was written, and every other file was imported.
   */
  readonly failed: readonly FailedFile[];
  /** Entries (and blocks, and files) not carried over, by reason. */
  readonly skipped: Readonly<Record<string, number>>;
}

/**
 * Imports the sessions of a Claude Code, Codex or pi session file (or of every such file under a
 * directory) into `store`. Running it again adds nothing; after the source file grew, it appends
 * only the new part. A file its harness wrote as a fork of another session is linked as a fork
 * of that session's import (`parentSession`, `seedLength`) when the parent is in the same run or
 * the store and the child's copy of its history matches; otherwise it is imported standalone and
 * its outcome's `unlinkedFork` says why.
 *
 * @throws ImportError `NO_SOURCE` (no such path, or no `.jsonl` file under it), and, for a file
 *   given by name, `UNKNOWN_FORMAT` (it is of another format), `MALFORMED_LINE` or
 *   `TRUNCATED_LINE` (naming the file and line; nothing of that file was written),
 *   `NOT_A_FILE`, `FILE_TOO_LARGE` or `SOURCE_DIVERGED` (the store holds an imported session the
 *   source no longer extends). In a directory, such a file is reported in `failed` and the
 *   others are imported.
 *
 * @example
 * ```ts
 * import { mkdtempSync, writeFileSync } from 'node:fs';
 * import { tmpdir } from 'node:os';
 * import { join } from 'node:path';
 * import { importSessions } from 'palimpsest/import';
 * import { openStore } from 'palimpsest/store';
 *
 * // A pi session file: its header, a prompt and the answer.
 * const path = join(mkdtempSync(join(tmpdir(), 'import-example-')), 'session.jsonl');
 * const at = (s: number) => `2026-11-03T10:00:0${s}.000Z`;
 * const entries = [
 *   { type: 'session', version: 3, id: 'demo', timestamp: at(0), cwd: '/app' },
 *   { type: 'message', id: 'e1', parentId: null, timestamp: at(1), message: { role: 'user', content: 'Hello' } },
 *   {
 *     type: 'message', id: 'e2', parentId: 'e1', timestamp: at(2),
 *     message: { role: 'assistant', content: [{ type: 'text', text: 'Hi!' }], provider: 'anthropic', model: 'claude-sonnet-4-5', stopReason: 'stop' },
 *   },
 * ];
 * writeFileSync(path, `${entries.map((entry) => JSON.stringify(entry)).join('\n')}\n`);
 *
 * const store = await openStore('memory:');
 * const first = await importSessions({ from: 'pi', path, store });
 * console.log(first.sessions[0]?.id); // 'pi-demo'
 * console.log(first.sessions[0]?.events); // 6: turn and step brackets around the two messages
 * const again = await importSessions({ from: 'pi', path, store });
 * console.log(again.sessions[0]?.result); // 'up to date'
 * await store.close();
 * ```
 */
export async function importSessions(options: ImportOptions): Promise<ImportReport> {
  const files = sourceFiles(options.path);
  const byName = files.length === 1 && files[0] === options.path;
  const run: Run = {
    store: options.store,
    skipped: {},
    outcomes: [],
    failed: [],
    unread: new Set(files.map((file) => resolve(file))),
    mainIds: new Map(),
  };
  let done = 0;
  // By name, a file that cannot be imported is the error; in a directory, it is reported and the
  // others go on.
  const failedFile = (path: string, error: unknown): void => {
    if (byName || !isFileProblem(error)) throw error;
    run.failed.push({ file: path, code: error.code, message: error.message });
    run.unread.delete(resolve(path));
  };
  const finish = async (imported: ImportedFile): Promise<void> => {
    try {
      await importFile(run, imported);
    } catch (error) {
      failedFile(imported.path, error);
    }
    options.onFile?.(++done, files.length);
  };
  // A fork whose parent's file is still to come in this run waits for it: order must not matter.
  const waiting: ImportedFile[] = [];
  for (const path of files) {
    let imported: ImportedFile;
    try {
      imported = readSourceFile(options.from, path, {
        partialTail: options.partialTail ?? 'error',
      });
    } catch (error) {
      // In a directory, a file of another harness is left out, counted; by name, it is an error.
      if (!byName && ImportError.isInstance(error) && error.code === 'UNKNOWN_FORMAT') {
        count(run.skipped, `file not in the ${options.from} format`);
        run.unread.delete(resolve(path));
      } else failedFile(path, error);
      options.onFile?.(++done, files.length);
      continue;
    }
    for (const [reason, n] of imported.skipped) count(run.skipped, reason, n);
    if (imported.sessions.length === 0) count(run.skipped, 'file with no conversation');
    if (waitsForParent(run, imported)) waiting.push(imported);
    else await finish(imported);
  }
  for (let progressed = true; progressed; ) {
    progressed = false;
    for (const imported of [...waiting]) {
      if (waitsForParent(run, imported)) continue;
      waiting.splice(waiting.indexOf(imported), 1);
      await finish(imported);
      progressed = true;
    }
  }
  // What still waits names a parent that only other waiting files lead to (a cycle).
  for (const imported of waiting) await finish(imported);
  return {
    from: options.from,
    files: files.length,
    sessions: run.outcomes,
    failed: run.failed,
    skipped: run.skipped,
  };
}

/** An error that is about one source file, not about the store or the run. */
function isFileProblem(error: unknown): error is ImportError | SessionValidationError {
  return ImportError.isInstance(error) || SessionValidationError.isInstance(error);
}

/** The state of one import run. */
interface Run {
  readonly store: SessionStore;
  readonly skipped: Record<string, number>;
  readonly outcomes: SessionOutcome[];
  readonly failed: FailedFile[];
  /** Source files of the run not imported yet, by absolute path. */
  readonly unread: Set<string>;
  /** The active path's session id of each file imported, by the file's absolute path. */
  readonly mainIds: Map<string, string>;
}

/** True while a file of the run that may hold the fork's parent is still to be imported. */
function waitsForParent(run: Run, imported: ImportedFile): boolean {
  const fork = imported.forkedFrom;
  if (fork === undefined) return false;
  const self = resolve(imported.path);
  for (const file of run.unread) {
    // Every harness names a session's file after its id: `<id>.jsonl`, `rollout-<time>-<id>.jsonl`,
    // `<time>_<id>.jsonl`; pi names the parent's file itself.
    if (file !== self && (file === fork.parentPath || baseName(file).includes(fork.sourceId))) {
      return true;
    }
  }
  return false;
}

/** Links (or not) and writes the sessions of one file, with their outcomes. */
async function importFile(run: Run, imported: ImportedFile): Promise<void> {
  let sessions = imported.sessions;
  let unlinked: SessionOutcome['unlinkedFork'];
  const fork = imported.forkedFrom;
  if (fork !== undefined && sessions.length > 0) {
    // A parent imported from the very file pi names is known by the id its import took.
    const known = fork.parentPath === undefined ? undefined : run.mainIds.get(fork.parentPath);
    const source = known === undefined ? fork : { ...fork, parent: known };
    const result = await linkInStore(run.store, sessions, source);
    if (result.linked) sessions = result.sessions;
    else {
      unlinked = {
        parent: source.parent,
        reason: NOT_LINKED[result.reason],
        detail: result.detail,
      };
      count(run.skipped, `fork not linked: ${NOT_LINKED[result.reason]}`);
    }
  }
  const path = imported.path;
  const planned = [];
  for (const session of sessions) {
    planned.push({ session, existing: await existingLength(run.store, session, path) });
  }
  for (const [i, { session, existing }] of planned.entries()) {
    const outcome = await writeOrCatchUp(run.store, session, existing, path);
    run.outcomes.push(
      i === 0 && unlinked !== undefined ? { ...outcome, unlinkedFork: unlinked } : outcome,
    );
  }
  run.unread.delete(resolve(path));
  const main = sessions[0];
  if (main !== undefined) run.mainIds.set(resolve(path), main.header.id);
}

/** How many of the session's events the store holds already (-1: none, not even the header). */
async function existingLength(
  store: SessionStore,
  session: ImportedSession,
  path: string,
): Promise<number> {
  // Validates the header (a fork's lineage) and every event again, before anything is written.
  Session.create({ header: session.header, seed: session.events });
  const stored = await storedEvents(store, session.header.id);
  if (stored === undefined) return -1;
  const events = session.events;
  const differs =
    stored.length > events.length ||
    stored.some((event, i) => !jsonEqual(event, events[i] ?? null));
  if (differs) {
    throw new ImportError(
      'SOURCE_DIVERGED',
      `session '${session.header.id}' in ${store.location} holds ${stored.length} events that are not a prefix of the ${events.length} that ${path} reads as now (the source was rewritten, not grown); nothing was written — delete the session to import it afresh`,
      { file: path },
    );
  }
  return stored.length;
}

/**
 * Writes a session; when another import of the same source wrote it first (the create finds it
 * there, the append finds it longer), compares again with what the store holds now: an import
 * that raced an equal one is up to date, not an error.
 */
async function writeOrCatchUp(
  store: SessionStore,
  session: ImportedSession,
  existing: number,
  path: string,
): Promise<SessionOutcome> {
  // The import that created the session says so even when a racing one appended its events
  // between the create and this import's append (which then finds them there).
  let created = false;
  for (let attempt = 0; ; attempt++) {
    try {
      const outcome = await write(store, session, existing, path, () => {
        created = true;
      });
      return created ? { ...outcome, result: 'created' } : outcome;
    } catch (error) {
      const raced = AlreadyExistsError.isInstance(error) || ConflictError.isInstance(error);
      if (!raced || attempt >= 3) throw error;
      const now = await existingLength(store, session, path);
      if (now === existing) throw error;
      existing = now;
    }
  }
}

async function write(
  store: SessionStore,
  session: ImportedSession,
  existing: number,
  path: string,
  onCreated: () => void,
): Promise<SessionOutcome> {
  const { header, events } = session;
  if (existing === -1) {
    await store.create(header);
    onCreated();
  }
  const from = Math.max(existing, 0);
  if (from < events.length) {
    await store.append(header.id, events.slice(from), { expectedSeq: from });
  }
  return {
    id: header.id,
    file: path,
    result: existing === -1 ? 'created' : from < events.length ? 'appended' : 'up to date',
    events: events.length,
    added: events.length - from,
    messages: session.sourceMessages,
    madeResults: session.madeResults,
    ...(header.parentSession === undefined ? {} : { parentSession: header.parentSession }),
  };
}

function count(into: Record<string, number>, reason: string, n = 1): void {
  into[reason] = (into[reason] ?? 0) + n;
}
