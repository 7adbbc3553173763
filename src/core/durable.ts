/**
 * The durability barrier, named: what a session bound to storage offers so a writer can wait
 * until everything it appended so far would survive a crash.
 */

/**
 * A durability barrier. `flush()` resolves once every event appended before the call is durable,
 * and rejects when that can no longer be promised (a failed write). `LiveSession` implements it.
 */
export interface Durable {
  flush(): Promise<void>;
}

/** True when `value` offers a {@link Durable} barrier (a `flush` method). */
export function isDurable(value: unknown): value is Durable {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { flush?: unknown }).flush === 'function'
  );
}
