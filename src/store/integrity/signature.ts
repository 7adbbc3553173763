/**
 * Ed25519 signatures of checkpoints. A signature covers the session, the count and the head, so
 * a signed checkpoint cannot be moved to another session or position; the key that signs never
 * lives in the store, so whoever can rewrite the store still cannot forge one.
 */
import {
  createHash,
  createPrivateKey,
  createPublicKey,
  type KeyObject,
  sign,
  verify,
} from 'node:crypto';
import { InvalidArgumentError } from '../../core/index.js';

/** Signs checkpoints. */
export interface CheckpointSigner {
  /** The first 16 hex digits of the SHA-256 of the raw public key: what a checkpoint names. */
  readonly keyId: string;
  /** The Ed25519 signature of `message`. */
  sign(message: Buffer): Buffer;
}

/** What a checkpoint's signature covers. */
export function signedMessage(session: string, count: number, head: string): Buffer {
  return Buffer.from(`palimpsest checkpoint 1\n${session}\n${count}\n${head}`);
}

/**
 * A signer from an Ed25519 private key (a `KeyObject`, or PEM text).
 *
 * @example
 * ```ts
 * import { generateKeyPairSync } from 'node:crypto';
 * import { ed25519Signer } from 'palimpsest/store';
 *
 * const { privateKey } = generateKeyPairSync('ed25519');
 * const signer = ed25519Signer(privateKey);
 * console.log(signer.keyId.length); // 16
 * ```
 */
export function ed25519Signer(privateKey: KeyObject | string): CheckpointSigner {
  const key = typeof privateKey === 'string' ? parsePrivate(privateKey) : privateKey;
  if (key.type !== 'private' || key.asymmetricKeyType !== 'ed25519') {
    throw new InvalidArgumentError(
      `expected an Ed25519 private key to sign checkpoints, found a ${key.type} ${key.asymmetricKeyType ?? 'secret'} key`,
    );
  }
  const keyId = publicKeyId(createPublicKey(key));
  return { keyId, sign: (message) => sign(null, message, key) };
}

/** The id a checkpoint names its key by. */
export function publicKeyId(publicKey: KeyObject): string {
  const raw = publicKey.export({ format: 'der', type: 'spki' });
  return createHash('sha256').update(raw).digest('hex').slice(0, 16);
}

/** An Ed25519 public key from a `KeyObject` or PEM text (a private key gives its public half). */
export function ed25519PublicKey(key: KeyObject | string): KeyObject {
  let publicKey: KeyObject;
  try {
    publicKey =
      typeof key === 'string'
        ? createPublicKey(key)
        : key.type === 'private'
          ? createPublicKey(key)
          : key;
  } catch (error) {
    throw new InvalidArgumentError(
      'expected an Ed25519 public key in PEM form, found text that is not a PEM key',
      { cause: error },
    );
  }
  if (publicKey.asymmetricKeyType !== 'ed25519') {
    throw new InvalidArgumentError(
      `expected an Ed25519 public key, found a ${publicKey.asymmetricKeyType ?? 'secret'} key`,
    );
  }
  return publicKey;
}

/** Whether `signature` (base64url) is `publicKey`'s signature of `message`. */
export function verifySignature(publicKey: KeyObject, message: Buffer, signature: string): boolean {
  try {
    return verify(null, message, publicKey, Buffer.from(signature, 'base64url'));
  } catch {
    return false;
  }
}

function parsePrivate(pem: string): KeyObject {
  try {
    return createPrivateKey(pem);
  } catch (error) {
    throw new InvalidArgumentError(
      'expected an Ed25519 private key in PEM form, found text that is not a PEM private key',
      { cause: error },
    );
  }
}
