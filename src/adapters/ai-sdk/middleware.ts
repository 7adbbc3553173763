/**
 * The recording middleware: every model call the AI SDK makes through `wrapLanguageModel` is
 * written to a palimpsest session by the loop's own rule (`model/call-record.ts`, DESIGN §7),
 * and the messages the SDK's loop adds between calls (user input, tool results) are read from
 * the next call's prompt.
 */
import type {
  LanguageModelV3,
  LanguageModelV3CallOptions,
  LanguageModelV3GenerateResult,
  LanguageModelV3Middleware,
  LanguageModelV3StreamPart,
  LanguageModelV3StreamResult,
} from '@ai-sdk/provider';
import type { ModelMessage } from 'ai';
import type {
  Message,
  Session,
  SessionEvent,
  ToolCallBlock,
  ToolMessage,
  ToolResultData,
  TurnEndReason,
} from '../../core/index.js';
import {
  isDurable,
  isHeaderInEffect,
  lastTurnNumber,
  planOpenTurnRepair,
  TOOL_OUTCOME_UNKNOWN,
} from '../../core/index.js';
import {
  buildPrompt,
  classifyFailure,
  intentOf,
  knownSecrets,
  recordAssistantMessage,
  recordChunk,
  recordToolCall,
  recordToolResult,
  StepStream,
  sessionRequestDigest,
  TOOL_ERROR,
  withPrice,
} from '../../model/index.js';
import { busyError, diverged } from './errors.js';
import {
  callsAwaitingApproval,
  convertMessages,
  deniedCalls,
  type PromptMessage,
} from './from-model.js';
import { generatedParts } from './generate-parts.js';
import { callHeader } from './header.js';
import type { SessionMiddlewareOptions } from './middleware-options.js';
import { type OpenTurn, openTurnOf } from './open-turn.js';
import { readPrompt } from './prompt-tail.js';

/** The middleware, and the turn it keeps open between the SDK's calls. */
export interface SessionMiddleware extends LanguageModelV3Middleware {
  readonly session: Session;
  /**
   * Ends the open turn: records the results of the last step's tool calls found in `messages`
   * (the `response.messages` of a `streamText` or `generateText` result), closes the step and
   * the turn, and waits until the log is durable when the session can say so. Without it the
   * next call closes the turn, from its prompt.
   */
  finish(messages?: readonly ModelMessage[]): Promise<void>;
}

/**
 * A `LanguageModelV3Middleware` that records into `session`. Per turn the log gets what
 * palimpsest's loop writes: `turn/start`, the user message, then per model call `step/start`,
 * `request/header` when it changed, each stream part as an `assistant/chunk`, one
 * `assistant/message` citing its chunks, a `tool/call` and a `tool/result` citing it for each
 * call the SDK ran, `step/end`; and `turn/end`.
 *
 * The model sees the session's surface: when the SDK's history differs from it (a compaction
 * replaced part of it), the call sends the surface.
 *
 * @throws AiSdkError from a model call: `UNSUPPORTED_CONTENT`, `UNSUPPORTED_CALL`,
 *   `PROMPT_DIVERGED` (nothing is appended then), `CALL_IN_PROGRESS`.
 *
 * @example
 * ```ts
 * import { Session } from 'palimpsest';
 * import { sessionMiddleware } from 'palimpsest/ai-sdk';
 * import { scriptedModel } from 'palimpsest/testing';
 * import { generateText, wrapLanguageModel } from 'ai';
 *
 * const session = Session.create({ id: 'middleware-example' });
 * const middleware = sessionMiddleware(session);
 * const model = wrapLanguageModel({ model: scriptedModel([{ text: 'Hi!' }]), middleware });
 * const result = await generateText({ model, prompt: 'Hello' });
 * console.log(result.text); // 'Hi!'
 * console.log(session.deriveMessages().length); // 2: the prompt and the answer
 * ```
 */
export function sessionMiddleware(
  session: Session,
  options: SessionMiddlewareOptions = {},
): SessionMiddleware {
  const recorder = new SdkCallRecorder(session, options);
  return {
    specificationVersion: 'v3',
    session,
    wrapStream: ({ doStream, params, model }) => recorder.stream(model, params, doStream),
    wrapGenerate: ({ doGenerate, params, model }) => recorder.generate(model, params, doGenerate),
    finish: (messages) => recorder.finish(messages),
  };
}

