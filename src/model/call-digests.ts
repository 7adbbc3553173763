/**
 * The digest of every model call's request, rebuilt from the log in one pass: what `verify`
 * checks recorded digests against and what a replay matches requests by. Each call costs the
 * messages it added (the running hash is kept between calls and restarted only when a replace
 * rewrote the surface before its end, or the header changed).
 */
import {
  deriveEventMessage,
  type RequestHeaderData,
  type Session,
  type SessionEvent,
} from '../core/index.js';
import { walkCalls } from './call-walk.js';
import { RequestDigester } from './request-digest.js';

/** A model call of the log with the digest of the request rebuilt for it. */
export interface CallDigest {
  /** The seq of the call's `assistant/message`. */
  readonly seq: number;
  readonly answer: SessionEvent<'assistant/message'>;
  /** The seq of the call's `step/start`. */
  readonly stepStartSeq: number;
  /** The request header in effect; absent when none was logged before the call. */
  readonly header: RequestHeaderData | undefined;
  /** The digest of the rebuilt request; absent without a header. */
  readonly digest: string | undefined;
}

/** Every model call whose answer entered the surface, in log order, with its request's digest. */
export function callDigests(session: Session): CallDigest[] {
  const calls: CallDigest[] = [];
  const digester = new RequestDigester((seq) => {
    const event = session.event(seq);
    return event === undefined ? null : deriveEventMessage(event);
  });
  /** The lowest surface index a replace touched since the digester last read the surface. */
  let firstChange = Number.POSITIVE_INFINITY;
  let pending: Omit<CallDigest, 'seq' | 'answer'> | undefined;
  walkCalls(session, {
    begin: ({ stepStartSeq, header, order, changedFrom }) => {
      // A call without a header is not digested: its changes count for the next one.
      firstChange = Math.min(firstChange, changedFrom);
      let digest: string | undefined;
      if (header !== undefined) {
        digest = digester.digest(header, order, firstChange);
        firstChange = Number.POSITIVE_INFINITY;
      }
      pending = { stepStartSeq, header, digest };
    },
    answer: (seq, answer) => {
      if (pending !== undefined) calls.push({ seq, answer, ...pending });
      pending = undefined;
    },
  });
  return calls;
}
