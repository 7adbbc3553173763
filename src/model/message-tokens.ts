/**
 * The token estimate of a message, computed once per message object: messages are frozen and
 * live as long as their events, and compaction policies and the cache report price the same
 * messages call after call.
 */
import { estimateMessageTokens, type Message } from '../core/index.js';

const priced = new WeakMap<Message, number>();

/** Estimated tokens of a message (core's `estimateMessageTokens`), cached per message. */
export function messageTokens(message: Message): number {
  let tokens = priced.get(message);
  if (tokens === undefined) {
    tokens = estimateMessageTokens(message);
    priced.set(message, tokens);
  }
  return tokens;
}

/**
 * {@link messageTokens} for a reader that keeps the figure itself (the rent ledger, once per
 * entry): a figure already known is reused, a new one is not remembered, sparing a long
 * session's load a weak map of every message it priced.
 */
export function messageTokensOnce(message: Message): number {
  return priced.get(message) ?? estimateMessageTokens(message);
}
