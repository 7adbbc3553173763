/**
 * Sealed payloads: an event's data encrypted with its session's data key (AES-256-GCM) and
 * stored as the stand-in `{"~sealed": {"iv", "data", "digest"}}`. The envelope around it stays
 * as it was; the stand-in carries the digest of the plaintext, so the hash chain checks without
 * the key (see `integrity/chain.ts`).
 */
import type { KeyObject } from 'node:crypto';
import type { JsonValue, SessionEvent } from '../../core/index.js';
import { EncryptionError } from '../contract/errors.js';
import { SEALED_KEY, textDigest } from '../integrity/chain.js';
import { payloadText } from '../integrity/payload-text.js';
import { gcmOpen, gcmSeal, nextIv, sealedParts } from './gcm.js';

/** What a sealed event's data holds. */
export interface SealedPayload {
  readonly [SEALED_KEY]: {
    /** The 12-byte GCM nonce, base64url. */
    readonly iv: string;
    /** The ciphertext followed by the 16-byte tag, base64url. */
    readonly data: string;
    /** The digest of the plaintext's JSON text (`sha256:…`), which the chain hashes. */
    readonly digest: string;
  };
}

/**
 * The additional data a payload is sealed with: its session, seq and type, so a sealed payload
 * moved to another event or session does not open, and the digest it carries, so a digest
 * changed in the clear does not either.
 */
function associatedData(session: string, seq: number, type: string, digest: string): Buffer {
  return Buffer.from(`palimpsest sealed 1\0${session}\0${seq}\0${type}\0${digest}`);
}

/** Whether `data` is a sealed payload's stand-in. */
export function isSealed(data: unknown): data is SealedPayload {
  return typeof data === 'object' && data !== null && Object.hasOwn(data, SEALED_KEY);
}

/**
 * Types whose data stays in the clear: the chain's own records (checkpoints, and the
 * redactions that say which digests an erasure changed), which a verifier without keys reads.
 * They hold digests, counts, a reason and a subject id, never content.
 */
export const CLEAR_TYPES: ReadonlySet<string> = new Set(['log/checkpoint', 'log/redaction']);

/** The event with its data sealed under `key` (the chain's records as they are). */
export function sealEvent(event: SessionEvent, session: string, key: KeyObject): SessionEvent {
  if (CLEAR_TYPES.has(event.type)) return event;
  const text = payloadText(event.data);
  const digest = textDigest(text);
  const iv = nextIv();
  const sealed = gcmSeal(key, iv, associatedData(session, event.seq, event.type, digest), text);
  const data: JsonValue = {
    [SEALED_KEY]: {
      iv: iv.toString('base64url'),
      data: sealed.toString('base64url'),
      digest,
    },
  };
  return { ...event, data } as SessionEvent;
}

/**
 * The event with its sealed data opened; an event that is not sealed (an elided chunk's stub, a
 * chain record) comes back as it is. A payload that does not open (altered, its digest changed,
 * or moved to another event) is an `EncryptionError` (`SEAL_BROKEN`).
 */
export function openEvent(event: SessionEvent, session: string, key: KeyObject): SessionEvent {
  const stored: unknown = event.data;
  if (!isSealed(stored)) return event;
  const sealed = stored[SEALED_KEY];
  const broken = (reason: string) =>
    new EncryptionError(
      'SEAL_BROKEN',
      `the sealed payload of event ${event.seq} of session '${session}' ${reason}: it was altered, or sealed for another event`,
      session,
    );
  const parts = sealedParts(sealed.iv, sealed.data);
  if (parts === undefined || typeof sealed.digest !== 'string') {
    throw broken('is not a nonce, a ciphertext and a digest');
  }
  let text: string;
  try {
    const aad = associatedData(session, event.seq, event.type, sealed.digest);
    text = gcmOpen(key, parts.iv, aad, parts.body).toString('utf8');
  } catch (error) {
    throw new EncryptionError(
      'SEAL_BROKEN',
      `the sealed payload of event ${event.seq} of session '${session}' does not open with the session's key: it was altered, or sealed for another event`,
      session,
      { cause: error },
    );
  }
  // Authenticated with its digest: the text is the one the digest was taken of.
  const data = JSON.parse(text) as JsonValue;
  return { ...event, data } as SessionEvent;
}
