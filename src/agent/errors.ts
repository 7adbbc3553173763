/**
 * Typed errors of the agent loop. Provider failures are not thrown: they end the turn with
 * `turn/end {kind:'error'}` and come back in the turn result. These errors are for misuse.
 */
import { PalimpsestError } from '../core/index.js';

/**
 * Stable codes of {@link AgentError}:
 * - `TURN_IN_PROGRESS`: a turn is already running on this session (one writer per session).
 * - `INVALID_TOOL`: a tool definition is malformed (bad name, schema, or a duplicate name).
 * - `INVALID_INPUT`: the turn input is neither a non-empty string nor user content blocks.
 * - `UNSUPPORTED_MODEL`: the model does not implement the AI SDK language-model spec v3.
 * - `PROVIDER_NOT_INSTALLED`: `modelFromEnv` found a key for a provider whose package is missing.
 * - `NO_PROVIDER`: no provider is configured (no key in the environment, an unknown provider name).
 * - `NOT_DURABLE`: the turn requires a durability barrier (`durability: 'required'`) and has none.
 * - `INVALID_HOOK_RESULT`: `beforeToolCall` or `afterToolCall` returned something that is not a
 *   decision or a replacement.
 * - `NOTHING_TO_RESUME`: `Agent.resume()` found the last turn completed (or no turn) and no
 *   queued message.
 * - `REQUEST_REUSED`: a request id the session admitted before came back with another input (or
 *   as another kind of request: a prompt's id on a steering message).
 */
export type AgentErrorCode =
  | 'TURN_IN_PROGRESS'
  | 'INVALID_TOOL'
  | 'INVALID_INPUT'
  | 'UNSUPPORTED_MODEL'
  | 'PROVIDER_NOT_INSTALLED'
  | 'NO_PROVIDER'
  | 'NOT_DURABLE'
  | 'INVALID_HOOK_RESULT'
  | 'NOTHING_TO_RESUME'
  | 'REQUEST_REUSED';

/** A misuse of the agent API, with a stable `code`. */
export class AgentError extends PalimpsestError {
  static override readonly kind: string = 'AgentError';
  declare readonly code: AgentErrorCode;

  constructor(code: AgentErrorCode, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
  }
}
