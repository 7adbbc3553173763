/**
 * Eval cases cut from the log: the exact request a model call received, with the answer it gave
 * as the expected output, in the chat format fine-tuning and eval tools load (OpenAI's `messages`
 * and `tools`), each carrying where it came from.
 */
import type { JsonValue, Session } from '../core/index.js';
import { InvalidArgumentError, isEventOfType } from '../core/index.js';
import { openaiBody } from '../model/index.js';
import { requestAt } from './request-at.js';

/** One eval case: the request's messages, the recorded answer last, and its provenance. */
export interface EvalCase {
  /** The request as OpenAI chat messages (system first), then the recorded answer. */
  readonly messages: readonly JsonValue[];
  /** The request's tools as OpenAI function tools, when it had any. */
  readonly tools?: readonly JsonValue[];
  readonly metadata: {
    readonly session: string;
    /** The seq of the answer's `assistant/message`. */
    readonly seq: number;
    readonly turn: number;
    readonly step: number;
    readonly provider: string;
    readonly model: string;
    /** The digest of the request rebuilt from the log. */
    readonly requestDigest: string;
  };
}

/**
 * The eval case of the model call whose step holds `seq`: its request, and its answer as the
 * expected output.
 *
 * @throws InvalidArgumentError when `seq` lies outside every step, or the call has no answer.
 *
 * @example
 * ```ts
 * import { Session } from 'palimpsest';
 * import { runTurn, toEvalCase } from 'palimpsest/agent';
 * import { scriptedModel } from 'palimpsest/testing';
 *
 * const session = Session.create({ id: 'evals' });
 * await runTurn({ session, model: scriptedModel([{ text: '4' }]), system: 'Answer with a number.', input: '2 + 2?' });
 * const [answer] = session.events.filter((event) => event.type === 'assistant/message');
 * const evalCase = toEvalCase(session, answer?.seq ?? 0);
 * console.log(JSON.stringify(evalCase.messages.at(-1))); // '{"role":"assistant","content":"4"}'
 * ```
 */
export function toEvalCase(session: Session, seq: number): EvalCase {
  const request = requestAt(session, seq);
  const answerSeq = request.answerSeq;
  const answer = answerSeq === undefined ? undefined : session.event(answerSeq);
  if (
    answerSeq === undefined ||
    answer === undefined ||
    !isEventOfType(answer, 'assistant/message')
  ) {
    throw new InvalidArgumentError(
      `expected the model call at seq ${seq} of session ${session.header.id} to have an answer, found none (the call failed before its message, or is still streaming)`,
    );
  }
  const body = openaiBody(request.header, [...request.messages, answer.data.message]) as {
    messages: JsonValue[];
    tools?: JsonValue[];
  };
  return {
    messages: body.messages,
    ...(body.tools === undefined ? {} : { tools: body.tools }),
    metadata: {
      session: session.header.id,
      seq: answerSeq,
      turn: request.turn,
      step: request.step,
      provider: request.header.provider,
      model: request.header.model,
      requestDigest: request.digest,
    },
  };
}

/**
 * The seqs of the answers that ended the session's turns: for each turn that ended, its last
 * answer (the one a user read), whatever the turn's end reason.
 */
export function turnEndAnswers(session: Session): number[] {
  const seqs: number[] = [];
  let last: number | undefined;
  for (let seq = 0; seq < session.seq; seq++) {
    const event = session.event(seq);
    if (event === undefined) continue;
    if (isEventOfType(event, 'turn/start')) last = undefined;
    else if (isEventOfType(event, 'assistant/message') && event.surfaceOp === 'append') last = seq;
    else if (isEventOfType(event, 'turn/end') && last !== undefined) {
      seqs.push(last);
      last = undefined;
    }
  }
  return seqs;
}
