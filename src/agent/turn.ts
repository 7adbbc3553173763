/**
 * One agent turn: the user's input, then model calls and tool executions until the model stops
 * asking for tools, every step recorded in the session as DESIGN §7 lists. Whatever happens —
 * cancellation, provider failure, a throwing hook — the turn leaves the session valid: every
 * bracket it opened is closed before `runTurn` returns or throws.
 */

import type { LanguageModelV3, LanguageModelV3CallOptions } from '@ai-sdk/provider';
import type {
  AssistantMessage,
  FinishReason,
  ProvenanceIntent,
  RequestHeaderData,
  Session,
  SessionEvent,
  SurfaceIntent,
  TokenUsage,
  ToolCallBlock,
  ToolMessage,
  TurnEndReason,
  UserContentBlock,
  UserMessage,
} from '../core/index.js';
import { planRepair } from '../core/index.js';
import { sleep, untilAborted } from './abort.js';
import { AgentError } from './errors.js';
import { type AttemptFailure, backoffMs, classifyFailure } from './provider-failure.js';
import { buildCallOptions, buildHeader, type ModelSettings } from './request.js';
import { StepStream, type UsageCounts } from './step-stream.js';
import { abortedRun, indexTools, type Tool, type ToolRun, unknownToolRun } from './tools.js';
import { toChunk } from './wire-json.js';

/** A user's input: text, or content blocks (text and images). */
export type TurnInput = string | readonly UserContentBlock[];

/** Where the loop is: passed to hooks. */
export interface StepContext {
  readonly session: Session;
  readonly turn: number;
  readonly step: number;
  readonly signal: AbortSignal;
}

/** What one step produced: passed to `afterStep`. */
export interface StepOutcome extends StepContext {
  readonly message: AssistantMessage;
  readonly finishReason: FinishReason;
  readonly usage?: TokenUsage;
  readonly toolResults: readonly ToolMessage[];
}

/** Callbacks around the loop. A hook that throws ends the turn (brackets closed) and rethrows. */
export interface TurnHooks {
  /** Before each step opens: append context, or compact, here. */
  readonly beforeStep?: (context: StepContext) => void | Promise<void>;
  /** After each step closes. */
  readonly afterStep?: (outcome: StepOutcome) => void | Promise<void>;
  /** Every event the loop appends, right after it is appended (synchronously). */
  readonly onEvent?: (event: SessionEvent) => void;
}

/** Configuration that stays the same across turns (what {@link Agent} holds). */
export interface TurnConfig {
  readonly model: LanguageModelV3;
  readonly tools?: readonly Tool[];
  readonly system?: string;
  readonly settings?: ModelSettings;
  readonly hooks?: TurnHooks;
  /** Retries of a retryable provider failure per step (default 2). */
  readonly maxRetries?: number;
  /** The first retry's delay; later ones double (default 1000 ms; a longer `retry-after` wins). */
  readonly retryDelayMs?: number;
  /** The longest wait before a retry, whatever `retry-after` says (default 60 000 ms). */
  readonly maxRetryDelayMs?: number;
  /** Model calls per turn before the turn ends with `max-steps` (default 25). */
  readonly maxSteps?: number;
  /** HTTP headers for every model call; not recorded (they often hold credentials). */
  readonly headers?: Readonly<Record<string, string>>;
}

/** Everything one turn needs. */
export interface RunTurnOptions extends TurnConfig {
  readonly session: Session;
  readonly input: TurnInput;
  readonly signal?: AbortSignal;
}

/** What a turn did. */
export interface TurnResult {
  readonly turn: number;
  readonly reason: TurnEndReason;
  /** Model calls made (steps opened). */
  readonly steps: number;
  /** The text of the last assistant message. */
  readonly text: string;
  /** Usage summed over the turn's steps, as the provider reported it. */
  readonly usage: TokenUsage;
  /** Seqs of the turn's `turn/start` and `turn/end`. */
  readonly startSeq: number;
  readonly endSeq: number;
}

