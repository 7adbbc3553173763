/**
 * One agent turn: the user's input, then model calls and tool executions until the model stops
 * asking for tools, every step recorded in the session as DESIGN §7 lists. Whatever happens —
 * cancellation, provider failure, a throwing hook — the turn leaves the session valid: every
 * bracket it opened is closed before `runTurn` returns or throws.
 */

import type { LanguageModelV3StreamPart } from '@ai-sdk/provider';
import type {
  AssistantMessage,
  Durable,
  FinishReason,
  RequestRetryData,
  Session,
  SessionEvent,
  TurnEndReason,
} from '../core/index.js';
import {
  endsInsideTurn,
  isDurable,
  isHeaderInEffect,
  lastTurnNumber,
  planRepair,
} from '../core/index.js';
import {
  addUsage,
  buildCallOptions,
  buildHeader,
  callModel,
  intentOf,
  knownSecrets,
  type RetryNotice,
  type RetryPolicy,
  recordAssistantMessage,
  recordChunk,
  retryPolicy,
  StepStream,
  sessionRequestDigest,
  type Tool,
  type UsageCounts,
  withPrice,
} from '../model/index.js';
import { checkInput, checkModel, countArg, invalidOption } from './checks.js';
import { AgentError } from './errors.js';
import { type ContextOverflowHandler, handleOverflow, isContextOverflow } from './overflow.js';
import { checkRequestId, checkResend, findRequest, userSource } from './requests.js';
import { resumeOpening } from './resume.js';
import { refuseTools, runTools } from './run-tools.js';
import { deliverSteers, hasPendingSteers } from './steering.js';
import { repairChildren } from './subagent-repair.js';
import { indexTools } from './tool-list.js';
import { readTurnRecord } from './turn-record.js';
import { lastResumption, readTurnResult, turnAround } from './turn-result.js';
import {
  DEFAULT_TOOL_OUTPUT_CHARS,
  type RunTurnOptions,
  type StepContext,
  type TurnHooks,
  type TurnResult,
} from './types.js';

const DEFAULT_MAX_STEPS = 25;
/** Finishes after which a response's tool calls are what the model meant (AI SDK 6 agrees). */
const SAFE_FINISHES: readonly FinishReason[] = ['stop', 'tool-calls'];

const busy = new WeakSet<Session>();

/**
 * Runs one turn on `session`. Provider failures and cancellation do not throw: they end the
 * turn with an `error` or `aborted` reason, returned in the result. Misuse throws
 * {@link AgentError}; a throwing hook or a failing store rethrows after the turn is closed.
 *
 * @throws AgentError `UNSUPPORTED_MODEL`, `INVALID_INPUT`, `INVALID_TOOL`, `TURN_IN_PROGRESS`,
 *   and `NOT_DURABLE` when `durability` is `required` and there is no barrier.
 *
 * @example
 * ```ts
 * import { Session } from 'palimpsest';
 * import { defineTool, runTurn } from 'palimpsest/agent';
 * import { scriptedModel } from 'palimpsest/testing';
 * import { z } from 'zod';
 *
 * // Any AI SDK model works here (`createDeepSeek()('deepseek-chat')`...); a scripted one keeps
 * // the example offline: it asks for the tool, then answers.
 * const model = scriptedModel([
 *   { toolCalls: [{ name: 'weather', args: { city: 'Lisbon' } }] },
 *   { text: 'Yes, 21 °C.' },
 * ]);
 * const weather = defineTool({
 *   name: 'weather',
 *   description: 'Current weather for a city.',
 *   parameters: z.object({ city: z.string() }),
 *   execute: async ({ city }) => ({ city, celsius: 21 }),
 * });
 * const session = Session.create({ id: 'turn-example' });
 * const result = await runTurn({ session, model, tools: [weather], input: 'Is it warm in Lisbon?' });
 * console.log(result.reason.kind); // 'completed'
 * console.log(result.steps); // 2: the tool call, then the answer
 * console.log(result.text); // 'Yes, 21 °C.'
 * // The model sees four messages; the log holds every stream chunk, call and bracket too.
 * console.log(session.deriveMessages().length); // 4
 * ```
 */
