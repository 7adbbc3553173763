/**
 * Request ids: what makes a resent prompt safe. A client that sent a prompt and heard nothing
 * back (a timeout, a worker killed between committing the prompt and answering) cannot tell
 * whether it landed; it sends it again with the same id. The id travels in the message's source
 * (`{kind: 'user', requestId}`), so the log itself says which requests it admitted, on every
 * store, and a resend finds its first admission instead of adding the input twice.
 */
import type { Session, SessionEvent, UserContentBlock, UserMessage } from '../core/index.js';
import { isEventOfType } from '../core/index.js';
import { AgentError } from './errors.js';

/** Longest request id accepted, in UTF-16 units: an id is a key, not a payload. */
export const MAX_REQUEST_ID_LENGTH = 200;

/** Where a request id was first admitted: the event that carries it. */
export interface AdmittedRequest {
  readonly seq: number;
  readonly type: 'user/message' | 'queue/steer' | 'queue/follow-up';
  readonly message: UserMessage;
}

/**
 * `requestId` checked: a non-empty string of at most {@link MAX_REQUEST_ID_LENGTH} units.
 *
 * @throws AgentError `INVALID_INPUT` otherwise.
 */
export function checkRequestId(requestId: unknown): string {
  if (
    typeof requestId !== 'string' ||
    requestId.length === 0 ||
    requestId.length > MAX_REQUEST_ID_LENGTH
  ) {
    const found =
      typeof requestId === 'string' ? `a string of ${requestId.length} units` : typeof requestId;
    throw new AgentError(
      'INVALID_INPUT',
      `expected requestId to be a non-empty string of at most ${MAX_REQUEST_ID_LENGTH} units, found ${found}`,
    );
  }
  return requestId;
}

/** The source of a message a request brings: the user's, naming the request when it has an id. */
export function userSource(requestId: string | undefined): UserMessage['source'] {
  return requestId === undefined ? { kind: 'user' } : { kind: 'user', requestId };
}

/** The request ids a session's log has admitted, indexed once and extended as the log grows. */
class RequestIndex {
  private scanned = 0;
  private readonly admitted = new Map<string, AdmittedRequest>();

  constructor(private readonly session: Session) {}

  find(requestId: string): AdmittedRequest | undefined {
    for (; this.scanned < this.session.seq; this.scanned++) {
      const event = this.session.event(this.scanned);
      if (event !== undefined) this.index(event);
    }
    return this.admitted.get(requestId);
  }

  private index(event: SessionEvent): void {
    if (
      !isEventOfType(event, 'user/message') &&
      !isEventOfType(event, 'queue/steer') &&
      !isEventOfType(event, 'queue/follow-up')
    ) {
      return;
    }
    const message = event.data;
    const id = message.source.requestId;
    // The first admission is the one a resend answers with.
    if (typeof id === 'string' && !this.admitted.has(id)) {
      this.admitted.set(id, { seq: event.seq, type: event.type, message });
    }
  }
}

const indexes = new WeakMap<Session, RequestIndex>();

/** Where the log first admitted `requestId`, if it did. */
export function findRequest(session: Session, requestId: string): AdmittedRequest | undefined {
  let index = indexes.get(session);
  if (index === undefined) {
    index = new RequestIndex(session);
    indexes.set(session, index);
  }
  return index.find(requestId);
}

/**
 * Checks that a resend is the request it claims to be: the same kind and the same input.
 *
 * @throws AgentError `REQUEST_REUSED` when the id was admitted with another kind or input.
 */
export function checkResend(
  admitted: AdmittedRequest,
  kinds: readonly AdmittedRequest['type'][],
  content: readonly UserContentBlock[],
  requestId: string,
): void {
  const sameKind = kinds.includes(admitted.type);
  if (sameKind && JSON.stringify(admitted.message.content) === JSON.stringify(content)) return;
  throw new AgentError(
    'REQUEST_REUSED',
    `expected request ${JSON.stringify(requestId)} to be resent with the input it was admitted with (a ${kinds.join(' or ')}), found it admitted at seq ${admitted.seq} as a ${admitted.type}${sameKind ? ' with other content' : ''}; use a new request id for a new request`,
  );
}
