/**
 * Stream chunks sealed together. A streamed turn is mostly `assistant/chunk` events (200 a turn
 * in the benchmarks), each a few dozen bytes, and a cipher context per event costs more than
 * encrypting its bytes. So a stretch of consecutive chunks of one write is sealed as one
 * AES-256-GCM record, kept on its first chunk (the head); every other chunk of the stretch holds
 * only its own digest and the head's seq. Each chunk still has its own event, envelope and
 * digest, so the stores, the surface and the hash chain see one event per chunk as before.
 *
 * Head: `{"~sealed": {"iv", "data", "digest", "n"}}` (`data`: the chunks' JSON texts joined by
 * `\n`, which JSON text never holds raw, then the tag). Member: `{"~sealed": {"digest", "in"}}`.
 */
import type { KeyObject } from 'node:crypto';
import type { JsonValue, SessionEvent } from '../../core/index.js';
import { EncryptionError } from '../contract/errors.js';
import { SEALED_KEY, textDigest } from '../integrity/chain.js';
import { payloadText } from '../integrity/payload-text.js';
import { gcmOpen, gcmSeal, nextIv, sealedParts } from './gcm.js';
import { isSealed, sealEvent } from './seal.js';

/** Whether an event may join a stretch: a chunk as streams write it (no sources, no surface op). */
function stretchable(event: SessionEvent): boolean {
  return (
    event.type === 'assistant/chunk' &&
    event.sourceEventSeqs === undefined &&
    event.surfaceOp === undefined
  );
}

function associatedData(session: string, head: number, count: number): Buffer {
  return Buffer.from(`palimpsest stretch 1\0${session}\0${head}\0${count}`);
}

/**
 * The events of one write sealed: each run of two or more consecutive chunks as a stretch, every
 * other event on its own (`sealEvent`).
 */
export function sealEvents(
  events: readonly SessionEvent[],
  session: string,
  key: KeyObject,
): SessionEvent[] {
  const sealed: SessionEvent[] = [];
  let at = 0;
  while (at < events.length) {
    let end = at;
    while (end < events.length && stretchable(events[end] as SessionEvent)) end++;
    if (end - at >= 2) {
      sealStretch(events.slice(at, end), session, key, sealed);
      at = end;
    } else {
      sealed.push(sealEvent(events[at] as SessionEvent, session, key));
      at++;
    }
  }
  return sealed;
}

function sealStretch(
  chunks: readonly SessionEvent[],
  session: string,
  key: KeyObject,
  out: SessionEvent[],
): void {
  const head = (chunks[0] as SessionEvent).seq;
  const texts = chunks.map((chunk) => payloadText(chunk.data));
  const iv = nextIv();
  const body = gcmSeal(key, iv, associatedData(session, head, chunks.length), texts.join('\n'));
  chunks.forEach((chunk, i) => {
    const digest = textDigest(texts[i] as string);
    const data: JsonValue =
      i === 0
        ? {
            [SEALED_KEY]: {
              iv: iv.toString('base64url'),
              data: body.toString('base64url'),
              digest,
              n: chunks.length,
            },
          }
        : { [SEALED_KEY]: { digest, in: head } };
    out.push({ ...chunk, data } as SessionEvent);
  });
}

/** What a sealed event's data holds, field by field, unchecked. */
interface SealedFields {
  readonly iv?: unknown;
  readonly data?: unknown;
  readonly digest?: unknown;
  readonly n?: unknown;
  readonly in?: unknown;
}

function fieldsOf(event: SessionEvent): SealedFields | undefined {
  const data: unknown = event.data;
  if (!isSealed(data)) return undefined;
  const fields: unknown = data[SEALED_KEY];
  return typeof fields === 'object' && fields !== null ? (fields as SealedFields) : undefined;
}

/** The seq of the stretch head a member chunk needs, or `undefined` for any other event. */
export function headOf(event: SessionEvent): number | undefined {
  const fields = fieldsOf(event);
  return typeof fields?.in === 'number' ? fields.in : undefined;
}

/** Whether the event is the head of a sealed stretch. */
export function isStretchHead(event: SessionEvent): boolean {
  return typeof fieldsOf(event)?.n === 'number';
}

/**
 * Opens stretches: given their heads, the texts of every chunk they sealed. Heads are opened
 * once, when the first of their chunks is asked for.
 */
export class StretchOpener {
  readonly #session: string;
  readonly #key: KeyObject;
  readonly #heads = new Map<number, SessionEvent>();
  readonly #texts = new Map<number, readonly string[]>();

  constructor(session: string, key: KeyObject) {
    this.#session = session;
    this.#key = key;
  }

  /** Keeps `event` if it is a stretch head, for the chunks that follow it. */
  note(event: SessionEvent): void {
    if (isStretchHead(event)) this.#heads.set(event.seq, event);
  }

  /** Whether the head at `seq` was noted. */
  has(seq: number): boolean {
    return this.#heads.has(seq);
  }

  /**
   * The event with its data opened, when it is a chunk of a stretch (head or member); `undefined`
   * for any other event. A chunk whose head was not noted, or whose text is not what its digest
   * says, is an `EncryptionError` (`SEAL_BROKEN`).
   */
  open(event: SessionEvent): SessionEvent | undefined {
    const fields = fieldsOf(event);
    if (fields === undefined) return undefined;
    const head = typeof fields.n === 'number' ? event.seq : fields.in;
    if (typeof head !== 'number') return undefined;
    const texts = this.#textsOf(head, event.seq);
    const text = texts[event.seq - head];
    if (text === undefined || fields.digest !== textDigest(text)) {
      throw this.#broken(event.seq, 'is not the text its stretch sealed for it');
    }
    return { ...event, data: JSON.parse(text) as JsonValue } as SessionEvent;
  }

  #textsOf(head: number, seq: number): readonly string[] {
    const known = this.#texts.get(head);
    if (known !== undefined) return known;
    const event = this.#heads.get(head);
    const fields = event === undefined ? undefined : fieldsOf(event);
    if (fields === undefined) {
      throw this.#broken(seq, `names the stretch at seq ${head}, which is not there`);
    }
    const parts = sealedParts(fields.iv, fields.data);
    const count = fields.n;
    if (parts === undefined || typeof count !== 'number') {
      throw this.#broken(head, 'is not a nonce, a ciphertext and a count');
    }
    let plain: string;
    try {
      const aad = associatedData(this.#session, head, count);
      plain = gcmOpen(this.#key, parts.iv, aad, parts.body).toString('utf8');
    } catch (error) {
      throw new EncryptionError(
        'SEAL_BROKEN',
        `the sealed stretch at seq ${head} of session '${this.#session}' does not open with the session's key: it was altered, or sealed for another place`,
        this.#session,
        { cause: error },
      );
    }
    const texts = plain.split('\n');
    if (texts.length !== count)
      throw this.#broken(head, `holds ${texts.length} chunks, not ${count}`);
    this.#texts.set(head, texts);
    return texts;
  }

  #broken(seq: number, reason: string): EncryptionError {
    return new EncryptionError(
      'SEAL_BROKEN',
      `the sealed chunk at seq ${seq} of session '${this.#session}' ${reason}: it was altered`,
      this.#session,
    );
  }
}
