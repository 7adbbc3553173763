/**
 * Typed errors of the Claude Agent SDK session store: what it refuses before anything is written.
 */
import { PalimpsestError } from '../../core/index.js';

/**
 * Stable codes of {@link ClaudeSessionStoreError}:
 * - `INVALID_KEY`: a session key without a non-empty string `projectKey` and `sessionId`, with a
 *   `sessionId` holding `/`, or with a `subpath` that is not a non-empty string.
 * - `INVALID_ENTRY`: an entry that is not an object with a string `type`, holds a value JSON
 *   cannot carry, or is over the data limits (the SDK's entries are JSON lines, so this is an
 *   entry built by hand).
 * - `PROJECT_MISMATCH`: the store holds this Claude session under another `projectKey`.
 * - `NOT_A_MIRROR`: the palimpsest session with this key's id was not written by this store
 *   (an import of the transcript file, say), so mirroring into it would mix two writers.
 */
export type ClaudeSessionStoreErrorCode =
  | 'INVALID_KEY'
  | 'INVALID_ENTRY'
  | 'PROJECT_MISMATCH'
  | 'NOT_A_MIRROR';

/** Bad input to a {@link ClaudeTranscriptStore}, refused before anything is written. */
export class ClaudeSessionStoreError extends PalimpsestError {
  static override readonly kind: string = 'ClaudeSessionStoreError';
  declare readonly code: ClaudeSessionStoreErrorCode;
}
