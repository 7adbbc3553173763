/**
 * A recorded session served back as a model: each request whose digest matches a call the log
 * recorded is answered with that call's recorded stream, every chunk in order, so an agent (the
 * palimpsest loop, or the AI SDK's own through the middleware) re-runs deterministically and
 * offline. A request that matches no recorded call is a {@link ReplayMissError} naming the first
 * difference from the call expected next.
 */
import type {
  LanguageModelV3,
  LanguageModelV3CallOptions,
  LanguageModelV3Content,
  LanguageModelV3GenerateResult,
  LanguageModelV3StreamPart,
  LanguageModelV3StreamResult,
} from '@ai-sdk/provider';
import { requestAt } from '../../agent/index.js';
import {
  type JsonObject,
  type Message,
  PalimpsestError,
  type RequestHeaderData,
  type Session,
} from '../../core/index.js';
import {
  buildPrompt,
  type CallDigest,
  callDigests,
  canonicalJson,
  requestDigest,
} from '../../model/index.js';
import { convertMessages, type PromptMessage } from './from-model.js';
import { callHeader } from './header.js';

/** Options of {@link replayModel}. */
export interface ReplayModelOptions {
  /**
   * The provider and model id the replay model reports (they are part of every request digest);
   * by default the last request header's in the session.
   */
  readonly provider?: string;
  readonly modelId?: string;
}

/**
 * A request the recorded session holds no answer for, with the first difference from the
 * request of the call expected next (`REPLAY_MISS`).
 */
export class ReplayMissError extends PalimpsestError {
  static override readonly kind: string = 'ReplayMissError';
  declare readonly code: 'REPLAY_MISS';
  /** The digest of the request received. */
  readonly digest: string;
  /** Where it first differs from the expected request (`system`, `messages[3].content`...). */
  readonly difference: string | undefined;

  constructor(message: string, digest: string, difference: string | undefined) {
    super('REPLAY_MISS', message);
    this.digest = digest;
    this.difference = difference;
  }
}

/**
 * A model that answers the requests `session` recorded with their recorded streams. A request
 * recorded more than once is answered with its recordings in log order, the last one again
 * after that.
 *
 * @throws AiSdkError `UNSUPPORTED_CALL` from a call whose options a request header cannot record;
 *   ReplayMissError `REPLAY_MISS` from a request that matches no recorded call.
 *
 * @example
 * ```ts
 * import { Session } from 'palimpsest';
 * import { replayModel } from 'palimpsest/ai-sdk';
 * import { runTurn } from 'palimpsest/agent';
 * import { scriptedModel } from 'palimpsest/testing';
 *
 * const recorded = Session.create({ id: 'recorded' });
 * await runTurn({ session: recorded, model: scriptedModel([{ text: 'Hi!' }]), input: 'Hello' });
 *
 * // The same turn again, offline, answered from the log.
 * const again = Session.create({ id: 'replayed' });
 * const result = await runTurn({ session: again, model: replayModel(recorded), input: 'Hello' });
 * console.log(result.text); // 'Hi!'
 * ```
 */
export function replayModel(session: Session, options: ReplayModelOptions = {}): LanguageModelV3 {
  return new ReplayModel(session, options);
}

const NO_USAGE: LanguageModelV3GenerateResult['usage'] = {
  inputTokens: {
    total: undefined,
    noCache: undefined,
    cacheRead: undefined,
    cacheWrite: undefined,
  },
  outputTokens: { total: undefined, text: undefined, reasoning: undefined },
};

interface Recording {
  readonly call: CallDigest;
  readonly digest: string;
}

class ReplayModel implements LanguageModelV3 {
  readonly specificationVersion = 'v3';
  readonly provider: string;
  readonly modelId: string;
  readonly supportedUrls = {};
  private readonly byDigest = new Map<string, Recording[]>();
  private readonly served = new Map<string, number>();
  private readonly order: Recording[] = [];
  /** How many requests were answered: the next recorded call in log order is the expected one. */
  private answered = 0;

  constructor(
    private readonly session: Session,
    options: ReplayModelOptions,
  ) {
    for (const call of callDigests(session)) {
      if (call.digest === undefined) continue;
      const recording = { call, digest: call.digest };
      this.order.push(recording);
      this.byDigest.set(recording.digest, [
        ...(this.byDigest.get(recording.digest) ?? []),
        recording,
      ]);
    }
    const last = this.order.at(-1)?.call.header;
    this.provider = options.provider ?? last?.provider ?? 'replay';
    this.modelId = options.modelId ?? last?.model ?? 'replay';
  }

  async doStream(params: LanguageModelV3CallOptions): Promise<LanguageModelV3StreamResult> {
    const recording = this.match(params);
    const parts = chunksOf(this.session, recording.call);
    return {
      stream: new ReadableStream<LanguageModelV3StreamPart>({
        start(controller) {
          for (const part of parts) controller.enqueue(part);
          controller.close();
        },
      }),
    };
  }