const DEFAULT_MAX_RETRIES = 2;
const DEFAULT_RETRY_DELAY_MS = 1000;
const DEFAULT_MAX_RETRY_DELAY_MS = 60_000;
const DEFAULT_MAX_STEPS = 25;

const busy = new WeakSet<Session>();

/**
 * Runs one turn on `session`. Provider failures and cancellation do not throw: they end the
 * turn with an `error` or `aborted` reason, returned in the result. Misuse throws
 * {@link AgentError}; a throwing hook or a failing store rethrows after the turn is closed.
 */
export async function runTurn(options: RunTurnOptions): Promise<TurnResult> {
  const { session } = options;
  checkModel(options.model);
  const content = checkInput(options.input);
  const tools = indexTools(options.tools ?? []);
  if (busy.has(session)) {
    throw new AgentError(
      'TURN_IN_PROGRESS',
      `a turn is already running on session ${session.header.id}; wait for it (one writer per session)`,
    );
  }
  busy.add(session);
  try {
    return await new TurnRun(options, tools, content).run();
  } finally {
    busy.delete(session);
  }
}

type StepEnd = TurnEndReason | undefined;

class TurnRun {
  private readonly session: Session;
  private readonly signal: AbortSignal;
  private readonly hooks: TurnHooks;
  private readonly maxRetries: number;
  private readonly retryDelayMs: number;
  private readonly maxRetryDelayMs: number;
  private readonly maxSteps: number;
  private readonly toolList: readonly Tool[];
  private turn = 0;
  private step = 0;
  private stepOpen = false;
  private lastText = '';
  private usage: UsageCounts = {};

  constructor(
    private readonly options: RunTurnOptions,
    private readonly tools: ReadonlyMap<string, Tool>,
    private readonly content: readonly UserContentBlock[],
  ) {
    this.session = options.session;
    this.signal = options.signal ?? new AbortController().signal;
    this.hooks = options.hooks ?? {};
    this.maxRetries = count(options.maxRetries, DEFAULT_MAX_RETRIES, 'maxRetries');
    this.retryDelayMs = count(options.retryDelayMs, DEFAULT_RETRY_DELAY_MS, 'retryDelayMs');
    this.maxRetryDelayMs = count(
      options.maxRetryDelayMs,
      DEFAULT_MAX_RETRY_DELAY_MS,
      'maxRetryDelayMs',
    );
    this.maxSteps = Math.max(1, count(options.maxSteps, DEFAULT_MAX_STEPS, 'maxSteps'));
    this.toolList = [...tools.values()];
  }

  async run(): Promise<TurnResult> {
    this.closeCrashedTurn();
    this.turn = lastTurnNumber(this.session) + 1;
    const start = this.append('turn/start', { turn: this.turn });
    const user: UserMessage = {
      id: newId(),
      role: 'user',
      content: this.content,
      source: { kind: 'user' },
    };
    this.append('user/message', user, { surfaceOp: 'append' });
    let reason: TurnEndReason;
    try {
      reason = await this.steps();
    } catch (error) {
      this.closeAfterThrow(error);
      throw error;
    }
    const end = this.append('turn/end', { turn: this.turn, reason });
    await flushSession(this.session);
    return {
      turn: this.turn,
      reason,
      steps: this.step,
      text: this.lastText,
      usage: this.usage,
      startSeq: start.seq,
      endSeq: end.seq,
    };
  }

