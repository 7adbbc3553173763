/**
 * How many tokens the next request will carry. The provider's own count is the best figure:
 * the usage reported with the last assistant message (its input plus its output, which is now
 * history), plus an estimate of what entered the surface after it. When there is no such usage,
 * or a replace rewrote the surface since, the whole surface (and the system prompt and tool
 * schemas of the request header) is estimated with `estimateTokens`.
 */

import {
  deriveEventMessage,
  estimateTokens,
  type RequestHeaderData,
  requestHeaderAt,
  type Session,
  type SessionEvent,
} from '../core/index.js';
import { messageTokens } from '../model/index.js';
import { priceSurface } from './surface-entries.js';

/** A token count and where it came from. */
export interface ContextTokens {
  readonly tokens: number;
  /** `usage`: anchored on the provider's last report; `estimate`: estimated throughout. */
  readonly source: 'usage' | 'estimate';
}

/** The tokens the next request of `session` will carry; see the module notes. */
export function contextTokens(session: Session): ContextTokens {
  let rewritten = false;
  for (let seq = session.seq - 1; seq >= 0; seq--) {
    const event = session.event(seq);
    if (event === undefined) continue;
    if (typeof event.surfaceOp === 'object') rewritten = true;
    if (event.type !== 'assistant/message') continue;
    const usage = event.data.usage;
    if (rewritten || usage?.inputTokens === undefined) break;
    let tokens = usage.inputTokens + (usage.outputTokens ?? 0);
    // No replace since that message: what entered after it is the surface's tail, in seq order,
    // so only the tail is priced (this runs before every step of the automatic policy).
    const surface = session.surface;
    for (let index = surface.size - 1; index >= 0; index--) {
      const tail = surface.at(index);
      if (tail === undefined || tail <= seq) break;
      const message = deriveEventMessage(session.event(tail) as SessionEvent);
      if (message !== null) tokens += messageTokens(message);
    }
    return { tokens, source: 'usage' };
  }
  return {
    tokens:
      priceSurface(session).totalTokens + headerTokens(requestHeaderAt(session, session.seq - 1)),
    source: 'estimate',
  };
}

function headerTokens(header: RequestHeaderData | undefined): number {
  if (header === undefined) return 0;
  let tokens = estimateTokens(header.system ?? '');
  for (const tool of header.tools ?? []) {
    tokens += estimateTokens(tool.name) + estimateTokens(tool.description ?? '');
    tokens += estimateTokens(JSON.stringify(tool.parameters));
  }
  return tokens;
}
