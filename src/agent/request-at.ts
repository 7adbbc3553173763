/**
 * The request a model call received, read from the log at any point, and the check that every
 * digest a writer recorded beside a call still equals the digest of the request rebuilt from the
 * log: a rebuild that drifted (a changed derivation, a damaged event that still parses) is
 * caught instead of silently replaying something else.
 */
import type { Message, RequestHeaderData, Session, SessionEvent } from '../core/index.js';
import { InvalidArgumentError, isEventOfType, redactedSeqs } from '../core/index.js';
import {
  type CanonicalRequest,
  callDigests,
  canonicalRequest,
  requestDigest,
} from '../model/index.js';
import { requestOfStep } from './rebuild.js';

/** The request of one model call, rebuilt from the log. */
export interface RequestAt {
  readonly turn: number;
  readonly step: number;
  /** The seq of the call's `step/start`. */
  readonly stepStartSeq: number;
  readonly header: RequestHeaderData;
  /** The messages the model received, as palimpsest holds them. */
  readonly messages: readonly Message[];
  /** Provider, model and call options: what the model was asked. */
  readonly request: CanonicalRequest;
  /** The digest of the rebuilt request ({@link requestDigest}). */
  readonly digest: string;
  /** The seq of the call's `assistant/message`, when it has one. */
  readonly answerSeq?: number;
  /** The digest the writer recorded with the answer, when it recorded one. */
  readonly recordedDigest?: string;
}

/**
 * The request of the model call whose step holds `seq` (from its `step/start` to its
 * `step/end`); without `seq`, of the session's last call.
 *
 * @throws InvalidArgumentError when `seq` is not an event of the session, lies outside every
 *   step, or the step has no request header.
 *
 * @example
 * ```ts
 * import { Session } from 'palimpsest';
 * import { requestAt, runTurn } from 'palimpsest/agent';
 * import { scriptedModel } from 'palimpsest/testing';
 *
 * const session = Session.create({ id: 'request-at' });
 * await runTurn({ session, model: scriptedModel([{ text: 'Hi!' }]), system: 'Be brief.', input: 'Hello' });
 * const request = requestAt(session);
 * console.log(request.messages.length); // 1
 * console.log(request.digest === request.recordedDigest); // true
 * ```
 */
export function requestAt(session: Session, seq?: number): RequestAt {
  const last = session.seq - 1;
  const at = seq ?? lastCallSeq(session);
  if (!Number.isInteger(at) || at < 0 || at > last) {
    throw new InvalidArgumentError(
      seq === undefined
        ? `expected session ${session.header.id} to hold a model call, found none`
        : `expected the seq of an event of session ${session.header.id} (0..${last}), found ${seq}`,
    );
  }
  const stepStartSeq = stepStartOf(session, at);
  const { header, messages, turn, step } = requestOfStep(session, stepStartSeq);
  const request = canonicalRequest(header, messages);
  const answer = answerOf(session, stepStartSeq);
  const recorded = answer?.data.requestDigest;
  return {
    turn,
    step,
    stepStartSeq,
    header,
    messages,
    request,
    digest: requestDigest(header, messages),
    ...(answer === undefined ? {} : { answerSeq: answer.seq }),
    ...(recorded === undefined ? {} : { recordedDigest: recorded }),
  };
}

/** A recorded request digest that differs from the digest of the request rebuilt from the log. */
export interface RequestDigestMismatch {
  /** The seq of the `assistant/message` that recorded the digest. */
  readonly seq: number;
  readonly recorded: string;
  readonly rebuilt: string;
  /**
   * The `log/redaction` that explains the difference: it erased an event before this answer,
   * so the request rebuilt now holds placeholders where the model saw the erased content.
   */
  readonly redactedBy?: number;
}

/**
 * Every answer whose recorded request digest differs from its rebuilt request's. Empty when every
 * recorded digest holds; answers without a digest are not checked. A difference that follows an
 * erasure names the redaction (`redactedBy`): expected, not a drift.
 */
export function checkRequestDigests(session: Session): RequestDigestMismatch[] {
  const mismatches: RequestDigestMismatch[] = [];
  const redacted = [...redactedSeqs(session.events)].sort(([a], [b]) => a - b);
  for (const { seq, answer, digest } of callDigests(session)) {
    const recorded = answer.data.requestDigest;
    if (recorded === undefined) continue;
    const rebuilt = digest ?? 'none (no request header before the call)';
    if (rebuilt === recorded) continue;
    const by = redacted.find(([erased]) => erased < seq)?.[1];
    mismatches.push({ seq, recorded, rebuilt, ...(by === undefined ? {} : { redactedBy: by }) });
  }
  return mismatches;
}

/** The seq of the last `step/start` that began a model call. */
function lastCallSeq(session: Session): number {
  for (let seq = session.seq - 1; seq >= 0; seq--) {
    if (session.event(seq)?.type === 'step/start') return seq;
  }
  return -1;
}

/** The `step/start` of the step holding `seq`. */
function stepStartOf(session: Session, seq: number): number {
  for (let at = seq; at >= 0; at--) {
    const type = session.event(at)?.type;
    if (type === 'step/start') return at;
    if ((type === 'step/end' && at < seq) || type === 'turn/start' || type === 'turn/end') break;
  }
  throw new InvalidArgumentError(
    `expected seq ${seq} of session ${session.header.id} to lie inside a step (a model call), found it outside every step`,
  );
}

/** The step's `assistant/message` that entered the surface. */
function answerOf(
  session: Session,
  stepStartSeq: number,
): SessionEvent<'assistant/message'> | undefined {
  for (let seq = stepStartSeq + 1; seq < session.seq; seq++) {
    const event = session.event(seq);
    if (event === undefined) continue;
    if (event.type === 'step/end' || event.type === 'step/start') return undefined;
    if (isEventOfType(event, 'assistant/message') && event.surfaceOp === 'append') return event;
  }
  return undefined;
}
