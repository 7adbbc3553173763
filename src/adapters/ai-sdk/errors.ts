/**
 * Typed errors of the AI SDK adapter: what one side of the conversion cannot hold, and a
 * prompt the session cannot account for.
 */
import { PalimpsestError, type Session } from '../../core/index.js';

/**
 * Stable codes of {@link AiSdkError}:
 * - `UNSUPPORTED_CONTENT`: a message or content part that the other side cannot hold (a
 *   non-image file, a provider-executed tool call, a tool approval, a system message where
 *   palimpsest keeps the system prompt in the request header...). The message names it.
 * - `UNSUPPORTED_CALL`: call options the request header cannot record (provider-defined
 *   tools, a JSON response format, per-tool provider options).
 * - `PROMPT_DIVERGED`: the prompt the SDK sent holds history the session did not record (an
 *   assistant message, or a tool result for a call it never saw), so what the model was asked
 *   cannot be rebuilt from the log.
 * - `CALL_IN_PROGRESS`: a second model call started on the session while one was recording
 *   (one writer per session).
 */
export type AiSdkErrorCode =
  | 'UNSUPPORTED_CONTENT'
  | 'UNSUPPORTED_CALL'
  | 'PROMPT_DIVERGED'
  | 'CALL_IN_PROGRESS';

/** Where in a message list an {@link AiSdkError} was found. */
export interface AiSdkErrorDetails {
  /** Index of the message in the list given. */
  readonly messageIndex?: number;
  /** The part's type (`file`, `tool-approval-request`...) or the message role. */
  readonly part?: string;
}

/** A conversion or recording the AI SDK adapter refuses, with a stable `code`. */
export class AiSdkError extends PalimpsestError {
  static override readonly kind: string = 'AiSdkError';
  declare readonly code: AiSdkErrorCode;
  readonly messageIndex: number | undefined;
  readonly part: string | undefined;

  constructor(code: AiSdkErrorCode, message: string, details: AiSdkErrorDetails = {}) {
    super(code, message);
    this.messageIndex = details.messageIndex;
    this.part = details.part;
  }
}

/** What a caller does about a prompt the session cannot follow (`PROMPT_DIVERGED`). */
export const PROMPT_FIX =
  "build the call's history with toModelMessages(session), or pass the SDK's own response.messages from the previous call";

/** A prompt that adds what the open step cannot account for (`PROMPT_DIVERGED`). */
export function diverged(what: string): AiSdkError {
  return new AiSdkError(
    'PROMPT_DIVERGED',
    `expected the prompt to add user messages or results of the open step's tool calls, found ${what}; ${PROMPT_FIX}`,
  );
}

/** A second call on a session while one records (`CALL_IN_PROGRESS`). */
export function busyError(session: Session): AiSdkError {
  return new AiSdkError(
    'CALL_IN_PROGRESS',
    `a model call is already recording on session ${session.header.id}; wait for its stream to end (one writer per session)`,
  );
}