export async function runTurn(options: RunTurnOptions): Promise<TurnResult> {
  const content = checkInput(options.input);
  const requestId = options.requestId === undefined ? undefined : checkRequestId(options.requestId);
  if (requestId !== undefined) {
    const admitted = findRequest(options.session, requestId);
    if (admitted !== undefined) {
      checkResend(admitted, ['user/message'], content, requestId);
      return answerResend(options, admitted.seq);
    }
  }
  return startTurn(options, {
    open: (session) =>
      session.append(
        'user/message',
        { id: newId(), role: 'user', content, source: userSource(requestId) },
        { surfaceOp: 'append' },
      ),
  });
}

/**
 * A resent prompt: the result of the turn it started (or of the last turn that resumed it),
 * after resuming that turn when it was interrupted (a worker died in it; the session's next
 * writer repaired it).
 */
async function answerResend(options: TurnStartOptions, seq: number): Promise<TurnResult> {
  const { session } = options;
  const first = turnAround(session, seq);
  if (first === undefined) {
    throw new AgentError(
      'REQUEST_REUSED',
      `expected the prompt admitted at seq ${seq} of session ${session.header.id} to open a turn, found it outside every turn`,
    );
  }
  const last = lastResumption(session, first);
  if (last.end !== undefined && last.end.reason.kind !== 'interrupted') {
    return { ...readTurnResult(session, { ...last, end: last.end }), repeated: true };
  }
  const result = await startTurn(
    options,
    resumeOpening({ turn: last.turn, reason: 'interrupted' }),
  );
  return { ...result, repeated: true };
}

/**
 * How a turn begins: extra `turn/start` fields, and the event that opens it (the user's input,
 * a delivered follow-up, a resume notice), or none when the first step boundary's steering
 * messages are the turn's input.
 */
export interface TurnOpening {
  readonly start?: { readonly resumes: number };
  readonly open: (session: Session, turn: number) => SessionEvent | undefined;
}

/** What {@link startTurn} takes: a turn's options without the input its opening replaces. */
export type TurnStartOptions = Omit<RunTurnOptions, 'input'>;

/** Runs one turn that begins with `opening`; {@link runTurn} is this with the user's input. */
export async function startTurn(
  options: TurnStartOptions,
  opening: TurnOpening,
): Promise<TurnResult> {
  const { session } = options;
  checkModel(options.model);
  const tools = indexTools(options.tools ?? []);
  const barrier = barrierOf(options);
  if (busy.has(session)) {
    throw new AgentError(
      'TURN_IN_PROGRESS',
      `a turn is already running on session ${session.header.id}; wait for it (one writer per session)`,
    );
  }
  busy.add(session);
  try {
    // A resumed turn's subagents were cut off with it: their sessions say so before it goes on.
    if (opening.start !== undefined) await repairChildren(session, opening.start.resumes);
    return await new TurnRun(options, tools, opening, barrier).run();
  } finally {
    busy.delete(session);
  }
}

type StepEnd = TurnEndReason | undefined;

class TurnRun {
  private readonly session: Session;
  private readonly signal: AbortSignal;
  private readonly hooks: TurnHooks;
  private readonly retry: RetryPolicy;
  private readonly maxSteps: number;
  private readonly toolList: readonly Tool[];
  private readonly runToolsAfter: ReadonlySet<string>;
  private readonly maxToolOutputChars: number;
  private readonly onContextOverflow: ContextOverflowHandler | undefined;
  /** The current step retries a model call that overflowed the context (once, then give up). */
  private overflowRetry = false;
  /** Values of the caller's HTTP headers: credentials, redacted from anything logged. */
  private readonly secrets: readonly string[];
  /** The secrets an error chunk is redacted of: the provider keys and the caller's headers. */
  private readonly redacted: readonly string[];
  private turn = 0;
  private step = 0;
  private stepOpen = false;
  private lastText = '';
  /** The digest of the current step's request, recorded with its answer. */
  private requestDigest: string | undefined;
  private usage: UsageCounts = {};
  /** The attempt of the current step's model call (1-based). */
  private attempt = 1;
  /** The current attempt of the current step's model call. */
  private stream = new StepStream();

