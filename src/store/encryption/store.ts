/**
 * `EncryptedStore`: any store, with each new session's event data sealed under a data key of
 * its own. Envelopes (seq, time, type, surface op, sources) and headers stay readable, so
 * listings, locks, the surface's shape and the hash chain work without keys; payloads need the
 * session's key, which the key vault keeps wrapped by the key provider.
 */
import { createSecretKey, type KeyObject, randomBytes } from 'node:crypto';
import type { SessionEvent, SessionHeader } from '../../core/index.js';
import {
  AlreadyExistsError,
  EncryptionError,
  NotFoundError,
  ShreddedKeyError,
} from '../contract/errors.js';
import { LoadedSession } from '../contract/loaded-session.js';
import type {
  AppendOptions,
  ListOptions,
  LoadOptions,
  ReplaceLogOptions,
  SessionLock,
  SessionPage,
  SessionStats,
  SessionStore,
  TornTail,
  UnlockOptions,
  UnlockReport,
  WatchOptions,
} from '../contract/session-store.js';
import { checkBatch, statsOf } from '../contract/store-rules.js';
import { KEY_BYTES, type KeyProvider } from './key-provider.js';
import type { KeyVault } from './key-vault.js';
import { openEvent } from './seal.js';
import { headOf, StretchOpener, sealEvents } from './stretch.js';

/** Options of {@link EncryptedStore}. */
export interface EncryptedStoreOptions {
  /** Wraps and unwraps the data keys. */
  readonly keys: KeyProvider;
  /** Keeps the wrapped data keys, apart from the store and its backups. */
  readonly vault: KeyVault;
  /** Epoch ms for the vault's records (default `Date.now`). */
  readonly clock?: () => number;
}

/** What {@link EncryptedStore.shred} did. */
export interface ShredReport {
  /** Whether a key was there to shred (false: shredded before, or never encrypted here). */
  readonly shredded: boolean;
}

/** The key a session's payloads are sealed with; `null` for a session stored in the clear. */
type SessionKey = KeyObject | null;

/**
 * A store whose new sessions are encrypted at rest: each gets a random 256-bit data key,
 * wrapped by `keys` and kept in `vault`; every event's data is sealed with it (AES-256-GCM,
 * bound to the session, seq and type) before the wrapped store sees it, and opened on load and
 * watch. Sessions the wrapped store already held in the clear are read and written as they are.
 * Shredding a session's key (or deleting the session) makes its payloads unreadable in every
 * copy of the store: reading one is a `ShreddedKeyError`. A write's stream chunks are sealed as
 * one record (see `docs/format.md`); a finished chunk loaded without its body
 * (`elideFinishedChunks`) reports the size of its sealed form.
 *
 * @example
 * ```ts
 * import { randomBytes } from 'node:crypto';
 * import {
 *   EncryptedStore,
 *   MemoryKeyVault,
 *   MemoryStore,
 *   masterKeyProvider,
 *   openSession,
 *   ShreddedKeyError,
 * } from 'palimpsest/store';
 *
 * const inner = new MemoryStore();
 * const store = new EncryptedStore(inner, {
 *   keys: masterKeyProvider(randomBytes(32)),
 *   vault: new MemoryKeyVault(),
 * });
 * const live = await openSession(store, 'secret');
 * live.append('turn/start', { turn: 1 });
 * await live.close();
 * const raw = await inner.load('secret');
 * console.log(JSON.stringify(raw.events[0]?.data).includes('turn')); // false
 * console.log(JSON.stringify((await store.load('secret')).events[0]?.data)); // '{"turn":1}'
 * await store.shred('secret');
 * const refused = await store.load('secret').catch((error: unknown) => error);
 * console.log(ShreddedKeyError.isInstance(refused)); // true
 * ```
 */
export class EncryptedStore implements SessionStore {
  readonly location: string;
  readonly #inner: SessionStore;
  readonly #keys: KeyProvider;
  readonly #vault: KeyVault;
  readonly #clock: () => number;
  readonly #sessionKeys = new Map<string, Promise<SessionKey>>();

