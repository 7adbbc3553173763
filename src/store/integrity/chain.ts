/**
 * The hash chain of a session (see `docs/governance.md`): each event has a **leaf digest**, the
 * SHA-256 of its envelope and a digest of its data; checkpoints link the leaves into a chain,
 * each head the SHA-256 of the previous head followed by the leaves since. The leaf leaves the
 * seq out (the chain's order binds it), so a verifier can tell a removed or inserted event from
 * an altered one; a redaction records the erased event's leaf, so the chain survives erasure.
 */
import * as crypto from 'node:crypto';
import { createHash } from 'node:crypto';
import type { SessionEvent } from '../../core/index.js';
import { payloadText } from './payload-text.js';

/** The text form of a digest: `sha256:` then the 32 bytes in base64url. */
export type DigestText = string;

/**
 * A chain head kept outside the store (printed for an external log, or written to another
 * store): the head over a session's first `count` events. Only an anchor shows a log cut short.
 */
export interface Anchor {
  readonly session: string;
  readonly count: number;
  readonly head: DigestText;
}

const DIGEST_PREFIX = 'sha256:';
/** Characters of a leaf's base64url form that a checkpoint keeps to locate a changed event. */
export const SHORT_LEAF_CHARS = 8;

/**
 * The key of a payload stand-in: data stored as `{"~sealed": {"digest": "sha256:…", …}}` is a
 * payload kept in another form (encrypted), and the digest it carries is the digest of the
 * payload it stands for, so the chain can be checked without reading the payload.
 */
export const SEALED_KEY = '~sealed';

/**
 * SHA-256 of a text, as digest text. Node's one-shot `crypto.hash` where it exists (Node 20.12
 * on) straight to base64url: a `Buffer` per digest costs more than the hash of a short text.
 */
const sha256Text: (text: string) => DigestText =
  typeof crypto.hash === 'function'
    ? (text) => DIGEST_PREFIX + crypto.hash('sha256', text, 'base64url')
    : (text) => DIGEST_PREFIX + createHash('sha256').update(text).digest('base64url');

/**
 * The payload digest of an event's data: SHA-256 of its JSON text (every store gives back the
 * text it was handed, byte for byte), or, for a stand-in, the digest it carries.
 */
export function payloadDigest(data: unknown): DigestText {
  return standInDigest(data) ?? sha256Text(payloadText(data));
}

/** The payload digest of data whose JSON text is `text` (for a caller that has the text). */
export function textDigest(text: string): DigestText {
  return sha256Text(text);
}

/** The digest a payload stand-in carries, or `undefined` when `data` is not one. */
function standInDigest(data: unknown): DigestText | undefined {
  if (typeof data !== 'object' || data === null || !Object.hasOwn(data, SEALED_KEY)) {
    return undefined;
  }
  const sealed = (data as Record<string, unknown>)[SEALED_KEY];
  const digest =
    typeof sealed === 'object' && sealed !== null
      ? (sealed as Record<string, unknown>).digest
      : undefined;
  return typeof digest === 'string' && isDigestText(digest) ? digest : undefined;
}

/**
 * The leaf digest of an event: SHA-256 of the JSON array
 * `[time, type, payload digest, surfaceOp, sources]` (an absent field as `null`, the payload
 * digest as text). The envelope is hashed with a digest of the payload, not the payload, so an
 * encrypted payload (whose stand-in carries that digest) checks without its key.
 */
export function leafDigest(event: SessionEvent): DigestText {
  const { surfaceOp, sourceEventSeqs } = event;
  // The text `JSON.stringify` makes of the array, put together by hand: a time and seqs are
  // integers, a digest needs no escaping, and this runs once per event appended.
  return sha256Text(
    `[${event.time},${typeText(event.type)},"${payloadDigest(event.data)}",${
      surfaceOp === undefined ? 'null' : JSON.stringify(surfaceOp)
    },${sourceEventSeqs === undefined ? 'null' : `[${sourceEventSeqs.join(',')}]`}]`,
  );
}

/** Event types as JSON text, made once each: a session uses a few dozen. */
const typeTexts = new Map<string, string>();
const MAX_TYPE_TEXTS = 256;

function typeText(type: string): string {
  let text = typeTexts.get(type);
  if (text === undefined) {
    text = JSON.stringify(type);
    if (typeTexts.size < MAX_TYPE_TEXTS) typeTexts.set(type, text);
  }
  return text;
}

/** The first head of a chain: it names the session that started it. */
export function genesisDigest(session: string): DigestText {
  return sha256Text(`palimpsest chain 1\0${session}`);
}

/** Whether `text` is the text of a SHA-256 digest (`sha256:` and 43 base64url characters). */
export function isDigestText(text: string): boolean {
  return parseDigest(text) !== undefined;
}

/** The digest a text names, or `undefined` when it is not the text of a SHA-256 digest. */
export function parseDigest(text: string): Buffer | undefined {
  if (!text.startsWith(DIGEST_PREFIX)) return undefined;
  const bytes = Buffer.from(text.slice(DIGEST_PREFIX.length), 'base64url');
  return bytes.length === 32 && `${DIGEST_PREFIX}${bytes.toString('base64url')}` === text
    ? bytes
    : undefined;
}

/** The short form of a leaf a checkpoint keeps: its first six bytes, in base64url. */
export function shortLeaf(leaf: DigestText): string {
  return leaf.slice(DIGEST_PREFIX.length, DIGEST_PREFIX.length + SHORT_LEAF_CHARS);
}

/**
 * A chain segment being hashed: the head of the checkpoint before it, then the leaves since.
 * The leaves are kept and hashed when a head is asked for (once per checkpoint), so adding one
 * costs no more than keeping it. A head is the SHA-256 of the previous head's text followed by
 * the text of each leaf.
 */
export class ChainSegment {
  readonly #previous: DigestText;
  readonly #leaves: DigestText[] = [];
  /** The first seq of the segment. */
  readonly from: number;

  constructor(previousHead: DigestText, from: number) {
    this.#previous = previousHead;
    this.from = from;
  }

  /** Adds the next event's leaf. */
  push(leaf: DigestText): void {
    this.#leaves.push(leaf);
  }

  /** Events pushed so far. */
  get length(): number {
    return this.#leaves.length;
  }

  /** The head over everything pushed so far. */
  head(): DigestText {
    return sha256Text(this.#previous + this.#leaves.join(''));
  }

  /** The short leaves pushed so far, run together. */
  shortLeaves(): string {
    return this.#leaves.map(shortLeaf).join('');
  }

  /** The short leaf of each event pushed. */
  shortLeafList(): string[] {
    return this.#leaves.map(shortLeaf);
  }
}