  constructor(
    private readonly options: TurnStartOptions,
    private readonly tools: ReadonlyMap<string, Tool>,
    private readonly opening: TurnOpening,
    private readonly barrier: Durable | undefined,
  ) {
    this.session = options.session;
    this.signal = options.signal ?? new AbortController().signal;
    this.hooks = options.hooks ?? {};
    this.retry = retryPolicy(options, invalidOption);
    this.maxSteps = Math.max(1, countArg('maxSteps', options.maxSteps, DEFAULT_MAX_STEPS));
    this.toolList = [...tools.values()];
    this.runToolsAfter = finishSet(options.runToolsAfter);
    this.maxToolOutputChars = Math.max(
      1,
      countArg('maxToolOutputChars', options.maxToolOutputChars, DEFAULT_TOOL_OUTPUT_CHARS),
    );
    this.secrets = Object.values(options.headers ?? {});
    this.redacted = knownSecrets(this.secrets);
    this.onContextOverflow = options.onContextOverflow;
  }

  async run(): Promise<TurnResult> {
    this.closeCrashedTurn();
    this.turn = lastTurnNumber(this.session) + 1;
    const start = this.emit(
      this.session.append('turn/start', { turn: this.turn, ...this.opening.start }),
    );
    const first = this.opening.open(this.session, this.turn);
    if (first !== undefined) this.emit(first);
    let reason: TurnEndReason;
    try {
      reason = await this.steps();
    } catch (error) {
      this.closeAfterThrow(error);
      throw error;
    }
    const end = this.emit(this.session.append('turn/end', { turn: this.turn, reason }));
    await this.barrier?.flush();
    return {
      turn: this.turn,
      reason,
      steps: this.step,
      text: this.lastText,
      usage: this.usage,
      startSeq: start.seq,
      endSeq: end.seq,
      ...readTurnRecord(this.session, start.seq, end.seq),
    };
  }

  private async steps(): Promise<TurnEndReason> {
    for (;;) {
      if (this.signal.aborted) return abortReason(this.signal);
      if (this.step >= this.maxSteps) return { kind: 'max-steps', maxSteps: this.maxSteps };
      // A step boundary: steering messages queued meanwhile enter the surface here, after
      // every tool result of the last step and before the next request is built.
      deliverSteers(this.session, this.emitEvent);
      this.step += 1;
      const end = await this.runStep();
      if (end === undefined) continue;
      // The model answered, but the user steered while it did: one more step answers that.
      if (isPlainCompletion(end) && !this.signal.aborted && hasPendingSteers(this.session))
        continue;
      return end;
    }
  }