  async doGenerate(params: LanguageModelV3CallOptions): Promise<LanguageModelV3GenerateResult> {
    const recording = this.match(params);
    const { data } = recording.call.answer;
    const content: LanguageModelV3Content[] = [];
    for (const block of data.message.content) {
      if (block.type === 'text') content.push({ type: 'text', text: block.text });
      else if (block.type === 'reasoning') content.push({ type: 'reasoning', text: block.text });
      else if (block.type === 'tool-call') {
        content.push({
          type: 'tool-call',
          toolCallId: block.id,
          toolName: block.name,
          input: block.arguments,
        });
      }
    }
    const finish = chunksOf(this.session, recording.call).find((part) => part.type === 'finish');
    return {
      content,
      finishReason:
        finish?.type === 'finish' ? finish.finishReason : { unified: 'other', raw: undefined },
      usage: finish?.type === 'finish' ? finish.usage : NO_USAGE,
      warnings: [],
    };
  }

  /** The recording answering `params`, or the miss explained. */
  private match(params: LanguageModelV3CallOptions): Recording {
    const header = callHeader(this, params);
    const history = params.prompt.filter((message) => message.role !== 'system');
    const messages = convertMessages(history as PromptMessage[], { model: this }, 0);
    const digest = requestDigest(header, messages);
    const recordings = this.byDigest.get(digest);
    if (recordings === undefined) throw this.miss(digest, header, messages);
    const index = this.served.get(digest) ?? 0;
    this.served.set(digest, index + 1);
    this.answered += 1;
    return recordings[Math.min(index, recordings.length - 1)] as Recording;
  }

  private miss(
    digest: string,
    header: RequestHeaderData,
    messages: readonly Message[],
  ): ReplayMissError {
    const expected = this.order[Math.min(this.answered, this.order.length - 1)];
    const where =
      expected === undefined
        ? undefined
        : firstDifference(
            requestShape(expected.call.header as RequestHeaderData, this.messagesOf(expected)),
            requestShape(header, messages),
            '',
          );
    const against =
      expected === undefined
        ? 'the session recorded no call'
        : `the call expected next (answer #${expected.call.seq}) differs at ${where ?? 'a field the digest covers'}`;
    return new ReplayMissError(
      `expected a request session ${this.session.header.id} recorded, found one with digest ${digest} that matches none of its ${this.order.length} calls; ${against}`,
      digest,
      where,
    );
  }

  /** The messages of a recorded call's request, rebuilt (only a miss needs them). */
  private messagesOf(recording: Recording): readonly Message[] {
    return requestAt(this.session, recording.call.stepStartSeq).messages;
  }
}

/** The request as the digest sees it, for naming where two requests differ. */
function requestShape(header: RequestHeaderData, messages: readonly Message[]): unknown {
  return JSON.parse(
    canonicalJson({
      provider: header.provider,
      model: header.model,
      system: header.system,
      tools: header.tools,
      settings: header.settings,
      messages: messages.map((message) => buildPrompt(undefined, [message])[0]),
    }),
  );
}

/** The path of the first difference between two JSON values, or `undefined` when equal. */
function firstDifference(expected: unknown, found: unknown, path: string): string | undefined {
  if (Object.is(expected, found)) return undefined;
  if (Array.isArray(expected) && Array.isArray(found)) {
    for (let i = 0; i < Math.max(expected.length, found.length); i++) {
      const inner = firstDifference(expected[i], found[i], `${path}[${i}]`);
      if (inner !== undefined) return inner;
    }
    return undefined;
  }
  if (isObject(expected) && isObject(found)) {
    for (const key of new Set([...Object.keys(expected), ...Object.keys(found)])) {
      const inner = firstDifference(
        expected[key],
        found[key],
        path === '' ? key : `${path}.${key}`,
      );
      if (inner !== undefined) return inner;
    }
    return undefined;
  }
  return path === '' ? '(the whole request)' : path;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The recorded stream of a call: its cited chunks, in order, as stream parts. */
function chunksOf(session: Session, call: CallDigest): LanguageModelV3StreamPart[] {
  const parts: LanguageModelV3StreamPart[] = [];
  for (const seq of call.answer.sourceEventSeqs ?? []) {
    const event = session.event(seq);
    if (event?.type !== 'assistant/chunk') continue;
    const chunk = (event.data as { chunk?: JsonObject }).chunk;
    if (chunk !== undefined && isStreamPart(chunk)) parts.push(toPart(chunk));
  }
  return parts;
}

/**
 * Whether a logged chunk is a stream part: it has its `type`. The log holds the parts the stream
 * gave (as JSON), so a chunk with a type is read back as the part it was.
 */
function isStreamPart(chunk: JsonObject): chunk is JsonObject & LanguageModelV3StreamPart {
  return typeof chunk.type === 'string';
}

/** A logged chunk as the stream part it was: dates come back as dates. */
function toPart(chunk: JsonObject & LanguageModelV3StreamPart): LanguageModelV3StreamPart {
  if (chunk.type === 'response-metadata' && typeof chunk.timestamp === 'string') {
    return { ...chunk, timestamp: new Date(chunk.timestamp) };
  }
  return chunk;
}
