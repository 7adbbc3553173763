/**
 * The exact request of a recorded call, sent to another model: the answer is recorded in a fork
 * of the session that ends where the call's step began, so the recording keeps its answer, the
 * fork holds the other one, and both rest on the same history. No tool runs in the fork: tool
 * calls the other model asks for are answered with a result that says so.
 */
import type { LanguageModelV3 } from '@ai-sdk/provider';
import {
  forkSession,
  type RequestHeaderData,
  type Session,
  type SessionEvent,
  type TokenUsage,
  type TurnEndReason,
} from '../core/index.js';
import {
  buildCallOptions,
  callModel,
  errorRun,
  knownSecrets,
  recordAssistantMessage,
  recordChunk,
  recordToolResult,
  StepStream,
  sessionRequestDigest,
} from '../model/index.js';
import { requestAt } from './request-at.js';

/** Options of {@link askAgain}. */
export interface AskAgainOptions {
  /** The model the request goes to. */
  readonly model: LanguageModelV3;
  /** The fork's id (a random UUID by default). */
  readonly id?: string;
  readonly signal?: AbortSignal;
}

/** One answer to the request: who gave it, what it said, what it cost. */
export interface AskedAnswer {
  /** The seq of its `assistant/message` (in the recording, or in the fork). */
  readonly seq: number;
  readonly provider: string;
  readonly model: string;
  readonly text: string;
  readonly finishReason: string;
  readonly usage?: TokenUsage;
}

/** What {@link askAgain} did. */
export interface AskAgainResult {
  /** The fork holding the other model's answer (in memory: store it to keep it). */
  readonly fork: Session;
  /** The seq of the call's `step/start` in the recording, where the fork ends. */
  readonly stepStartSeq: number;
  /** The recorded answer, when the call had one. */
  readonly recorded?: AskedAnswer;
  readonly answer: AskedAnswer;
  /** How the fork's turn ended (`error` with the provider's failure when the call failed). */
  readonly reason: TurnEndReason;
}

/**
 * Sends the request of the model call whose step holds `seq` (the last call without it), exactly
 * as the recording rebuilds it, to `options.model`, and records the answer in a fork of
 * `session` that ends just before that call's step: the fork continues the call's turn with one
 * step (the other model's header, its stream, its answer) and closes the turn. A provider
 * failure ends the fork's turn with it (`reason.kind === 'error'`); it is not thrown.
 *
 * @throws InvalidArgumentError when `seq` lies outside every step.
 *
 * @example
 * ```ts
 * import { Session } from 'palimpsest';
 * import { askAgain, runTurn } from 'palimpsest/agent';
 * import { scriptedModel } from 'palimpsest/testing';
 *
 * const session = Session.create({ id: 'asked' });
 * await runTurn({ session, model: scriptedModel([{ text: 'Paris.' }]), input: 'Capital of France?' });
 * const other = scriptedModel([{ text: 'Paris, France.' }], { modelId: 'other' });
 * const { recorded, answer, fork } = await askAgain(session, undefined, { model: other });
 * console.log(recorded?.text); // 'Paris.'
 * console.log(answer.text); // 'Paris, France.'
 * console.log(fork.header.parentSession); // 'asked'
 * ```
 */
export async function askAgain(
  session: Session,
  seq: number | undefined,
  options: AskAgainOptions,
): Promise<AskAgainResult> {
  const request = requestAt(session, seq);
  const { turn, step, stepStartSeq, answerSeq } = request;
  const model = options.model;
  const fork = forkSession(session, stepStartSeq - 1, {
    ...(options.id === undefined ? {} : { id: options.id }),
    openTurn: 'continue',
  });
  fork.append('step/start', { turn, step });
  const header: RequestHeaderData = {
    ...request.header,
    provider: model.provider,
    model: model.modelId,
  };
  fork.append('request/header', header);
  const digest = sessionRequestDigest(fork, header);
  const stream = new StepStream();
  const signal = options.signal ?? new AbortController().signal;
  // An error part's body may echo a credential: the log gets it redacted.
  const secrets = knownSecrets();
  const outcome = await callModel({
    model,
    request: buildCallOptions(header, request.messages),
    signal,
    retry: { maxRetries: 0, retryDelayMs: 0, maxRetryDelayMs: 0 },
    onPart: (part) => recordChunk(fork, turn, step, 1, stream, part, secrets),
  });
  const cut = signal.aborted ? 'aborted' : outcome.kind === 'failed' ? 'error' : undefined;
  const finishReason = cut ?? stream.finishReason ?? 'unknown';
  const written = recordAssistantMessage(
    fork,
    { turn, step },
    model,
    stream,
    finishReason,
    cut,
    digest,
  );
  if (cut === undefined) {
    for (const call of stream.toolCalls()) {
      const why = `Tool '${call.name}' (call ${call.id}) was not run: this answer was asked for again in a fork of session ${session.header.id}, where no tool runs.`;
      recordToolResult(
        fork,
        { turn, step, sourceSeq: written.event.seq },
        call,
        errorRun('TOOL_NOT_RUN', why),
        {},
      );
    }
  }
  fork.append('step/end', { turn, step });
  const reason: TurnEndReason =
    outcome.kind === 'failed' && !signal.aborted
      ? { kind: 'error', error: outcome.failure.failure }
      : signal.aborted
        ? { kind: 'aborted' }
        : { kind: 'completed' };
  fork.append('turn/end', { turn, reason });
  const recordedAnswer = answerSeq === undefined ? undefined : session.event(answerSeq);
  return {
    fork,
    stepStartSeq,
    ...(recordedAnswer?.type === 'assistant/message'
      ? { recorded: answerOf(recordedAnswer as SessionEvent<'assistant/message'>) }
      : {}),
    answer: answerOf(written.event),
    reason,
  };
}

function answerOf(event: SessionEvent<'assistant/message'>): AskedAnswer {
  const { message, finishReason, usage } = event.data;
  const source = message.source;
  return {
    seq: event.seq,
    provider: source.kind === 'model' ? source.provider : '',
    model: source.kind === 'model' ? source.model : '',
    text: message.content.map((block) => (block.type === 'text' ? block.text : '')).join(''),
    finishReason,
    ...(usage === undefined ? {} : { usage }),
  };
}