  private async steps(): Promise<TurnEndReason> {
    for (;;) {
      if (this.signal.aborted) return abortReason(this.signal);
      if (this.step >= this.maxSteps) return { kind: 'max-steps', maxSteps: this.maxSteps };
      this.step += 1;
      const end = await this.runStep();
      if (end !== undefined) return end;
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
    this.append('step/start', { turn, step });
    this.stepOpen = true;
    const header = buildHeader(
      this.options.model,
      this.options.system,
      this.toolList,
      this.options.settings,
    );
    if (!headerInEffect(this.session, header)) this.append('request/header', header);
    const request: LanguageModelV3CallOptions = {
      ...buildCallOptions(header, this.session.deriveMessages()),
      abortSignal: this.signal,
      ...(this.options.headers === undefined ? {} : { headers: { ...this.options.headers } }),
    };

    const { stream, failure } = await this.callModel(request);
    const cut: TurnEndReason | undefined = this.signal.aborted
      ? abortReason(this.signal)
      : failure === undefined
        ? undefined
        : { kind: 'error', error: failure.failure };
    if (cut !== undefined) {
      this.appendMessage(stream, cut.kind === 'aborted' ? 'aborted' : 'error', true);
      this.append('step/end', { turn, step });
      this.stepOpen = false;
      return cut;
    }

    const finishReason = stream.finishReason ?? 'unknown';
    const message = this.appendMessage(stream, finishReason, false);
    const calls = stream.toolCalls();
    const toolResults = calls.length === 0 ? [] : await this.runTools(calls);
    this.append('step/end', { turn, step });
    this.stepOpen = false;
    await this.hooks.afterStep?.({
      ...context,
      message,
      finishReason,
      ...(stream.usage === undefined ? {} : { usage: stream.usage }),
      toolResults,
    });
    if (this.signal.aborted) return abortReason(this.signal);
    if (finishReason === 'length') return { kind: 'max-tokens' };
    if (calls.length > 0) return undefined;
    return { kind: 'completed' };
  }

  /** Streams one model call, retrying retryable failures with backoff. */
  private async callModel(
    request: LanguageModelV3CallOptions,
  ): Promise<{ stream: StepStream; failure?: AttemptFailure }> {
    for (let attempt = 1; ; attempt++) {
      const stream = new StepStream();
      const failure = await this.attempt(request, stream);
      if (failure === undefined || this.signal.aborted) return { stream };
      if (!failure.retryable || attempt > this.maxRetries) return { stream, failure };
      const delayMs = backoffMs(attempt, this.retryDelayMs, this.maxRetryDelayMs, failure);
      this.append(
        'request/retry',
        { turn: this.turn, step: this.step, attempt, delayMs, error: failure.failure },
        stream.chunkSeqs.length === 0 ? undefined : { sourceEventSeqs: stream.chunkSeqs },
      );
      await sleep(delayMs, this.signal);
      if (this.signal.aborted) return { stream: new StepStream() };
    }
  }

  /** One model call; resolves with the failure, or `undefined` on success or abort. */
  private async attempt(
    request: LanguageModelV3CallOptions,
    stream: StepStream,
  ): Promise<AttemptFailure | undefined> {
    let result: Awaited<ReturnType<LanguageModelV3['doStream']>>;
    try {
      result = await untilAborted(this.options.model.doStream(request), this.signal);
    } catch (error) {
      return this.signal.aborted ? undefined : classifyFailure(error);
    }
    const reader = result.stream.getReader();
    // Cancelling the reader on abort ends a pending read at once, even for a model that
    // ignores its abort signal.
    const onAbort = (): void => {
      reader.cancel().catch(() => {});
    };
    this.signal.addEventListener('abort', onAbort, { once: true });
    try {
      for (;;) {
        const next = await reader.read();
        if (next.done || this.signal.aborted) return undefined;
        const part = next.value;
        // The chunk object is built here for this event alone, so the session adopts it.
        const event = this.session.appendAdopted('assistant/chunk', {
          turn: this.turn,
          step: this.step,
          chunk: toChunk(part),
        });
        this.hooks.onEvent?.(event);
        stream.add(part, event.seq);
        if (part.type === 'error') return classifyFailure(part.error);
      }
    } catch (error) {
      return this.signal.aborted ? undefined : classifyFailure(error);
    } finally {
      this.signal.removeEventListener('abort', onAbort);
      reader.cancel().catch(() => {});
    }
  }

  private appendMessage(
    stream: StepStream,
    finishReason: FinishReason,
    interrupted: boolean,
  ): AssistantMessage {
    const model = this.options.model;
    const message: AssistantMessage = {
      id: newId(),
      role: 'assistant',
      content: stream.content(interrupted),
      source: { kind: 'model', provider: model.provider, model: model.modelId },
    };
    this.append(
      'assistant/message',
      {
        turn: this.turn,
        step: this.step,
        message,
        finishReason,
        ...(stream.usage === undefined ? {} : { usage: stream.usage }),
        ...(interrupted ? { interrupted: true } : {}),
        ...(stream.providerMetadata === undefined
          ? {}
          : { providerMetadata: stream.providerMetadata }),
      },
      { surfaceOp: 'append', sourceEventSeqs: stream.chunkSeqs },
    );
    this.addUsage(stream.usage);
    const text = message.content.map((block) => (block.type === 'text' ? block.text : '')).join('');
    if (text !== '' || !interrupted) this.lastText = text;
    return message;
  }

  /**
   * Starts every call at once and records the results in call order. The `tool/call` events
   * are made durable before any tool runs, so crash repair can tell a call that never started
   * from one whose outcome is unknown.
   */
  private async runTools(calls: readonly ToolCallBlock[]): Promise<ToolMessage[]> {
    const callEvents = calls.map((call) =>
      this.append('tool/call', {
        turn: this.turn,
        step: this.step,
        callId: call.id,
        name: call.name,
        arguments: call.arguments,
      }),
    );
    await flushSession(this.session);
    const settled: (ToolRun | undefined)[] = calls.map(() => undefined);
    const pending = calls.map((call, index) => {
      const tool = this.tools.get(call.name);
      const run =
        tool === undefined
          ? Promise.resolve(unknownToolRun(call.name, [...this.tools.keys()]))
          : tool.run(call.arguments, {
              signal: this.signal,
              callId: call.id,
              turn: this.turn,
              step: this.step,
              session: this.session,
            });
      const outcome = run.then((value) => {
        settled[index] = value;
        return value;
      });
      return { call, index, callSeq: callEvents[index]?.seq ?? -1, outcome };
    });
    const results: ToolMessage[] = [];
    for (const { call, index, callSeq, outcome: running } of pending) {
      let outcome: ToolRun;
      try {
        outcome = await untilAborted(running, this.signal);
      } catch {
        outcome = settled[index] ?? abortedRun();
      }
      const message: ToolMessage = {
        id: newId(),
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId: call.id,
            content: outcome.content,
            ...(outcome.error === undefined ? {} : { isError: true }),
          },
        ],
      };
      this.append(
        'tool/result',
        {
          turn: this.turn,
          step: this.step,
          message,
          ...(outcome.error === undefined ? {} : { error: outcome.error }),
        },
        { surfaceOp: 'append', sourceEventSeqs: [callSeq] },
      );
      results.push(message);
    }
    return results;
  }

  /** Closes what a crashed writer left open, with the same closers `openSession` writes. */
  private closeCrashedTurn(): void {
    if (!endsInsideTurn(this.session)) return;
    for (const closer of planRepair(this.session.events)) {
      this.append(closer.type, closer.data, intentOf(closer));
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
          this.append(closer.type, closer.data, intentOf(closer));
        }
      }
      this.append('turn/end', {
        turn: this.turn,
        reason: { kind: 'error', error: { message: describe(error), code: 'LOOP_FAILED' } },
      });
    } catch {
      // Keep the first error.
    }
  }

  private append(
    type: string,
    data: unknown,
    intent?: SurfaceIntent | ProvenanceIntent,
  ): SessionEvent {
    // The loop appends core types with data it built to their shapes, plus `request/retry`;
    // the session validates every one, so the untyped entry point loses no safety.
    const append = this.session.append as (
      type: string,
      data: unknown,
      intent?: SurfaceIntent | ProvenanceIntent,
    ) => SessionEvent;
    const event = append.call(this.session, type, data, intent);
    this.hooks.onEvent?.(event);
    return event;
  }

  private addUsage(usage: TokenUsage | undefined): void {
    if (usage === undefined) return;
    const total = this.usage;
    for (const key of [
      'inputTokens',
      'outputTokens',
      'totalTokens',
      'reasoningTokens',
      'cachedInputTokens',
    ] as const) {
      const value = usage[key];
      if (value !== undefined) total[key] = (total[key] ?? 0) + value;
    }
  }
}

