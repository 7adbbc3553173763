/**
 * `importSessions`: reads source files and writes their sessions to a store, idempotently. A
 * session already imported is compared with what the source reads as now: equal, nothing is
 * written; a prefix of it (the source grew), only the new events are appended; anything else is
 * refused as `SOURCE_DIVERGED`. Every session of a file is read, validated and compared before the
 * first write, and each session's new events go to the store as one batch, which every backend
 * commits atomically.
 */
import { type JsonValue, jsonEqual, Session, type SessionEvent } from '../core/index.js';
import { NotFoundError, type SessionStore } from '../store/index.js';
import type { Harness } from './builder.js';
import { ImportError } from './errors.js';
import { readSourceFile, sourceFiles } from './read.js';
import type { ImportedSession } from './source.js';

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
  /** For a branch: the session it forks. */
  readonly parentSession?: string;
}

/** The result of {@link importSessions}. */
export interface ImportReport {
  readonly from: Harness;
  /** Source files read. */
  readonly files: number;
  readonly sessions: readonly SessionOutcome[];
  /** Entries (and blocks, and files) not carried over, by reason. */
  readonly skipped: Readonly<Record<string, number>>;
}

/**
 * Imports the sessions of a Claude Code, Codex or pi session file (or of every such file under a
 * directory) into `store`. Running it again adds nothing; after the source file grew, it appends
 * only the new part.
 *
 * @throws ImportError `NO_SOURCE` (no such path, or no `.jsonl` file under it),
 *   `UNKNOWN_FORMAT` (a file given by name is of another format), `MALFORMED_LINE` or
 *   `TRUNCATED_LINE` (naming the file and line; nothing of that file was written), or
 *   `SOURCE_DIVERGED` (the store holds an imported session the source no longer extends).
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
  const skipped: Record<string, number> = {};
  const outcomes: SessionOutcome[] = [];
  let done = 0;
  for (const path of files) {
    let imported: ReturnType<typeof readSourceFile>;
    try {
      imported = readSourceFile(options.from, path, {
        partialTail: options.partialTail ?? 'error',
      });
    } catch (error) {
      // In a directory, a file of another harness is left out, counted; by name, it is an error.
      if (byName || !ImportError.isInstance(error) || error.code !== 'UNKNOWN_FORMAT') throw error;
      count(skipped, `file not in the ${options.from} format`);
      options.onFile?.(++done, files.length);
      continue;
    }
    for (const [reason, n] of imported.skipped) count(skipped, reason, n);
    if (imported.sessions.length === 0) count(skipped, 'file with no conversation');
    const planned = [];
    for (const session of imported.sessions) {
      planned.push({ session, existing: await existingLength(options.store, session, path) });
    }
    for (const { session, existing } of planned) {
      outcomes.push(await write(options.store, session, existing, path));
    }
    options.onFile?.(++done, files.length);
  }
  return { from: options.from, files: files.length, sessions: outcomes, skipped };
}

/** How many of the session's events the store holds already (-1: none, not even the header). */
async function existingLength(
  store: SessionStore,
  session: ImportedSession,
  path: string,
): Promise<number> {
  // Validates the header (a fork's lineage) and every event again, before anything is written.
  Session.create({ header: session.header, seed: session.events });
  let stored: readonly SessionEvent[];
  try {
    stored = (await store.load(session.header.id)).events;
  } catch (error) {
    if (NotFoundError.isInstance(error)) return -1;
    throw error;
  }
  const events = session.events;
  const differs =
    stored.length > events.length ||
    stored.findIndex(
      (event, i) => !jsonEqual(event as unknown as JsonValue, events[i] as unknown as JsonValue),
    ) !== -1;
  if (differs) {
    throw new ImportError(
      'SOURCE_DIVERGED',
      `session '${session.header.id}' in ${store.location} holds ${stored.length} events that are not a prefix of the ${events.length} that ${path} reads as now (the source was rewritten, not grown); nothing was written — delete the session to import it afresh`,
      { file: path },
    );
  }
  return stored.length;
}

async function write(
  store: SessionStore,
  session: ImportedSession,
  existing: number,
  path: string,
): Promise<SessionOutcome> {
  const { header, events } = session;
  if (existing === -1) await store.create(header);
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