/** One call in progress: where it is recorded, its stream, and whether it ended. */
interface Call {
  readonly model: LanguageModelV3;
  readonly turn: number;
  readonly step: number;
  readonly signal: AbortSignal | undefined;
  readonly secrets: readonly string[];
  readonly stream: StepStream;
  /** The digest of the request the call received: the header and the surface it was built from. */
  readonly requestDigest: string;
  ended: boolean;
}

/** Sessions a call is recording into, whichever middleware records it: one writer per session. */
const recording = new WeakSet<Session>();

/**
 * Records the calls the AI SDK makes through one middleware, and the messages its loop adds
 * between them, into the session. Not the store's `Recorder` (`palimpsest/store`), which writes
 * a live session's appends to a store.
 */
class SdkCallRecorder {
  constructor(
    private readonly session: Session,
    private readonly options: SessionMiddlewareOptions,
  ) {}

  async stream(
    model: LanguageModelV3,
    params: LanguageModelV3CallOptions,
    doStream: () => PromiseLike<LanguageModelV3StreamResult>,
  ): Promise<LanguageModelV3StreamResult> {
    const { call, result } = await this.call(model, params, doStream, (send) =>
      model.doStream(send),
    );
    return { ...result, stream: this.recorded(call, result.stream) };
  }

  async generate(
    model: LanguageModelV3,
    params: LanguageModelV3CallOptions,
    doGenerate: () => PromiseLike<LanguageModelV3GenerateResult>,
  ): Promise<LanguageModelV3GenerateResult> {
    const { call, result } = await this.call(model, params, doGenerate, (send) =>
      model.doGenerate(send),
    );
    try {
      for (const part of generatedParts(result)) this.part(call, part);
    } finally {
      this.end(call, {});
    }
    return result;
  }

  async finish(messages: readonly ModelMessage[] = []): Promise<void> {
    if (recording.has(this.session)) throw busyError(this.session);
    const open = openTurnOf(this.session);
    if (open !== undefined) {
      const waiting = new Set(open.waiting?.map((call) => call.id));
      this.recordResults(
        // Only the results matter here: the rest of the response is already in the log.
        convertMessages(
          messages.filter((message) => message.role === 'tool'),
          {},
          0,
        ).filter(
          (message): message is ToolMessage =>
            message.role === 'tool' && waiting.has(message.content[0].toolCallId),
        ),
        deniedCalls(messages),
      );
      // A call held for a person's approval keeps the turn open: the call that brings the
      // answer runs the tool (or reports the denial), and its prompt carries the result.
      const awaiting = callsAwaitingApproval(messages);
      if (openTurnOf(this.session)?.waiting?.some((call) => awaiting.has(call.id)) === true) {
        if (isDurable(this.session)) await this.session.flush();
        return;
      }
      // The SDK's response lists every result it has: a call without one there did not run.
      this.endTurn(messages.length > 0 ? 'never-ran' : 'may-have-run');
    }
    if (isDurable(this.session)) await this.session.flush();
  }

  /**
   * Opens the step and makes the call: the SDK's own when it sends the surface, else the same
   * call over the surface. A call that throws is recorded as failed before the error goes on.
   */
  private async call<R>(
    model: LanguageModelV3,
    params: LanguageModelV3CallOptions,
    asSent: () => PromiseLike<R>,
    over: (send: LanguageModelV3CallOptions) => PromiseLike<R>,
  ): Promise<{ call: Call; result: R }> {
    const { call, send } = await this.begin(model, params);
    try {
      return { call, result: await (send === params ? asSent() : over(send)) };
    } catch (error) {
      this.end(call, { error });
      throw error;
    }
  }

