/**
 * AES-256-GCM as every sealed record here uses it: a 12-byte nonce, the ciphertext followed by
 * its 16-byte tag, and additional data that binds the record to where it belongs.
 */
import { createCipheriv, createDecipheriv, type KeyObject, randomFillSync } from 'node:crypto';

const IV_BYTES = 12;
const TAG_BYTES = 16;
/** Nonces are drawn from the system's generator in blocks: one call per 1,024 records. */
const IV_POOL_BYTES = IV_BYTES * 1024;
let ivPool = Buffer.alloc(0);
let ivOffset = 0;

/** A fresh nonce, drawn from a pool the system's generator fills. */
export function nextIv(): Buffer {
  if (ivOffset + IV_BYTES > ivPool.length) {
    // A fresh block each time: a nonce handed out is never reused, even by a later refill.
    ivPool = randomFillSync(Buffer.allocUnsafe(IV_POOL_BYTES));
    ivOffset = 0;
  }
  const iv = ivPool.subarray(ivOffset, ivOffset + IV_BYTES);
  ivOffset += IV_BYTES;
  return iv;
}

/** The ciphertext of `plain` under `key` and `iv`, followed by its tag. */
export function gcmSeal(
  key: KeyObject | Uint8Array,
  iv: Uint8Array,
  aad: Uint8Array,
  plain: string | Uint8Array,
): Buffer {
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(aad);
  const text = typeof plain === 'string' ? cipher.update(plain, 'utf8') : cipher.update(plain);
  return Buffer.concat([text, cipher.final(), cipher.getAuthTag()]);
}

/**
 * What `gcmSeal` sealed; throws when `body` does not open under `key`, `iv` and `aad` (altered,
 * another key, or bound to another place).
 */
export function gcmOpen(
  key: KeyObject | Uint8Array,
  iv: Uint8Array,
  aad: Uint8Array,
  body: Buffer,
): Buffer {
  const decipher = createDecipheriv('aes-256-gcm', key, iv);
  decipher.setAAD(aad);
  decipher.setAuthTag(body.subarray(body.length - TAG_BYTES));
  return Buffer.concat([
    decipher.update(body.subarray(0, body.length - TAG_BYTES)),
    decipher.final(),
  ]);
}

/**
 * A sealed record's nonce and body from their base64url texts, or `undefined` when they are not
 * a nonce and a ciphertext with its tag.
 */
export function sealedParts(
  iv: unknown,
  body: unknown,
): { readonly iv: Buffer; readonly body: Buffer } | undefined {
  if (typeof iv !== 'string' || typeof body !== 'string') return undefined;
  const nonce = Buffer.from(iv, 'base64url');
  const bytes = Buffer.from(body, 'base64url');
  return nonce.length === IV_BYTES && bytes.length >= TAG_BYTES
    ? { iv: nonce, body: bytes }
    : undefined;
}

/** A nonce and body run together, as a wrapped key is kept. */
export function joinedParts(text: string): { readonly iv: Buffer; readonly body: Buffer } {
  const bytes = Buffer.from(text, 'base64url');
  return { iv: bytes.subarray(0, IV_BYTES), body: bytes.subarray(IV_BYTES) };
}