  private async runStep(): Promise<StepEnd> {
    const context: StepContext = {
      session: this.session,
      turn: this.turn,
      step: this.step,
      signal: this.signal,
    };
    await this.hooks.beforeStep?.(context);
    if (this.signal.aborted) {
      // The step never opened: no model call was made for it.
      this.step -= 1;
      return abortReason(this.signal);
    }
    const { turn, step } = this;
    const stepStart = this.session.append('step/start', { turn, step });
    this.emit(stepStart);
    this.stepOpen = true;
    const header = withPrice(
      buildHeader(this.options.model, this.options.system, this.toolList, this.options.settings),
      this.options.prices,
      stepStart.time,
    );
    if (!isHeaderInEffect(this.session, header)) {
      this.emit(this.session.append('request/header', header));
    }
    const request = buildCallOptions(header, this.session.deriveMessageList());
    this.requestDigest = sessionRequestDigest(this.session, header);
    if (this.options.headers !== undefined) request.headers = { ...this.options.headers };

    this.stream = new StepStream();
    this.attempt = 1;
    const outcome = await callModel({
      model: this.options.model,
      request,
      signal: this.signal,
      retry: this.retry,
      onPart: this.onPart,
      onRetry: this.onRetry,
      secrets: this.secrets,
    });
    const { stream } = this;
    const cut: TurnEndReason | undefined = this.signal.aborted
      ? abortReason(this.signal)
      : outcome.kind === 'failed'
        ? { kind: 'error', error: outcome.failure.failure }
        : undefined;
    if (cut !== undefined) {
      const kind = cut.kind === 'aborted' ? 'aborted' : 'error';
      const { seq } = this.appendMessage(stream, kind, kind);
      this.emit(this.session.append('step/end', { turn, step }));
      this.stepOpen = false;
      if (cut.kind === 'error' && isContextOverflow(cut.error)) {
        const end = await handleOverflow(
          { ...context, error: cut.error, messageSeq: seq, retried: this.overflowRetry },
          this.onContextOverflow,
          this.emitEvent,
        );
        this.overflowRetry = end === undefined;
        return end;
      }
      return cut;
    }
    this.overflowRetry = false;

    const finishReason = stream.finishReason ?? 'unknown';
    const { message, seq: messageSeq } = this.appendMessage(stream, finishReason, undefined);
    const calls = stream.toolCalls();
    const refused = calls.length > 0 && !this.runToolsAfter.has(finishReason);
    const toolResults =
      calls.length === 0
        ? []
        : refused
          ? refuseTools(
              this.session,
              { turn, step, requestSeq: messageSeq, finishReason },
              calls,
              this.hooks,
            )
          : await runTools(
              {
                session: this.session,
                signal: this.signal,
                turn,
                step,
                tools: this.tools,
                onEvent: this.hooks.onEvent,
                onToolError: this.hooks.onToolError,
                beforeToolCall: this.hooks.beforeToolCall,
                afterToolCall: this.hooks.afterToolCall,
                requestSeq: messageSeq,
                maxOutputChars: this.maxToolOutputChars,
                barrier: () => this.barrier?.flush() ?? Promise.resolve(),
              },
              calls,
            );
    this.emit(this.session.append('step/end', { turn, step }));
    this.stepOpen = false;
    await this.hooks.afterStep?.({
      ...context,
      message,
      finishReason,
      ...(stream.usage === undefined ? {} : { usage: stream.usage }),
      toolResults,
    });
    if (this.signal.aborted) return abortReason(this.signal);
    // Calls that ran (an opted-in finish included) go back to the model in the next step.
    if (calls.length > 0 && !refused) return undefined;
    if (finishReason === 'length') return { kind: 'max-tokens' };
    if (refused) return { kind: 'completed', finishReason };
    return { kind: 'completed' };
  }

  /** Records one stream part; the hot path of the loop. */
  private readonly onPart = (part: LanguageModelV3StreamPart): void => {
    const event = recordChunk(
      this.session,
      this.turn,
      this.step,
      this.attempt,
      this.stream,
      part,
      this.redacted,
    );
    this.hooks.onEvent?.(event);
  };

  /** Records a failed attempt; the next attempt's parts go to a fresh stream. */
  private readonly onRetry = ({ attempt, delayMs, failure }: RetryNotice): void => {
    const failed = this.stream;
    const { retryAfterMs } = failure;
    const data: RequestRetryData = {
      turn: this.turn,
      step: this.step,
      attempt,
      delayMs,
      ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
      error: failure.failure,
    };
    const event = this.emit(
      this.session.append(
        'request/retry',
        data,
        failed.chunkSeqs.length === 0 ? undefined : { sourceEventSeqs: failed.chunkSeqs },
      ),
    );
    this.stream = new StepStream();
    this.attempt = attempt + 1;
    this.hooks.onRetry?.({ ...data, failedChunkSeqs: failed.chunkSeqs, event });
  };