  constructor(inner: SessionStore, options: EncryptedStoreOptions) {
    this.#inner = inner;
    this.#keys = options.keys;
    this.#vault = options.vault;
    this.#clock = options.clock ?? Date.now;
    this.location = inner.location;
  }

  /** The store this one seals payloads for. */
  get inner(): SessionStore {
    return this.#inner;
  }

  async create(header: SessionHeader): Promise<void> {
    const encrypted: SessionHeader = {
      ...header,
      encryption: { scheme: 'aes-256-gcm/1', keyProvider: this.#keys.id },
    };
    let key = createSecretKey(randomBytes(KEY_BYTES));
    try {
      // The key is kept before the session exists: a crash between the two leaves an unused
      // key, never a session whose key is lost.
      await this.#vault.put(header.id, {
        provider: this.#keys.id,
        wrapped: await this.#keys.wrapKey(key.export(), { session: header.id }),
        createdAt: this.#clock(),
      });
    } catch (error) {
      if (!AlreadyExistsError.isInstance(error)) throw error;
      if (await this.#holds(header.id)) throw new AlreadyExistsError(header.id, this.location);
      // A key a create left when it was cut short, or is still using: the session will be
      // sealed with it, whichever create stores the session. Never removed here, for that one.
      key = await this.#unwrap(header.id);
    }
    await this.#inner.create(encrypted);
    this.#sessionKeys.set(header.id, Promise.resolve(key));
  }

  async append(id: string, events: readonly SessionEvent[], options: AppendOptions): Promise<void> {
    // Checked before sealing: a stub sealed would no longer look like one to the wrapped store.
    checkBatch(id, events, options);
    const key = await this.#key(id);
    await this.#inner.append(id, key === null ? events : this.#seal(id, key, events), options);
  }

  async load(id: string, options?: LoadOptions): Promise<LoadedSession> {
    const loaded = await this.#inner.load(id, options);
    const key = await this.#key(id, loaded.header);
    if (key === null) return loaded;
    const stored = loaded.events;
    const stretches = new StretchOpener(id, key);
    for (const event of stored) stretches.note(event);
    await this.#noteMissingHeads(id, stored, stretches);
    const events = stored.map((event) => stretches.open(event) ?? openEvent(event, id, key));
    return LoadedSession.fromEvents(loaded.header, events, {
      tornTail: loaded.tornTail,
      damage: loaded.damage,
    });
  }

  list(options?: ListOptions): Promise<SessionPage> {
    return this.#inner.list(options);
  }

  async summarize(id: string): Promise<SessionStats> {
    const stats = await this.#inner.summarize(id);
    if (stats.header.encryption === undefined) return stats;
    // Usage lives in the sealed payloads: the stats are counted from the opened log.
    const { header, events } = await this.load(id);
    return statsOf(header, events.length, events.at(-1)?.time, events);
  }

