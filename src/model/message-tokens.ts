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
