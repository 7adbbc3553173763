/**
 * What every command gets: the terminal, the store URL from `--store` or `PALIMPSEST_STORE`,
 * and whether output is JSON.
 */

import { existsSync, readFileSync } from 'node:fs';
import {
  DEFAULT_STORE_URL,
  EncryptedStore,
  FileKeyVault,
  type KeyProvider,
  masterKeyFromEnv,
  masterKeyFromFile,
  openStore,
  parseStoreUrl,
  type SessionStore,
} from '../store/index.js';
import { CliError, EXIT } from './failure.js';
import { printableStoreUrl, storeUrlOf } from './store-url.js';
import { Terminal } from './terminal.js';

/** Options every command accepts. */
export interface GlobalOptions {
  readonly store?: string;
  readonly json?: boolean;
  readonly color?: boolean;
  readonly debug?: boolean;
  /** A file holding the master key of an encrypted store (else `PALIMPSEST_MASTER_KEY_FILE`). */
  readonly keyFile?: string;
  /** The key vault of an encrypted store (else `PALIMPSEST_KEY_VAULT`). */
  readonly keyVault?: string;
}

/** The context of one CLI invocation. */
export class CliContext {
  readonly terminal: Terminal;
  readonly storeUrl: string;
  /** `storeUrl` without its credentials: the only form of it any output holds. */
  readonly printableStoreUrl: string;
  readonly json: boolean;
  /**
   * The key vault directory, when the store is encrypted: sessions are created encrypted and
   * read with their keys. Absent: the store is opened as it is.
   */
  readonly keyVault: string | undefined;
  readonly #keyFile: string | undefined;

  constructor(options: GlobalOptions) {
    this.terminal = new Terminal(process.stdout, process.stderr, {
      ...(options.color === undefined ? {} : { color: options.color }),
    });
    this.storeUrl = storeUrlOf(
      options.store ?? nonEmpty(process.env.PALIMPSEST_STORE) ?? DEFAULT_STORE_URL,
    );
    this.printableStoreUrl = printableStoreUrl(this.storeUrl);
    this.json = options.json === true;
    this.keyVault = options.keyVault ?? nonEmpty(process.env.PALIMPSEST_KEY_VAULT);
    this.#keyFile = options.keyFile ?? nonEmpty(process.env.PALIMPSEST_MASTER_KEY_FILE);
    const keyGiven = this.#keyFile !== undefined || nonEmpty(process.env.PALIMPSEST_MASTER_KEY);
    if (keyGiven !== undefined && this.keyVault === undefined) {
      throw new CliError(
        'a master key was given without the key vault that keeps the session keys it wraps: add --key-vault DIR (or PALIMPSEST_KEY_VAULT)',
        EXIT.usage,
      );
    }
  }

  /**
   * Opens the store read-only for a command that only reads: nothing is created and no stored
   * byte changes (no checkpoint, no lock, no temporary file), so a loss it finds stays visible.
   */
  withReader<T>(work: (store: SessionStore) => Promise<T>): Promise<T> {
    return this.withStore(work, this.storeUrl, { readOnly: true });
  }

  /**
   * Opens the store, runs `work`, and closes the store whatever happens. Opening a store creates
   * it; unless `create` is set, a store that does not exist yet is an error instead, so a typo in
   * `--store` never leaves an empty store behind.
   */
  async withStore<T>(
    work: (store: SessionStore) => Promise<T>,
    url = this.storeUrl,
    options: { readonly create?: boolean; readonly readOnly?: boolean } = {},
  ): Promise<T> {
    if (options.create !== true) assertStoreExists(url);
    const store = await this.open(url, options);
    try {
      return await work(store);
    } finally {
      await store.close();
    }
  }

  /**
   * Opens a store (creating it), encrypted when a key vault was given: sessions are then
   * created encrypted and read with their keys.
   */
  async open(
    url: string,
    options: { readonly create?: boolean; readonly readOnly?: boolean } = {},
  ): Promise<SessionStore> {
    const opened = await openStore(url, {
      ...(options.readOnly === true ? { readOnly: true } : {}),
      postgres: { create: options.create === true },
    });
    if (this.keyVault === undefined) return opened;
    try {
      return new EncryptedStore(opened, {
        keys: await this.#masterKey(),
        vault: new FileKeyVault(this.keyVault),
      });
    } catch (error) {
      await opened.close();
      throw error;
    }
  }

  /**
   * The session a command names: `given` itself when the store holds a session of that id, else
   * the one session whose id starts with it (`show demo-77`). A prefix several ids share is a
   * usage error listing them; one no id starts with is passed on as it is, so the command says
   * the session was not found in its own words.
   */
  async sessionId(given: string, url = this.storeUrl): Promise<string> {
    const [id] = await this.sessionIds([given], url);
    return id ?? given;
  }