  /**
   * Records what the prompt adds, opens the step and decides what to send: the SDK's options
   * when its history is the surface, else the same options over the surface.
   */
  private async begin(
    model: LanguageModelV3,
    params: LanguageModelV3CallOptions,
  ): Promise<{ call: Call; send: LanguageModelV3CallOptions }> {
    if (recording.has(this.session)) throw busyError(this.session);
    const header = withPrice(callHeader(model, params), this.options.prices, Date.now());
    const history = params.prompt.filter((message) => message.role !== 'system');
    const offset = params.prompt.length - history.length;
    const prompt = readPrompt(this.session, history as PromptMessage[], { model }, offset);
    const added = this.classify(prompt.added);
    recording.add(this.session);
    let position: { turn: number; step: number };
    try {
      const turn = this.absorb(added, deniedCalls(history));
      const signal = params.abortSignal ?? new AbortController().signal;
      await this.options.beforeStep?.({
        session: this.session,
        turn: turn.turn,
        step: turn.step + 1,
        signal,
      });
      position = { turn: turn.turn, step: turn.step + 1 };
      this.emit(this.session.append('step/start', position));
      if (!isHeaderInEffect(this.session, header)) {
        this.emit(this.session.append('request/header', header));
      }
    } catch (error) {
      recording.delete(this.session);
      this.failTurn(error);
      throw error;
    }
    const surface = this.session.deriveMessageList();
    const call: Call = {
      model,
      ...position,
      signal: params.abortSignal,
      secrets: knownSecrets(Object.values(params.headers ?? {}).filter(isString)),
      stream: new StepStream(),
      requestDigest: sessionRequestDigest(this.session, header),
      ended: false,
    };
    const send = prompt.sameOnWire(surface)
      ? params
      : { ...params, prompt: buildPrompt(header.system, surface) };
    return { call, send };
  }

  /** Checks every new message before anything is appended, so a refused prompt adds nothing. */
  private classify(messages: readonly Message[]): readonly Message[] {
    const waiting = new Set(openTurnOf(this.session)?.waiting?.map((call) => call.id));
    for (const [index, message] of messages.entries()) {
      if (message.role === 'assistant') {
        throw diverged(`an assistant message the session did not record (new message ${index})`);
      }
      if (message.role === 'tool') {
        const id = message.content[0].toolCallId;
        if (!waiting.delete(id)) {
          throw diverged(`a result for tool call ${id}, which the open step did not make`);
        }
      } else {
        // A user message ends the step whose calls it follows; later results answer nothing.
        waiting.clear();
      }
    }
    return messages;
  }

  /**
   * Appends the prompt's new messages (results to the open step, user input to a new turn) and
   * closes the open step: the turn the next step belongs to.
   */
  private absorb(messages: readonly Message[], denied: ReadonlyMap<string, string>): OpenTurn {
    let results: ToolMessage[] = [];
    for (const message of messages) {
      if (message.role === 'tool') {
        results.push(message);
        continue;
      }
      this.recordResults(results, denied);
      results = [];
      if (message.role === 'user') this.startTurn(message);
    }
    this.recordResults(results, denied);
    const open = openTurnOf(this.session);
    if (open === undefined || (open.stepOpen && open.waiting === undefined)) {
      // No turn is open (a call with nothing new: the SDK retrying a failed call), or a writer
      // cut one mid-stream: this call starts the next turn.
      this.startTurn(undefined);
      return openTurnOf(this.session) as OpenTurn;
    }
    this.closeStep();
    return { ...open, stepOpen: false, waiting: undefined };
  }

  /**
   * A `tool/call` for each answered call, then its `tool/result` citing it, as the loop logs
   * them. A call a person denied through the SDK's approval flow never started: its result is
   * `TOOL_DENIED` with the denial as its decision, citing the message that asked for it, as
   * palimpsest's own `beforeToolCall` denials are logged.
   */
  private recordResults(
    results: readonly ToolMessage[],
    denied: ReadonlyMap<string, string>,
  ): void {
    const open = openTurnOf(this.session);
    if (open?.waiting === undefined || results.length === 0) return;
    const { turn, step, waiting } = open;
    const answered = new Set(results.map((result) => result.content[0].toolCallId));
    const callSeqs = new Map<string, number>();
    for (const call of waiting) {
      if (!answered.has(call.id)) continue;
      if (denied.has(call.id) && open.messageSeq !== undefined) {
        callSeqs.set(call.id, open.messageSeq);
        continue;
      }
      const event = this.emit(
        recordToolCall(this.session, { turn, step }, call, call.arguments, undefined),
      );
      callSeqs.set(call.id, event.seq);
    }
    for (const result of results) {
      const block = result.content[0];
      const call = waiting.find((candidate) => candidate.id === block.toolCallId) as ToolCallBlock;
      const text = block.content.map((item) => (item.type === 'text' ? item.text : '')).join('\n');
      const reason = denied.get(call.id);
      const code = reason === undefined ? TOOL_ERROR.failed : TOOL_ERROR.denied;
      const outcome = {
        content: block.content,
        ...(block.isError === true ? { error: { code, message: text } } : {}),
      };
      const sourceSeq = callSeqs.get(call.id) as number;
      const notes = {
        providerMetadata: block.providerMetadata,
        isJson: block.isJson,
        ...(reason === undefined ? {} : { decision: { action: 'deny' as const, reason } }),
      };
      this.emit(recordToolResult(this.session, { turn, step, sourceSeq }, call, outcome, notes));
    }
  }