/** The turn number of the last `turn/start` in the log (0 for none). */
export function lastTurnNumber(session: Session): number {
  for (let seq = session.seq - 1; seq >= 0; seq--) {
    const event = session.event(seq);
    if (event?.type === 'turn/start') {
      const turn = (event.data as { turn?: unknown }).turn;
      return typeof turn === 'number' ? turn : 0;
    }
  }
  return 0;
}

function endsInsideTurn(session: Session): boolean {
  for (let seq = session.seq - 1; seq >= 0; seq--) {
    const type = session.event(seq)?.type;
    if (type === 'turn/end') return false;
    if (type === 'turn/start') return true;
  }
  return false;
}

/**
 * Whether `header` is the one in effect (the last `request/header` logged). The position of
 * the last header is cached per session so each step scans only the events since the last look.
 */
const headerCache = new WeakMap<Session, { scannedTo: number; text: string | undefined }>();

function headerInEffect(session: Session, header: RequestHeaderData): boolean {
  const cached = headerCache.get(session) ?? { scannedTo: 0, text: undefined };
  let current = cached.text;
  for (let seq = session.seq - 1; seq >= cached.scannedTo; seq--) {
    const event = session.event(seq);
    if (event?.type === 'request/header') {
      current = JSON.stringify(event.data);
      break;
    }
  }
  // Headers are built by one function, so equal headers serialize to equal text; a header some
  // other writer logged with its keys in another order only costs one repeated header event.
  const text = JSON.stringify(header);
  headerCache.set(session, { scannedTo: session.seq, text });
  return current === text;
}

