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
import { printableStoreUrl } from './store-url.js';
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
    this.storeUrl = options.store ?? nonEmpty(process.env.PALIMPSEST_STORE) ?? DEFAULT_STORE_URL;
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
