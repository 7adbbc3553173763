/**
 * The digest of a model request: what lets a log say which request each call received, a
 * rebuilt request be checked against it, and a recorded answer be found again for the same
 * request. It covers everything the model is asked (provider, model, system prompt, tools,
 * settings, messages) and nothing of the transport (abort signal, HTTP headers).
 */

import { createHash, type Hash } from 'node:crypto';
import type { LanguageModelV3CallOptions } from '@ai-sdk/provider';
import type { Message, MessageCursor, RequestHeaderData, Session } from '../core/index.js';
import { buildPrompt } from './prompt.js';
import { buildCallOptions } from './request.js';

/** The request a call received, in palimpsest's canonical form. */
export interface CanonicalRequest {
  readonly provider: string;
  readonly model: string;
  /** The call options without the transport's fields (`abortSignal`, `headers`). */
  readonly options: LanguageModelV3CallOptions;
}

/** The canonical request of a header and the messages of the surface. */
export function canonicalRequest(
  header: RequestHeaderData,
  messages: readonly Message[],
): CanonicalRequest {
  return {
    provider: header.provider,
    model: header.model,
    options: buildCallOptions(header, messages),
  };
}

/**
 * The digest of the request built from `header` and `messages`: `sha256:` and 64 hex digits.
 * It is taken over the header's part of the request (provider, model, system prompt, tools,
 * settings) as canonical JSON (keys sorted, `undefined` left out, bytes as base64), then over
 * the digest of each message's provider form in order: a message's digest is computed once per
 * message object, so a step hashes its new messages and a short line per older one, not its
 * whole history again. Two requests the model would receive alike (equal on the wire; message
 * ids and sources are not sent) have the same digest.
 */
export function requestDigest(header: RequestHeaderData, messages: readonly Message[]): string {
  const running = new RunningDigest(headText(header));
  for (const message of messages) running.add(messageDigest(message));
  return running.value();
}

/**
 * A {@link requestDigest} being taken: the hash of a header's text and of the message digests
 * added so far, readable at any point and extended after, so that request after request of one
 * conversation hashes only what each added.
 */
export class RunningDigest {
  private readonly hash: Hash;

  constructor(readonly head: string) {
    this.hash = createHash('sha256').update(head);
  }

  /** Adds the digest of the request's next message ({@link messageFacts}). */
  add(messageDigest: string): void {
    this.hash.update(`\n${messageDigest}`);
  }

  /** The digest of the request so far: `sha256:` and 64 hex digits. */
  value(): string {
    return `sha256:${this.hash.copy().digest('hex')}`;
  }
}

/** Header texts by the header's JSON text (a few, the oldest dropped). */
const headTexts = new Map<string, string>();
const HEAD_TEXTS = 16;

/**
 * The header's part of a request as canonical JSON: the text a digest begins with. A writer
 * sends the same header with every step, built afresh each time; a header is JSON, so headers
 * with the same JSON text have the same canonical text, which is computed once (keyed by the
 * text, not the object: a header object changed since is read as it is now).
 */
export function headText(header: RequestHeaderData): string {
  const key = JSON.stringify(header);
  let text = headTexts.get(key);
  if (text === undefined) {
    const head: CanonicalRequest = {
      provider: header.provider,
      model: header.model,
      options: buildCallOptions(header, []),
    };
    text = canonicalJson(head);
    // The oldest goes first: a process rarely uses more than a few headers at a time.
    if (headTexts.size >= HEAD_TEXTS) headTexts.delete(headTexts.keys().next().value as string);
    headTexts.set(key, text);
  }
  return text;
}

/**
 * {@link requestDigest} of request after request of one session, each given as its surface (the
 * seqs of its entries in order): the hash of the header and the entries so far is kept and only
 * new entries are added to it, so a session's calls cost what each added, not their whole
 * history each. An entry whose event derives no message (an empty assistant message) adds
 * nothing, as it sends nothing.
 */
export class RequestDigester {
  private running: RunningDigest | undefined;
  /** How many entries of the surface the running digest holds. */
  private entries = 0;

  constructor(private readonly messageOf: (seq: number) => Message | null) {}

  /**
   * The digest of `header` and the messages of `surface`, where `surface[0..unchanged)` are the
   * entries of the previous call's surface (pass 0 when that is not known).
   */
  digest(header: RequestHeaderData, surface: readonly number[], unchanged: number): string {
    const head = headText(header);
    let from = this.entries;
    if (
      this.running === undefined ||
      head !== this.running.head ||
      unchanged < from ||
      surface.length < from
    ) {
      this.running = new RunningDigest(head);
      from = 0;
    }
    for (let index = from; index < surface.length; index++) {
      const message = this.messageOf(surface[index] as number);
      if (message !== null) this.running.add(messageDigest(message));
    }
    this.entries = surface.length;
    return this.running.value();
  }
}

const sessionDigests = new WeakMap<
  Session,
  { readonly running: RunningDigest; readonly cursor: MessageCursor }
>();

/**
 * {@link requestDigest} of `header` and the messages `session` derives now, kept per session so
 * a step hashes only the messages derived since the session's previous digest (all of them
 * again after a replace or a header change): what a writer records beside each call.
 */
export function sessionRequestDigest(session: Session, header: RequestHeaderData): string {
  const head = headText(header);
  const last = sessionDigests.get(session);
  const delta = session.deriveMessagesSince(last?.running.head === head ? last.cursor : undefined);
  const running = delta.reset || last === undefined ? new RunningDigest(head) : last.running;
  for (const message of delta.messages) running.add(messageDigest(message));
  sessionDigests.set(session, { running, cursor: delta.cursor });
  return running.value();
}

/** A message's part of a request: the digest and length of its provider form. */
export interface MessageFacts {
  readonly digest: string;
  /** Characters of the message's provider form as canonical JSON. */
  readonly chars: number;
}

const messageFactsCache = new WeakMap<Message, MessageFacts>();

/**
 * The digest and length of a message's provider form, computed once per message object
 * (messages are frozen and live as long as their events).
 */
export function messageFacts(message: Message): MessageFacts {
  let facts = messageFactsCache.get(message);
  if (facts === undefined) {
    const text = messageText(message);
    facts = { digest: createHash('sha256').update(text).digest('hex'), chars: text.length };
    messageFactsCache.set(message, facts);
  }
  return facts;
}

/** A message's provider form as canonical JSON: the text its digest is taken over. */
export function messageText(message: Message): string {
  return canonicalJson(buildPrompt(undefined, [message]));
}

function messageDigest(message: Message): string {
  return messageFacts(message).digest;
}

/** JSON with object keys sorted at every depth: the text a digest is taken over. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, item: unknown) => {
    if (item instanceof Uint8Array) return { base64: base64Of(item) };
    if (item instanceof URL) return item.href;
    if (item === null || typeof item !== 'object' || Array.isArray(item)) return item;
    const sorted: Record<string, unknown> = {};
    for (const key of Object.keys(item).sort())
      sorted[key] = (item as Record<string, unknown>)[key];
    return sorted;
  });
}

function base64Of(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
}
