/**
 * The check that a loaded session's payloads are readable: an encrypted session loaded through
 * a store without its keys holds sealed stand-ins, which no session may be built from.
 */
import { EncryptionError } from '../contract/errors.js';
import type { LoadedSession } from '../contract/loaded-session.js';
import { isSealed } from '../encryption/seal.js';

/**
 * Throws an `EncryptionError` (`KEY_REQUIRED`) when `loaded` holds sealed payloads: the session
 * is encrypted and was read without its keys.
 */
export function requireReadable(loaded: LoadedSession, location: string): void {
  if (loaded.header.encryption === undefined) return;
  for (let seq = 0; seq < loaded.log.length; seq++) {
    const event = loaded.log.peek(seq);
    if (event === undefined) continue;
    if (!isSealed(event.data)) return;
    throw new EncryptionError(
      'KEY_REQUIRED',
      `session '${loaded.header.id}' in ${location} is encrypted (key provider '${loaded.header.encryption.keyProvider}'): open the store with its key provider and key vault to read it`,
      loaded.header.id,
    );
  }
}
