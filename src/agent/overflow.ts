/**
 * Context overflow: a provider that refuses a request as longer than the model's context window
 * is not a failure retrying can fix, but one that making room can. The loop records the refusal
 * (`request/overflow`), asks the caller's handler to make room (a compaction, usually), and
 * retries the model call once, as the next step, whose request is built from the smaller
 * surface. Compaction is a sibling layer the agent does not import (DESIGN §2), hence the
 * handler.
 */
import type { ProviderFailure, SessionEvent, TurnEndReason } from '../core/index.js';
import type { StepContext } from './types.js';

/** What an `onContextOverflow` handler is told: where the loop is, and the refusal. */
export interface ContextOverflowContext extends StepContext {
  /** The provider's refusal (`providerCode: 'context_length_exceeded'`, say). */
  readonly error: ProviderFailure;
  /** The `request/overflow` event recorded for it. */
  readonly event: SessionEvent<'request/overflow'>;
}

/**
 * Makes room on the surface after a context overflow, by appending replace events to the
 * session (compaction, pruning). Resolve `true` when it freed something, so the loop retries
 * the model call; `false` ends the turn with `context-overflow`. `compactOnOverflow` in
 * `palimpsest/compaction` is one.
 */
export type ContextOverflowHandler = (
  context: ContextOverflowContext,
) => boolean | Promise<boolean>;

/** Specific codes by which providers say a request is over the context window. */
const OVERFLOW_CODES: ReadonlySet<string> = new Set([
  'context_length_exceeded',
  'context_window_exceeded',
  'model_context_window_exceeded',
  'string_above_max_length',
  'request_too_large',
]);

/** Messages of providers that send no specific code (Anthropic, DeepSeek, Gemini, vLLM...). */
const OVERFLOW_TEXT =
  /context (?:length|window)|prompt is too long|maximum context|too many (?:input )?tokens|exceeds the (?:maximum|context)|input is too long|reduce the length of the (?:messages|prompt)/i;

/**
 * Whether a provider failure says the request is longer than the model's context window: a
 * specific code (`context_length_exceeded`...) or, for providers without one, a 400 / 413 (or an
 * in-stream error) whose message says so.
 *
 * ```ts
 * isContextOverflow({ message: 'prompt is too long: 210000 tokens > 200000 maximum', status: 400 }); // true
 * ```
 */
export function isContextOverflow(failure: ProviderFailure): boolean {
  if (failure.providerCode !== undefined && OVERFLOW_CODES.has(failure.providerCode)) return true;
  if (failure.code !== undefined && OVERFLOW_CODES.has(failure.code)) return true;
  const status = failure.status;
  if (status !== undefined && status !== 400 && status !== 413) return false;
  return OVERFLOW_TEXT.test(failure.message);
}

/**
 * After a step whose model call overflowed (its `step/end` appended): `undefined` when the
 * handler made room and the next step retries, else the turn's `context-overflow` ending.
 */
export async function handleOverflow(
  failed: StepContext & {
    readonly error: ProviderFailure;
    readonly messageSeq: number;
    /** The failed step was already the retry after an overflow. */
    readonly retried: boolean;
  },
  handler: ContextOverflowHandler | undefined,
  emit: (event: SessionEvent) => void,
): Promise<TurnEndReason | undefined> {
  const { session, turn, step, error } = failed;
  if (handler === undefined) return { kind: 'context-overflow', error, compacted: false };
  // Once per overflow: a retry that overflows again would only compact a compacted surface.
  if (failed.retried) return { kind: 'context-overflow', error, compacted: true };
  const event = session.append(
    'request/overflow',
    { turn, step, error },
    { sourceEventSeqs: [failed.messageSeq] },
  );
  emit(event);
  const freed = await handler({ session, turn, step, signal: failed.signal, error, event });
  return freed === true ? undefined : { kind: 'context-overflow', error, compacted: false };
}
