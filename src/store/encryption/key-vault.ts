/**
 * Key vaults: where each session's wrapped data key is kept, apart from the session store, so
 * that shredding a key here leaves every copy of the session (backups included) unreadable.
 */
import { createHash, randomBytes } from 'node:crypto';
import { link, mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { AlreadyExistsError, StorageError } from '../contract/errors.js';

/** A session's data key as a vault keeps it: wrapped, never in the clear. */
export interface VaultEntry {
  /** The id of the key provider that wrapped it. */
  readonly provider: string;
  /** The wrapped key, as the provider returned it. */
  readonly wrapped: string;
  /** When it was stored, epoch ms. */
  readonly createdAt: number;
}

/** What a vault holds for a session. */
export type VaultLookup =
  | { readonly state: 'key'; readonly entry: VaultEntry }
  /** The key was shredded; `at` when the vault recorded it. */
  | { readonly state: 'shredded'; readonly at?: number }
  | { readonly state: 'none' };

/**
 * Stores wrapped data keys by session id. Keep it where the session store's backups are not,
 * or shredding cannot reach those backups.
 */
export interface KeyVault {
  /** Where the keys live, for messages. */
  readonly location: string;
  /** Keeps a session's wrapped key; an existing key is an `AlreadyExistsError`, a tombstone is replaced. */
  put(session: string, entry: VaultEntry): Promise<void>;
  get(session: string): Promise<VaultLookup>;
  /**
   * Destroys a session's key and leaves a tombstone, so a later read says the key was shredded
   * rather than never there. True when a key was there; else nothing changes.
   */
  shred(session: string, at: number): Promise<boolean>;
}

/** A vault in memory: for tests, and for sessions that must not outlive the process. */
export class MemoryKeyVault implements KeyVault {
  readonly location = 'memory';
  readonly #entries = new Map<string, VaultLookup>();

  async put(session: string, entry: VaultEntry): Promise<void> {
    if (this.#entries.get(session)?.state === 'key') {
      throw new AlreadyExistsError(session, 'the key vault');
    }
    this.#entries.set(session, { state: 'key', entry: { ...entry } });
  }

  async get(session: string): Promise<VaultLookup> {
    return this.#entries.get(session) ?? { state: 'none' };
  }

  async shred(session: string, at: number): Promise<boolean> {
    if (this.#entries.get(session)?.state !== 'key') return false;
    this.#entries.set(session, { state: 'shredded', at });
    return true;
  }
}

/**
 * A vault in a directory: one small file per session, named by the SHA-256 of its id, written
 * atomically (temporary file, fsync, rename, directory fsync) with mode 0600. Shredding
 * overwrites the key file before removing it and leaves a `.shredded` tombstone.
 *
 * @example
 * ```ts
 * import { mkdtempSync } from 'node:fs';
 * import { tmpdir } from 'node:os';
 * import { join } from 'node:path';
 * import { FileKeyVault } from 'palimpsest/store';
 *
 * const vault = new FileKeyVault(join(mkdtempSync(join(tmpdir(), 'vault-')), 'keys'));
 * await vault.put('s1', { provider: 'master:abc', wrapped: 'AAAA', createdAt: 0 });
 * await vault.shred('s1', Date.now());
 * console.log((await vault.get('s1')).state); // 'shredded'
 * ```
 */
export class FileKeyVault implements KeyVault {
  readonly location: string;
  readonly #dir: string;

  constructor(dir: string) {
    this.#dir = resolve(dir);
    this.location = `vault:${this.#dir}`;
  }

  async put(session: string, entry: VaultEntry): Promise<void> {
    await mkdir(this.#dir, { recursive: true, mode: 0o700 });
    const file = this.#file(session, 'key');
    const temp = await this.#writeTemp(file, `${JSON.stringify({ session, ...entry })}\n`);
    try {
      // A hard link is created only where no file is: of two writers, one gets the name.
      await link(temp, file);
    } catch (error) {
      if ((error as { code?: unknown }).code === 'EEXIST') {
        throw new AlreadyExistsError(session, this.location);
      }
      throw error;
    } finally {
      await rm(temp, { force: true });
    }
    await rm(this.#file(session, 'shredded'), { force: true });
    await syncDirectory(this.#dir);
  }

  async get(session: string): Promise<VaultLookup> {
    const text = await readIfPresent(this.#file(session, 'key'));
    if (text !== undefined) {
      const record = parseRecord(text);
      if (record?.session === session && isEntry(record)) {
        return {
          state: 'key',
          entry: {
            provider: record.provider,
            wrapped: record.wrapped,
            createdAt: record.createdAt,
          },
        };
      }
      throw new StorageError(`read the key of session '${session}' in ${this.location}`, {
        cause: new Error('the key file is damaged'),
      });
    }
    const tombstone = await readIfPresent(this.#file(session, 'shredded'));
    if (tombstone === undefined) return { state: 'none' };
    const at = parseRecord(tombstone)?.shreddedAt;
    return typeof at === 'number' ? { state: 'shredded', at } : { state: 'shredded' };
  }

  async shred(session: string, at: number): Promise<boolean> {
    const file = this.#file(session, 'key');
    const handle = await open(file, 'r+').catch((error: unknown) => {
      if ((error as { code?: unknown }).code === 'ENOENT') return undefined;
      throw error;
    });
    if (handle === undefined) return false;
    try {
      // The tombstone first: a crash after it leaves the key to shred again, never a key gone
      // without a record that it was shredded.
      await this.#writeAtomically(
        this.#file(session, 'shredded'),
        `${JSON.stringify({ session, shreddedAt: at })}\n`,
      );
      // Overwritten in place before the unlink: on a file system that updates blocks in place,
      // the wrapped key's bytes are gone, not only unlinked.
      const { size } = await handle.stat();
      await handle.write(Buffer.alloc(size), 0, size, 0);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rm(file, { force: true });
    await syncDirectory(this.#dir);
    return true;
  }

  #file(session: string, kind: 'key' | 'shredded'): string {
    const name = createHash('sha256').update(session).digest('hex');
    return join(this.#dir, `${name}.${kind}`);
  }

  async #writeAtomically(file: string, text: string): Promise<void> {
    await rename(await this.#writeTemp(file, text), file);
  }

  /** A durable temporary file beside `file` holding `text`, readable by its owner only. */
  async #writeTemp(file: string, text: string): Promise<string> {
    const temp = `${file}.${randomBytes(6).toString('hex')}.tmp`;
    const handle = await open(temp, 'wx', 0o600);
    try {
      await handle.writeFile(text);
      await handle.sync();
    } finally {
      await handle.close();
    }
    return temp;
  }
}

interface StoredRecord {
  readonly session?: unknown;
  readonly provider?: unknown;
  readonly wrapped?: unknown;
  readonly createdAt?: unknown;
  readonly shreddedAt?: unknown;
}

function isEntry(record: StoredRecord): record is StoredRecord & VaultEntry {
  return (
    typeof record.provider === 'string' &&
    typeof record.wrapped === 'string' &&
    typeof record.createdAt === 'number'
  );
}

function parseRecord(text: string): StoredRecord | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null ? (value as StoredRecord) : undefined;
  } catch {
    return undefined;
  }
}

async function readIfPresent(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    if ((error as { code?: unknown }).code === 'ENOENT') return undefined;
    throw error;
  }
}

async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