  /**
   * Closes the open step; a call whose result never reached the session gets the closer crash
   * repair writes, as an outcome the session does not know unless the SDK's own response shows
   * the call did not run: the SDK runs a step's tools before it decides to stop, so a result
   * missing from the next prompt says nothing about whether the tool ran.
   */
  private closeStep(unanswered: Unanswered = 'may-have-run'): void {
    const open = openTurnOf(this.session);
    if (open?.stepOpen !== true) return;
    for (const closer of planOpenTurnRepair(this.session)) {
      if (closer.type === 'turn/end') break;
      const data =
        closer.type === 'tool/result' && unanswered === 'may-have-run'
          ? outcomeUnknown(closer.data, open.waiting ?? [])
          : closer.data;
      this.emit(this.session.append(closer.type, data, intentOf(closer)));
    }
  }

  /**
   * Ends the open turn: `completed` when this middleware left it waiting for tool results,
   * else (a writer cut it) as crash repair ends it.
   */
  private endTurn(unanswered: Unanswered = 'may-have-run'): void {
    const open = openTurnOf(this.session);
    if (open === undefined) return;
    if (open.waiting === undefined && open.stepOpen) {
      for (const closer of planOpenTurnRepair(this.session)) {
        this.emit(this.session.append(closer.type, closer.data, intentOf(closer)));
      }
      return;
    }
    this.closeStep(unanswered);
    this.emit(this.session.append('turn/end', { turn: open.turn, reason: { kind: 'completed' } }));
  }

  /** Ends the open turn and starts the next, with `input` as its first message. */
  private startTurn(input: Message | undefined): void {
    this.endTurn();
    const turn = lastTurnNumber(this.session) + 1;
    this.emit(this.session.append('turn/start', { turn }));
    if (input?.role === 'user') {
      this.emit(this.session.append('user/message', input, { surfaceOp: 'append' }));
    }
  }

  /**
   * Wraps the provider's stream so each part is recorded as the SDK reads it. A part the session
   * refuses (its store failed: `WRITER_FAILED`) fails the SDK's stream at that part, with the
   * provider's stream cancelled and the call released; at its end the stream waits until the
   * step is durable when the session can say so, so a stream that completes was recorded.
   */
  private recorded(
    call: Call,
    source: ReadableStream<LanguageModelV3StreamPart>,
  ): ReadableStream<LanguageModelV3StreamPart> {
    const reader = source.getReader();
    const fail = async (
      controller: ReadableStreamDefaultController<LanguageModelV3StreamPart>,
      error: unknown,
    ) => {
      this.endQuietly(call, { error });
      await reader.cancel(error).catch(() => undefined);
      controller.error(error);
    };
    return new ReadableStream<LanguageModelV3StreamPart>({
      pull: async (controller) => {
        let next: Awaited<ReturnType<typeof reader.read>>;
        try {
          next = await reader.read();
        } catch (error) {
          this.endQuietly(call, { error });
          controller.error(error);
          return;
        }
        try {
          if (next.done) {
            this.end(call, {});
            if (isDurable(this.session)) await this.session.flush();
            controller.close();
            return;
          }
          this.part(call, next.value);
        } catch (error) {
          await fail(controller, error);
          return;
        }
        controller.enqueue(next.value);
      },
      cancel: async (reason) => {
        this.endQuietly(call, { cancelled: reason ?? 'cancelled' });
        await reader.cancel(reason);
      },
    });
  }

  /**
   * Ends the call as {@link end} does, when the session still takes appends: once its writer
   * failed, nothing more can be recorded, and the error the caller is told is that failure.
   */
  private endQuietly(
    call: Call,
    how: { readonly error?: unknown; readonly cancelled?: unknown },
  ): void {
    try {
      this.end(call, how);
    } catch {
      // The session refused the closing events (its writer failed): the call is released anyway.
    }
  }

