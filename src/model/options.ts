/**
 * Option checks every layer over the model shares, and the retry policy of one model call with
 * its defaults, so the turn and compaction retry alike unless their caller says otherwise.
 */

/**
 * `value` when it is a non-negative safe integer, `fallback` when it is absent; otherwise throws
 * what `refuse` builds from a message naming the option (each layer throws its own error type).
 */
export function countOption(
  name: string,
  value: number | undefined,
  fallback: number,
  refuse: (message: string) => Error,
): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value < 0) {
    throw refuse(`expected ${name} to be a non-negative integer, found ${String(value)}`);
  }
  return value;
}

/** How a model call retries a retryable provider failure. */
export interface RetryOptions {
  /** Retries of a retryable provider failure per model call (default 2). */
  readonly maxRetries?: number;
  /** The first retry's delay; later ones double (default 1000 ms; a longer `retry-after` wins). */
  readonly retryDelayMs?: number;
  /** The longest wait before a retry, whatever `retry-after` says (default 60 000 ms). */
  readonly maxRetryDelayMs?: number;
}

/** {@link RetryOptions} with every default filled in. */
export type RetryPolicy = { readonly [K in keyof RetryOptions]-?: number };

/** The defaults of {@link RetryOptions}. */
export const DEFAULT_RETRY: RetryPolicy = {
  maxRetries: 2,
  retryDelayMs: 1000,
  maxRetryDelayMs: 60_000,
};

/** Checks the retry knobs of `options` and fills in the defaults. */
export function retryPolicy(
  options: RetryOptions,
  refuse: (message: string) => Error,
): RetryPolicy {
  return {
    maxRetries: countOption('maxRetries', options.maxRetries, DEFAULT_RETRY.maxRetries, refuse),
    retryDelayMs: countOption(
      'retryDelayMs',
      options.retryDelayMs,
      DEFAULT_RETRY.retryDelayMs,
      refuse,
    ),
    maxRetryDelayMs: countOption(
      'maxRetryDelayMs',
      options.maxRetryDelayMs,
      DEFAULT_RETRY.maxRetryDelayMs,
      refuse,
    ),
  };
}
