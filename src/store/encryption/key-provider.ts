/**
 * Key providers: what wraps and unwraps each session's data key. The data key never leaves
 * memory unwrapped; a provider holds (or reaches) the key that wraps it: a master key from the
 * environment or a file, or a KMS through callbacks.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { EncryptionError } from '../contract/errors.js';
import { gcmOpen, gcmSeal, joinedParts, nextIv } from './gcm.js';

/** What a data key is wrapped for: the session it belongs to. */
export interface KeyContext {
  readonly session: string;
}

/**
 * Wraps and unwraps session data keys (32 bytes each). Implement it to keep the wrapping key in
 * a KMS or an HSM; {@link callbackKeyProvider} builds one from two functions.
 */
export interface KeyProvider {
  /**
   * Names the wrapping key, recorded in each session header it encrypts and beside each wrapped
   * key. Never the key itself.
   */
  readonly id: string;
  /** The data key wrapped, as text the vault keeps. */
  wrapKey(dataKey: Uint8Array, context: KeyContext): Promise<string>;
  /**
   * The data key `wrapKey` wrapped. A key that does not unwrap (another master key) rejects; the
   * store reports it as an `EncryptionError` (`WRONG_KEY`).
   */
  unwrapKey(wrapped: string, context: KeyContext): Promise<Uint8Array>;
}

/** The byte length of every key here: AES-256. */
export const KEY_BYTES = 32;

/**
 * A master key given as text: 64 hex digits, or 32 bytes in base64 or base64url (surrounding
 * whitespace ignored, so a key file may end with a newline). Anything else is an
 * `EncryptionError` (`BAD_KEY`) saying what was found, never the text itself.
 *
 * @example
 * ```ts
 * import { parseMasterKey } from 'palimpsest/store';
 *
 * const key = parseMasterKey('00'.repeat(32));
 * console.log(key.length); // 32
 * ```
 */
export function parseMasterKey(text: string): Uint8Array {
  const trimmed = text.trim();
  if (/^[0-9a-fA-F]{64}$/.test(trimmed)) return Buffer.from(trimmed, 'hex');
  if (/^[A-Za-z0-9+/_-]{43}=?$/.test(trimmed)) {
    const bytes = Buffer.from(trimmed.replace(/\+/g, '-').replace(/\//g, '_'), 'base64url');
    if (bytes.length === KEY_BYTES) return bytes;
  }
  throw new EncryptionError(
    'BAD_KEY',
    `expected a master key of 32 bytes, as 64 hex digits or 44 base64 characters; found ${trimmed.length} characters that are neither`,
  );
}

/** Options of {@link masterKeyProvider}. */
export interface MasterKeyOptions {
  /**
   * The provider's id, recorded in session headers (default `master:` and the first 12
   * characters of the key's SHA-256 fingerprint, which tells keys apart without revealing them).
   */
  readonly id?: string;
}

/**
 * A provider wrapping data keys with a 32-byte master key (AES-256-GCM, bound to the session's
 * id). Keep the master key out of the store and out of its backups.
 *
 * @example
 * ```ts
 * import { randomBytes } from 'node:crypto';
 * import { masterKeyProvider } from 'palimpsest/store';
 *
 * const keys = masterKeyProvider(randomBytes(32));
 * const wrapped = await keys.wrapKey(randomBytes(32), { session: 's1' });
 * console.log((await keys.unwrapKey(wrapped, { session: 's1' })).length); // 32
 * ```
 */
export function masterKeyProvider(
  masterKey: Uint8Array,
  options: MasterKeyOptions = {},
): KeyProvider {
  if (masterKey.length !== KEY_BYTES) {
    throw new EncryptionError(
      'BAD_KEY',
      `expected a master key of ${KEY_BYTES} bytes, found ${masterKey.length}`,
    );
  }
  const key = Buffer.from(masterKey);
  const id =
    options.id ??
    `master:${createHash('sha256').update('palimpsest key id\0').update(key).digest('base64url').slice(0, 12)}`;
  const aad = (context: KeyContext) => Buffer.from(`palimpsest data key 1\0${context.session}`);
  return {
    id,
    async wrapKey(dataKey, context) {
      const iv = nextIv();
      return Buffer.concat([iv, gcmSeal(key, iv, aad(context), dataKey)]).toString('base64url');
    },
    async unwrapKey(wrapped, context) {
      const { iv, body } = joinedParts(wrapped);
      return gcmOpen(key, iv, aad(context), body);
    },
  };
}

/**
 * A {@link masterKeyProvider} with the master key read from an environment variable
 * (default `PALIMPSEST_MASTER_KEY`), in a form {@link parseMasterKey} reads. An unset variable
 * is an `EncryptionError` (`BAD_KEY`) naming it.
 */
export function masterKeyFromEnv(
  name = 'PALIMPSEST_MASTER_KEY',
  options: MasterKeyOptions = {},
): KeyProvider {
  const text = process.env[name];
  if (text === undefined || text.trim() === '') {
    throw new EncryptionError('BAD_KEY', `expected a master key in ${name}, found it unset`);
  }
  return masterKeyProvider(parseMasterKey(text), options);
}

/**
 * A {@link masterKeyProvider} with the master key read from a file (the text
 * {@link parseMasterKey} reads, or exactly 32 raw bytes).
 */
export async function masterKeyFromFile(
  path: string,
  options: MasterKeyOptions = {},
): Promise<KeyProvider> {
  const bytes = await readFile(path);
  if (bytes.length === KEY_BYTES) return masterKeyProvider(bytes, options);
  return masterKeyProvider(parseMasterKey(bytes.toString('latin1')), options);
}

/** The two calls of {@link callbackKeyProvider}, as a KMS client makes them. */
export interface KeyCallbacks {
  /** The provider's id (the KMS key's name or ARN). */
  readonly id: string;
  wrap(dataKey: Uint8Array, context: KeyContext): Promise<string>;
  unwrap(wrapped: string, context: KeyContext): Promise<Uint8Array>;
}

/**
 * A provider whose wrapping happens elsewhere, a KMS most often: `wrap` sends the data key to be
 * encrypted (pass `context.session` as the KMS's encryption context), `unwrap` gets it back.
 * What `unwrap` returns is checked to be 32 bytes.
 *
 * @example
 * ```ts
 * import { callbackKeyProvider } from 'palimpsest/store';
 *
 * const kms = new Map<string, Uint8Array>(); // stands in for a KMS in this example
 * const keys = callbackKeyProvider({
 *   id: 'kms:alias/palimpsest',
 *   async wrap(dataKey, { session }) {
 *     kms.set(session, dataKey);
 *     return `kms-handle:${session}`;
 *   },
 *   async unwrap(_wrapped, { session }) {
 *     const key = kms.get(session);
 *     if (key === undefined) throw new Error('no such key');
 *     return key;
 *   },
 * });
 * console.log(keys.id); // 'kms:alias/palimpsest'
 * ```
 */
export function callbackKeyProvider(callbacks: KeyCallbacks): KeyProvider {
  return {
    id: callbacks.id,
    wrapKey: (dataKey, context) => callbacks.wrap(dataKey, context),
    async unwrapKey(wrapped, context) {
      const key = await callbacks.unwrap(wrapped, context);
      if (!(key instanceof Uint8Array) || key.length !== KEY_BYTES) {
        throw new EncryptionError(
          'BAD_KEY',
          `key provider '${callbacks.id}' unwrapped the data key of session '${context.session}' to ${key instanceof Uint8Array ? `${key.length} bytes` : 'something other than bytes'}; expected ${KEY_BYTES} bytes`,
          context.session,
        );
      }
      return key;
    },
  };
}