  private part(call: Call, part: LanguageModelV3StreamPart): void {
    if (call.ended) return;
    this.emit(recordChunk(this.session, call.turn, call.step, 1, call.stream, part, call.secrets));
  }

  /**
   * Records how the call ended: its message, and the step and turn closed unless the SDK will
   * run the message's tool calls and call again.
   */
  private end(call: Call, how: { readonly error?: unknown; readonly cancelled?: unknown }): void {
    if (call.ended) return;
    call.ended = true;
    recording.delete(this.session);
    const { stream } = call;
    const aborted = call.signal?.aborted === true || 'cancelled' in how;
    const failure =
      'error' in how || stream.streamError !== undefined
        ? classifyFailure('error' in how ? how.error : stream.streamError, call.secrets).failure
        : undefined;
    const position = { turn: call.turn, step: call.step };
    if (aborted || failure !== undefined) {
      const kind = aborted ? 'aborted' : 'error';
      this.emit(
        recordAssistantMessage(
          this.session,
          position,
          call.model,
          stream,
          kind,
          kind,
          call.requestDigest,
        ).event,
      );
      this.emit(this.session.append('step/end', position));
      const cause = aborted ? abortCause(call.signal, how.cancelled) : undefined;
      const reason: TurnEndReason = aborted
        ? { kind: 'aborted', ...(cause === undefined ? {} : { cause }) }
        : { kind: 'error', error: failure as NonNullable<typeof failure> };
      this.emit(this.session.append('turn/end', { turn: call.turn, reason }));
      return;
    }
    const finishReason = stream.finishReason ?? 'unknown';
    const recorded = recordAssistantMessage(
      this.session,
      position,
      call.model,
      stream,
      finishReason,
      undefined,
      call.requestDigest,
    );
    this.emit(recorded.event);
    // Tool calls keep the step open: the SDK runs them, and its next call brings the results.
    if (recorded.message.content.some((block) => block.type === 'tool-call')) return;
    this.emit(this.session.append('step/end', position));
    const reason: TurnEndReason =
      finishReason === 'length' ? { kind: 'max-tokens' } : { kind: 'completed' };
    this.emit(this.session.append('turn/end', { turn: call.turn, reason }));
  }

  /** A hook or the prompt failed after the turn opened: close it, keeping the first error. */
  private failTurn(error: unknown): void {
    const open = openTurnOf(this.session);
    if (open === undefined) return;
    try {
      this.closeStep();
      this.emit(
        this.session.append('turn/end', {
          turn: open.turn,
          reason: { kind: 'error', error: { message: describe(error), code: 'LOOP_FAILED' } },
        }),
      );
    } catch {
      // Keep the first error.
    }
  }

  private emit<E extends SessionEvent>(event: E): E {
    this.options.onEvent?.(event);
    return event;
  }
}

/** Whether a tool call whose result never reached the session may have run. */
type Unanswered = 'may-have-run' | 'never-ran';

/**
 * The result of a call the SDK may have run without the session hearing of it: an unknown
 * outcome (`TOOL_OUTCOME_UNKNOWN`), which tells the model to check before it repeats the call,
 * in place of repair's "it never ran".
 */
function outcomeUnknown(data: ToolResultData, waiting: readonly ToolCallBlock[]): ToolResultData {
  const block = data.message.content[0];
  const name = waiting.find((call) => call.id === block.toolCallId)?.name ?? 'unknown';
  const message = `The AI SDK's loop went on without the result of tool '${name}' (call ${block.toolCallId}) reaching the session, so its outcome is unknown: it may or may not have run. Check the current state before calling it again.`;
  return {
    ...data,
    message: {
      ...data.message,
      content: [{ ...block, content: [{ type: 'text', text: message }] }],
    },
    error: { code: TOOL_OUTCOME_UNKNOWN, message },
  };
}

function abortCause(signal: AbortSignal | undefined, cancelled: unknown): string | undefined {
  const cause = signal?.aborted === true ? signal.reason : cancelled;
  return cause === undefined ? undefined : describe(cause);
}

function describe(value: unknown): string {
  if (value instanceof Error) return value.message || value.name;
  return typeof value === 'string' ? value : String(value);
}

function isString(value: unknown): value is string {
  return typeof value === 'string';
}