function intentOf(event: SessionEvent): SurfaceIntent | ProvenanceIntent | undefined {
  if (event.surfaceOp !== undefined) {
    return {
      surfaceOp: event.surfaceOp,
      ...(event.sourceEventSeqs === undefined ? {} : { sourceEventSeqs: event.sourceEventSeqs }),
    };
  }
  return event.sourceEventSeqs === undefined
    ? undefined
    : { sourceEventSeqs: event.sourceEventSeqs };
}

async function flushSession(session: Session): Promise<void> {
  const flush = (session as { flush?: unknown }).flush;
  if (typeof flush === 'function') await (flush as () => Promise<void>).call(session);
}

function abortReason(signal: AbortSignal): TurnEndReason {
  const cause = signal.reason;
  if (cause === undefined) return { kind: 'aborted' };
  return { kind: 'aborted', cause: describe(cause) };
}

function checkModel(model: LanguageModelV3): void {
  const version = (model as { specificationVersion?: unknown } | undefined)?.specificationVersion;
  if (version !== 'v3' || typeof model.doStream !== 'function') {
    throw new AgentError(
      'UNSUPPORTED_MODEL',
      `expected an AI SDK language model with specificationVersion 'v3' (@ai-sdk/provider 3.x; AI SDK 6 providers), found ${version === undefined ? 'no specificationVersion' : `'${String(version)}'`}`,
    );
  }
}

function checkInput(input: TurnInput): readonly UserContentBlock[] {
  if (typeof input === 'string') {
    if (input === '')
      throw new AgentError('INVALID_INPUT', 'expected non-empty input text, found an empty string');
    return [{ type: 'text', text: input }];
  }
  if (!Array.isArray(input) || input.length === 0) {
    throw new AgentError(
      'INVALID_INPUT',
      `expected a string or a non-empty array of text and image blocks, found ${Array.isArray(input) ? 'an empty array' : typeof input}`,
    );
  }
  return input;
}

function count(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new AgentError(
      'INVALID_INPUT',
      `expected ${name} to be a non-negative integer, found ${value}`,
    );
  }
  return value;
}

function describe(value: unknown): string {
  if (value instanceof Error) return value.message || value.name;
  return typeof value === 'string' ? value : String(value);
}

function newId(): string {
  return crypto.randomUUID();
}
