/**
 * Typed errors of the OpenAI Agents adapter: what it refuses before anything is written.
 */
import { PalimpsestError } from '../../core/index.js';

/**
 * Stable codes of {@link OpenAIAgentsSessionError}:
 * - `INVALID_ITEM`: an item given to `addItems` (or `replaceHistoryWithCompaction`) is not an
 *   object with a string `type` or a message `role`.
 * - `NON_JSON_ITEM`: an item holds a value JSON cannot carry (a `Uint8Array`, a class instance,
 *   `NaN`, a function...), or is over the session's data limits. The runner turns binary data
 *   into data URLs before it persists, so this is an item built by hand.
 * - `INVALID_LIMIT`: `getItems(limit)` got something other than a non-negative integer.
 * - `INVALID_COMPACTION`: `replaceHistoryWithCompaction` got a list that does not start with a
 *   `compaction` item.
 * - `FOREIGN_SURFACE_EVENT`: the session's surface holds an event this adapter did not write
 *   (no item and no removal marker), so it cannot be returned as an item.
 */
export type OpenAIAgentsSessionErrorCode =
  | 'INVALID_ITEM'
  | 'NON_JSON_ITEM'
  | 'INVALID_LIMIT'
  | 'INVALID_COMPACTION'
  | 'FOREIGN_SURFACE_EVENT';

/** Bad input to a {@link PalimpsestSession}, refused before anything is written. */
export class OpenAIAgentsSessionError extends PalimpsestError {
  static override readonly kind: string = 'OpenAIAgentsSessionError';
  declare readonly code: OpenAIAgentsSessionErrorCode;
  /** The index of the offending item in the list passed in, when an item is at fault. */
  readonly index: number | undefined;

  constructor(code: OpenAIAgentsSessionErrorCode, message: string, index?: number) {
    super(code, message);
    this.index = index;
  }
}