  /** Deletes the session and shreds its key, so copies of it elsewhere cannot be read either. */
  async delete(id: string): Promise<void> {
    await this.#inner.delete(id);
    if ((await this.#vault.get(id)).state === 'key') await this.#vault.shred(id, this.#clock());
    this.#sessionKeys.delete(id);
  }

  /**
   * Shreds a session's data key: its payloads become unreadable here and in every copy of the
   * store (backups, archives), while its envelopes, header and hash chain stay readable. The
   * session itself is left in place; `delete` removes it and shreds its key.
   */
  async shred(id: string): Promise<ShredReport> {
    const shredded = await this.#vault.shred(id, this.#clock());
    this.#sessionKeys.delete(id);
    return { shredded };
  }

  lock(id: string): Promise<SessionLock> {
    return this.#inner.lock(id);
  }

  unlock(id: string, options?: UnlockOptions): Promise<UnlockReport> {
    return this.#inner.unlock(id, options);
  }

  discardTornTail(id: string, tail: TornTail, lock: SessionLock): Promise<void> {
    return this.#inner.discardTornTail(id, tail, lock);
  }

  async replaceLog(
    id: string,
    events: readonly SessionEvent[],
    options: ReplaceLogOptions,
    lock: SessionLock,
  ): Promise<void> {
    const key = await this.#key(id);
    // Sealed anew, with fresh nonces: nothing of the old ciphertext is reused.
    const stored = key === null ? events : this.#seal(id, key, events);
    await this.#inner.replaceLog(id, stored, options, lock);
  }

  async *watch(id: string, options?: WatchOptions): AsyncIterable<SessionEvent> {
    let key: SessionKey | undefined;
    let stretches: StretchOpener | undefined;
    for await (const event of this.#inner.watch(id, options)) {
      key ??= await this.#key(id);
      if (key === null) {
        yield event;
        continue;
      }
      stretches ??= new StretchOpener(id, key);
      stretches.note(event);
      await this.#noteMissingHeads(id, [event], stretches);
      yield stretches.open(event) ?? openEvent(event, id, key);
    }
  }

  close(): Promise<void> {
    this.#sessionKeys.clear();
    return this.#inner.close();
  }

  #seal(id: string, key: KeyObject, events: readonly SessionEvent[]): SessionEvent[] {
    return sealEvents(events, id, key);
  }

  /**
   * Notes the stretch heads that chunks of `events` need and `stretches` lacks: a watch that
   * starts inside a stretch, or a load that elided a head and kept a chunk after it in full.
   * Read from a full load of the wrapped store (rare: a stretch is one write's chunks).
   */
  async #noteMissingHeads(
    id: string,
    events: readonly SessionEvent[],
    stretches: StretchOpener,
  ): Promise<void> {
    const missing = new Set<number>();
    for (const event of events) {
      const head = headOf(event);
      if (head !== undefined && !stretches.has(head)) missing.add(head);
    }
    if (missing.size === 0) return;
    const full = await this.#inner.load(id);
    for (const seq of missing) {
      const head = full.events[seq];
      if (head !== undefined) stretches.note(head);
    }
  }

  /** The session's key, unwrapped once per store; `header` spares looking it up. */
  #key(id: string, header?: SessionHeader): Promise<SessionKey> {
    let key = this.#sessionKeys.get(id);
    if (key === undefined) {
      key = this.#resolveKey(id, header);
      this.#sessionKeys.set(id, key);
      // A failure is not kept: the next call asks the vault again.
      key.catch(() => this.#sessionKeys.delete(id));
    }
    return key;
  }

  async #resolveKey(id: string, known: SessionHeader | undefined): Promise<SessionKey> {
    const header = known ?? (await this.#header(id));
    return header.encryption === undefined ? null : this.#unwrap(id);
  }

  /** The session's data key, from the vault, unwrapped. */
  async #unwrap(id: string): Promise<KeyObject> {
    const found = await this.#vault.get(id);
    if (found.state === 'shredded') throw new ShreddedKeyError(id, found.at);
    if (found.state === 'none') {
      throw new EncryptionError(
        'KEY_MISSING',
        `session '${id}' is encrypted, but ${this.#vault.location} holds no key for it: give the vault its key was kept in`,
        id,
      );
    }
    try {
      const key = await this.#keys.unwrapKey(found.entry.wrapped, { session: id });
      if (key.length !== KEY_BYTES) throw new Error(`unwrapped to ${key.length} bytes`);
      return createSecretKey(Buffer.from(key));
    } catch (error) {
      if (EncryptionError.isInstance(error)) throw error;
      throw new EncryptionError(
        'WRONG_KEY',
        `the data key of session '${id}' was wrapped by key provider '${found.entry.provider}' and does not unwrap with '${this.#keys.id}': give the master key it was encrypted with`,
        id,
        { cause: error },
      );
    }
  }

  /** Whether the wrapped store holds session `id`. */
  async #holds(id: string): Promise<boolean> {
    try {
      await this.#header(id);
      return true;
    } catch (error) {
      if (NotFoundError.isInstance(error)) return false;
      throw error;
    }
  }

  /** The header of a session this store has not loaded yet. */
  async #header(id: string): Promise<SessionHeader> {
    let cursor: string | undefined;
    do {
      const page = await this.#inner.list({
        idPrefix: id,
        ...(cursor === undefined ? {} : { cursor }),
      });
      const found = page.sessions.find((summary) => summary.header.id === id);
      if (found !== undefined) return found.header;
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    // Unlisted (damaged, or gone): a load says which, with the store's own error.
    return (await this.#inner.load(id)).header;
  }
}