  /** {@link CliContext.sessionId} of each id given, with the store opened once. */
  async sessionIds(given: readonly string[], url = this.storeUrl): Promise<string[]> {
    if (given.length === 0) return [];
    let matches: Map<string, PrefixMatches>;
    try {
      // Ids are listed without keys: a listing reads headers, which an encrypted store keeps clear.
      assertStoreExists(url);
      const store = await openStore(url, { readOnly: true, postgres: { create: false } });
      try {
        matches = new Map();
        for (const id of given) matches.set(id, await prefixMatches(store, id));
      } finally {
        await store.close();
      }
    } catch {
      // A store that cannot be listed (missing, damaged, a ledger to adopt) is the command's to
      // report, in its own words: the ids go to it as they were given.
      return [...given];
    }
    return given.map((id) => resolvePrefix(id, matches.get(id)));
  }

  /** The key options a child process of this command needs to open the store as it does. */
  keyArguments(): string[] {
    return [
      ...(this.keyVault === undefined ? [] : ['--key-vault', this.keyVault]),
      ...(this.#keyFile === undefined ? [] : ['--key-file', this.#keyFile]),
    ];
  }

  /** The master key of an encrypted store: from `--key-file`, else the environment. */
  async #masterKey(): Promise<KeyProvider> {
    if (this.#keyFile !== undefined) {
      readGivenFile(this.#keyFile, 'the master key file');
      return masterKeyFromFile(this.#keyFile);
    }
    if (nonEmpty(process.env.PALIMPSEST_MASTER_KEY) === undefined) {
      throw new CliError(
        'the key vault was given without the master key that unwraps its keys: add --key-file FILE (or PALIMPSEST_MASTER_KEY_FILE, or PALIMPSEST_MASTER_KEY)',
        EXIT.usage,
      );
    }
    return masterKeyFromEnv();
  }
}

/** Candidates an ambiguous prefix lists; more are counted, not named. */
const CANDIDATES_SHOWN = 10;

/** The sessions whose ids start with a given prefix, as far as naming them needs. */
interface PrefixMatches {
  /** Whether a session has exactly the prefix as its id. */
  readonly exact: boolean;
  /** Ids that start with it, up to one more than {@link CANDIDATES_SHOWN}. */
  readonly ids: readonly string[];
  /** Whether more ids start with it than `ids` holds. */
  readonly more: boolean;
}

async function prefixMatches(store: SessionStore, given: string): Promise<PrefixMatches> {
  const page = await store.list({ idPrefix: given, limit: CANDIDATES_SHOWN + 1 });
  const ids = [
    ...new Set([
      ...page.sessions.map((summary) => summary.header.id),
      ...(page.damaged ?? []).flatMap((damaged) =>
        damaged.id?.startsWith(given) === true ? [damaged.id] : [],
      ),
    ]),
  ];
  const more = page.nextCursor !== undefined;
  const exact =
    ids.includes(given) || (more && (await holdsExactly(store, given, page.nextCursor)));
  return { exact, ids, more };
}

function resolvePrefix(given: string, matches: PrefixMatches | undefined): string {
  if (matches === undefined || matches.exact || matches.ids.length === 0) return given;
  if (!matches.more && matches.ids.length === 1) return matches.ids[0] ?? given;
  const count = matches.more ? `more than ${CANDIDATES_SHOWN}` : `${matches.ids.length}`;
  const named = matches.ids.slice(0, CANDIDATES_SHOWN).join(', ');
  throw new CliError(
    `session id prefix '${given}' matches ${count} sessions: ${named}${matches.more ? ', …' : ''}; give more of the id`,
    EXIT.usage,
  );
}

/** Whether a session of exactly this id is on the pages after `cursor` (many ids share it). */
async function holdsExactly(
  store: SessionStore,
  id: string,
  cursor: string | undefined,
): Promise<boolean> {
  let next: string | undefined = cursor;
  while (next !== undefined) {
    const page = await store.list({ idPrefix: id, cursor: next, limit: 500 });
    if (page.sessions.some((summary) => summary.header.id === id)) return true;
    if (page.damaged?.some((damaged) => damaged.id === id) === true) return true;
    next = page.nextCursor;
  }
  return false;
}

function assertStoreExists(url: string): void {
  const { scheme, path } = parseStoreUrl(url);
  // A database server's store is checked by opening it (a missing schema is refused then).
  if (scheme !== 'memory' && scheme !== 'postgres' && !existsSync(path)) {
    throw new CliError(
      `there is no store at ${url} (nothing was created; palimpsest demo or palimpsest run records a session there, or pass --store)`,
      EXIT.notFound,
    );
  }
}

/** Parses a non-negative integer argument, or fails with a usage error naming it. */
export function parseCount(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const number = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(number)) {
    throw new CliError(`${name} expects a non-negative integer, found '${value}'`, EXIT.usage);
  }
  return number;
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}

/** The text of a file a command was given, or a not-found error naming it and `what` it is. */
export function readGivenFile(file: string, what: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'unreadable';
    throw new CliError(`cannot read ${what} ${file}: ${code}`, EXIT.notFound);
  }
}
