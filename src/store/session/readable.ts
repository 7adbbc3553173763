/**
 * The check that a loaded session's payloads are readable: an encrypted session loaded through
 * a store without its keys holds sealed stand-ins, which no session may be built from.
 */
import { EncryptionError } from '../contract/errors.js';
import type { LoadedSession } from '../contract/loaded-session.js';
import { CLEAR_TYPES, isSealed } from '../encryption/seal.js';

/**
 * Whether `loaded` holds sealed payloads: an encrypted session read without its keys (through
 * the store it is kept in rather than an `EncryptedStore` over it). Its envelopes, and so its
 * hash chain, can still be checked; its content cannot be read.
 */
export function holdsSealedPayloads(loaded: LoadedSession): boolean {
  if (loaded.header.encryption === undefined) return false;
  for (let seq = 0; seq < loaded.log.length; seq++) {
    const event = loaded.log.peek(seq);
    if (event !== undefined && !CLEAR_TYPES.has(event.type)) return isSealed(event.data);
  }
  return false;
}

/**
 * Throws an `EncryptionError` (`KEY_REQUIRED`) when `loaded` holds sealed payloads: the session
 * is encrypted and was read without its keys.
 */
export function requireReadable(loaded: LoadedSession, location: string): void {
  if (holdsSealedPayloads(loaded)) {
    const encryption = loaded.header.encryption;
    throw new EncryptionError(
      'KEY_REQUIRED',
      `session '${loaded.header.id}' in ${location} is encrypted (key provider '${encryption?.keyProvider}'): open the store with its key provider and key vault to read it`,
      loaded.header.id,
    );
  }
}
