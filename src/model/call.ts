/**
 * One model call: stream it, retrying retryable failures with backoff. Abort always wins: once
 * the signal fires, the call settles within a microtask or two even when the model ignores its
 * abort signal (a `doStream` that never settles is raced against the signal, a pending read is
 * ended by cancelling the reader), and no backoff wait outlives it.
 */
import type {
  LanguageModelV3,
  LanguageModelV3CallOptions,
  LanguageModelV3StreamPart,
} from '@ai-sdk/provider';
import { sleep, untilAborted } from './abort.js';
import { type AttemptFailure, backoffMs, classifyFailure } from './failure.js';
import type { RetryPolicy } from './options.js';
import { knownSecrets } from './redact.js';

/** A retry about to happen: the failed attempt (1-based), its failure, and the wait before the next. */
export interface RetryNotice {
  readonly attempt: number;
  readonly delayMs: number;
  readonly failure: AttemptFailure;
}

/** What one model call, with its retries, came to. */
export type CallOutcome =
  | { readonly kind: 'completed' }
  | { readonly kind: 'aborted' }
  | { readonly kind: 'failed'; readonly failure: AttemptFailure };

/** Options of {@link callModel}. */
export interface CallModelOptions {
  readonly model: LanguageModelV3;
  /** The call options of every attempt; `abortSignal` is set to `signal`. */
  readonly request: LanguageModelV3CallOptions;
  readonly signal: AbortSignal;
  readonly retry: RetryPolicy;
  /**
   * Each stream part of the current attempt, in order, to the end of the stream: parts after an
   * `error` part are passed on too, and the first error decides the attempt's outcome once the
   * stream has ended. Runs synchronously inside the read loop: keep it cheap.
   */
  readonly onPart: (part: LanguageModelV3StreamPart) => void;
  /**
   * Called after a retryable failure, before the wait: the parts passed to `onPart` since the
   * last notice belong to the failed attempt, the next ones to a new attempt.
   */
  readonly onRetry?: (retry: RetryNotice) => void;
  /**
   * Credential values to redact from failures besides the provider key variables (the values
   * of the caller's HTTP headers, say).
   */
  readonly secrets?: readonly string[];
}

/**
 * Streams one model call, retrying retryable failures up to `retry.maxRetries` times. Resolves
 * with `aborted` whenever the signal fired, whatever the attempt's own outcome; never rejects
 * for a provider failure (only when `onRetry` throws).
 */
export async function callModel(options: CallModelOptions): Promise<CallOutcome> {
  const { signal, retry } = options;
  const request: LanguageModelV3CallOptions = { ...options.request, abortSignal: signal };
  const secrets = knownSecrets(options.secrets);
  for (let attempt = 1; ; attempt++) {
    const failure = await readStream(options.model, request, signal, options.onPart, secrets);
    if (signal.aborted) return { kind: 'aborted' };
    if (failure === undefined) return { kind: 'completed' };
    if (!failure.retryable || attempt > retry.maxRetries) return { kind: 'failed', failure };
    const delayMs = backoffMs(attempt, retry.retryDelayMs, retry.maxRetryDelayMs, failure);
    options.onRetry?.({ attempt, delayMs, failure });
    await sleep(delayMs, signal);
    if (signal.aborted) return { kind: 'aborted' };
  }
}

/**
 * One attempt: resolves with its failure, or `undefined` when the stream ended or the signal
 * fired (the caller tells the two apart by the signal). The stream is read to its end even past
 * an `error` part, so everything the provider sent reaches `onPart`; the first failure (an
 * `error` part, or a read that rejects) is the attempt's outcome.
 */
export async function readStream(
  model: LanguageModelV3,
  request: LanguageModelV3CallOptions,
  signal: AbortSignal,
  onPart: (part: LanguageModelV3StreamPart) => void,
  secrets: readonly string[] = knownSecrets(),
): Promise<AttemptFailure | undefined> {
  let result: Awaited<ReturnType<LanguageModelV3['doStream']>>;
  try {
    // Raced against the signal: a model that ignores its abort signal cannot hold the call.
    result = await untilAborted(model.doStream(request), signal);
  } catch (error) {
    return signal.aborted ? undefined : classifyFailure(error, secrets);
  }
  const reader = result.stream.getReader();
  // Cancelling the reader ends a pending read at once, even for a model that ignores its abort
  // signal.
  const onAbort = (): void => {
    reader.cancel().catch(() => {});
  };
  signal.addEventListener('abort', onAbort, { once: true });
  let failure: AttemptFailure | undefined;
  try {
    for (;;) {
      const next = await reader.read();
      if (signal.aborted) return undefined;
      if (next.done) return failure;
      const part = next.value;
      onPart(part);
      if (part.type === 'error' && failure === undefined)
        failure = classifyFailure(part.error, secrets);
    }
  } catch (error) {
    if (signal.aborted) return undefined;
    return failure ?? classifyFailure(error, secrets);
  } finally {
    signal.removeEventListener('abort', onAbort);
    reader.cancel().catch(() => {});
  }
}
