/**
 * The few host facilities the core uses, typed minimally so the core runs unchanged in Node and
 * in browsers without depending on either's type definitions.
 */
interface HostGlobals {
  readonly crypto?: { randomUUID?(): string };
  readonly console?: { error(...values: unknown[]): void };
}

export const host = globalThis as HostGlobals;

/** A random UUID (or, on hosts without `crypto.randomUUID`, 128 random bits in hex). */
export function randomId(): string {
  const crypto = host.crypto;
  if (crypto?.randomUUID !== undefined) return crypto.randomUUID();
  let id = '';
  for (let i = 0; i < 4; i++) {
    id += Math.floor(Math.random() * 0x1_0000_0000)
      .toString(16)
      .padStart(8, '0');
  }
  return id;
}