  private appendMessage(
    stream: StepStream,
    finishReason: FinishReason,
    interrupted: 'aborted' | 'error' | undefined,
  ): { message: AssistantMessage; seq: number } {
    const position = { turn: this.turn, step: this.step };
    const recorded = recordAssistantMessage(
      this.session,
      position,
      this.options.model,
      stream,
      finishReason,
      interrupted,
      this.requestDigest,
    );
    this.emit(recorded.event);
    addUsage(this.usage, stream.usage);
    if (recorded.text !== '' || interrupted === undefined) this.lastText = recorded.text;
    return { message: recorded.message, seq: recorded.event.seq };
  }

  /** Closes what a crashed writer left open, with the same closers `openSession` writes. */
  private closeCrashedTurn(): void {
    if (!endsInsideTurn(this.session)) return;
    for (const closer of planRepair(this.session.events)) {
      this.emit(this.session.append(closer.type, closer.data, intentOf(closer)));
    }
  }

  /**
   * A hook or the store threw: close the open step and the turn so the log stays valid, then
   * let the caller see the original error. If the session itself refuses (a poisoned store),
   * the original error still wins; `openSession` repairs on the next open.
   */
  private closeAfterThrow(error: unknown): void {
    try {
      if (this.stepOpen) {
        for (const closer of planRepair(this.session.events)) {
          if (closer.type === 'turn/end') break;
          this.emit(this.session.append(closer.type, closer.data, intentOf(closer)));
        }
      }
      this.emit(
        this.session.append('turn/end', {
          turn: this.turn,
          reason: { kind: 'error', error: { message: describe(error), code: 'LOOP_FAILED' } },
        }),
      );
    } catch {
      // Keep the first error.
    }
  }

  private readonly emitEvent = (event: SessionEvent): void => {
    this.hooks.onEvent?.(event);
  };

  private emit<E extends SessionEvent>(event: E): E {
    this.hooks.onEvent?.(event);
    return event;
  }
}

/** A turn end after which the model has nothing more to do: where a pending steer continues it. */
function isPlainCompletion(reason: TurnEndReason): boolean {
  return reason.kind === 'completed' && reason.finishReason === undefined;
}

/** The finish reasons after which tools run; refuses anything but an array of strings. */
function finishSet(value: readonly FinishReason[] | undefined): ReadonlySet<string> {
  if (value === undefined) return new Set(SAFE_FINISHES);
  if (!Array.isArray(value) || !value.every((item) => typeof item === 'string')) {
    throw invalidOption(
      `expected runToolsAfter to be an array of finish reasons, found ${JSON.stringify(value) ?? String(value)}`,
    );
  }
  return new Set(value);
}

/** The barrier the turn waits on, or `undefined`; refuses a missing one when it is required. */
function barrierOf(options: TurnStartOptions): Durable | undefined {
  const durability = options.durability ?? 'best-effort';
  if (durability !== 'best-effort' && durability !== 'required') {
    throw invalidOption(
      `expected durability 'required' or 'best-effort', found ${String(durability)}`,
    );
  }
  const barrier = options.barrier ?? (isDurable(options.session) ? options.session : undefined);
  if (barrier === undefined && durability === 'required') {
    throw new AgentError(
      'NOT_DURABLE',
      `durability 'required' needs a barrier: session ${options.session.header.id} has no flush() (open it with openSession) and no barrier option was given`,
    );
  }
  return barrier;
}

function abortReason(signal: AbortSignal): TurnEndReason {
  const cause = signal.reason;
  if (cause === undefined) return { kind: 'aborted' };
  return { kind: 'aborted', cause: describe(cause) };
}

function describe(value: unknown): string {
  if (value instanceof Error) return value.message || value.name;
  return typeof value === 'string' ? value : String(value);
}

function newId(): string {
  return crypto.randomUUID();
}
