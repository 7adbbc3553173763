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
  LanguageModelV3StreamResult,
} from '@ai-sdk/provider';
import { requestAt } from '../../agent/index.js';
import {
  InvalidArgumentError,
  type Message,
  PalimpsestError,
  type RequestHeaderData,
  type Session,
} from '../../core/index.js';
import { type CallDigest, callDigests, sleep } from '../../model/index.js';
import { convertMessages, type PromptMessage } from './from-model.js';
import { callHeader } from './header.js';
import { PromptDigester } from './prompt-digest.js';
import {
  firstDifference,
  requestShape,
  type ToolResultDifference,
  toolResultDifferences,
} from './replay-difference.js';
import { recordedStream, replayStream } from './replay-stream.js';

/**
 * What a replay does with a request the recording does not hold: `strict` fails it
 * ({@link ReplayMissError}); `fork-on-miss` hands it, and every request after it, to the `live`
 * model; `tools-live` answers a request that differs from the call expected next only in what
 * tools returned with that call's recording, and reports each differing result.
 */
export type ReplayMode = 'strict' | 'fork-on-miss' | 'tools-live';

/** Options of {@link replayModel}. */
export interface ReplayModelOptions {
  /**
   * The provider and model id the replay model reports (they are part of every request digest);
   * by default the last request header's in the session.
   */
  readonly provider?: string;
  readonly modelId?: string;
  /** Default `strict`. */
  readonly mode?: ReplayMode;
  /** The model that answers from the first miss on (`fork-on-miss`). */
  readonly live?: LanguageModelV3;
  /**
   * `fast` (default): every recorded part at once; `recorded`: each part after the time it
   * followed the one before in the recording (the first, after the time from its step's start).
   */
  readonly pace?: 'fast' | 'recorded';
  /** How the recorded pace waits (default a timer that an abort signal ends early). */
  readonly sleep?: (ms: number, signal: AbortSignal | undefined) => Promise<void>;
}

/** What a replay has done so far. */
export interface ReplayReport {
  /** Requests answered from the recording. */
  readonly served: number;
  /** Requests the live model answered (`fork-on-miss`). */
  readonly live: number;
  /** The first request the recording did not hold (`fork-on-miss`: where the run forked). */
  readonly miss?: ReplayMissError;
  /** Tool results that differed from the recorded ones (`tools-live`), each reported once. */
  readonly toolDifferences: readonly ToolResultDifference[];
}

/** A replay model: an AI SDK `LanguageModelV3` that also reports what it served. */
export interface ReplayLanguageModel extends LanguageModelV3 {
  report(): ReplayReport;
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
 * @throws InvalidArgumentError for `fork-on-miss` without a `live` model; from its calls,
 *   AiSdkError `UNSUPPORTED_CALL` for options a request header cannot record, and (in `strict`
 *   mode, or `tools-live` when more than tool results differ) ReplayMissError `REPLAY_MISS` for
 *   a request that matches no recorded call.
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
export function replayModel(
  session: Session,
  options: ReplayModelOptions = {},
): ReplayLanguageModel {
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

const MODES: readonly ReplayMode[] = ['strict', 'fork-on-miss', 'tools-live'];
const PACES: readonly string[] = ['fast', 'recorded'];

interface Recording {
  readonly call: CallDigest;
  readonly digest: string;
}

class ReplayModel implements ReplayLanguageModel {
  readonly specificationVersion = 'v3';
  readonly provider: string;
  readonly modelId: string;
  readonly supportedUrls = {};
  private readonly byDigest = new Map<string, Recording[]>();
  private readonly served = new Map<string, number>();
  private readonly order: Recording[] = [];
  /** How many requests were answered: the next recorded call in log order is the expected one. */
  private answered = 0;
  private readonly digester = new PromptDigester(this);
  private readonly mode: ReplayMode;
  private readonly live: LanguageModelV3 | undefined;
  private readonly pace: 'fast' | 'recorded';
  private readonly sleep: (ms: number, signal: AbortSignal | undefined) => Promise<void>;
  private counts = { served: 0, live: 0 };
  private firstMiss: ReplayMissError | undefined;
  private readonly toolDifferences: ToolResultDifference[] = [];
  private readonly reportedCalls = new Set<string>();

  constructor(
    private readonly session: Session,
    options: ReplayModelOptions,
  ) {
    this.mode = options.mode ?? 'strict';
    this.pace = options.pace ?? 'fast';
    if (!MODES.includes(this.mode) || !PACES.includes(this.pace)) {
      throw new InvalidArgumentError(
        `expected mode one of ${MODES.join(', ')} and pace one of ${PACES.join(', ')}; found mode ${String(this.mode)}, pace ${String(this.pace)}`,
      );
    }
    this.live = options.live;
    if (this.mode === 'fork-on-miss' && this.live === undefined) {
      throw new InvalidArgumentError(
        "expected a live model (options.live) for replay mode 'fork-on-miss', found none",
      );
    }
    this.sleep = options.sleep ?? sleep;
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

  report(): ReplayReport {
    return {
      ...this.counts,
      ...(this.firstMiss === undefined ? {} : { miss: this.firstMiss }),
      toolDifferences: [...this.toolDifferences],
    };
  }

  async doStream(params: LanguageModelV3CallOptions): Promise<LanguageModelV3StreamResult> {
    const answer = this.answer(params);
    if (answer.live !== undefined) return answer.live.doStream(params);
    const { call } = answer.recording;
    const parts = recordedStream(this.session, call.answer, call.stepStartSeq);
    return { stream: replayStream(parts, this.pace, this.sleep, params.abortSignal) };
  }

  async doGenerate(params: LanguageModelV3CallOptions): Promise<LanguageModelV3GenerateResult> {
    const answer = this.answer(params);
    if (answer.live !== undefined) return answer.live.doGenerate(params);
    const { call } = answer.recording;
    const { data } = call.answer;
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
    const finish = recordedStream(this.session, call.answer, call.stepStartSeq).find(
      ({ part }) => part.type === 'finish',
    )?.part;
    return {
      content,
      finishReason:
        finish?.type === 'finish' ? finish.finishReason : { unified: 'other', raw: undefined },
      usage: finish?.type === 'finish' ? finish.usage : NO_USAGE,
      warnings: [],
    };
  }

  /** Who answers `params`: a recording, or (after a miss, in `fork-on-miss`) the live model. */
  private answer(
    params: LanguageModelV3CallOptions,
  ): { recording: Recording; live?: undefined } | { live: LanguageModelV3 } {
    if (this.firstMiss !== undefined && this.live !== undefined) {
      this.counts.live++;
      return { live: this.live };
    }
    const header = callHeader(this, params);
    // callHeader refused a system message anywhere but first.
    const prompt = params.prompt;
    const history = (prompt[0]?.role === 'system' ? prompt.slice(1) : prompt) as PromptMessage[];
    const digest = this.digester.digest(header, history);
    const recordings = this.byDigest.get(digest);
    if (recordings !== undefined) {
      const index = this.served.get(digest) ?? 0;
      this.served.set(digest, index + 1);
      return { recording: this.serve(recordings[Math.min(index, recordings.length - 1)]) };
    }
    const messages = convertMessages(history, { model: this }, 0);
    const expected = this.order[Math.min(this.answered, this.order.length - 1)];
    if (this.mode === 'tools-live' && expected !== undefined) {
      const differences = toolResultDifferences(this.requestOf(expected), { header, messages });
      if (differences !== undefined) {
        for (const difference of differences) this.reportDifference(difference);
        return { recording: this.serve(expected) };
      }
    }
    const miss = this.miss(digest, header, messages, expected);
    if (this.mode !== 'fork-on-miss' || this.live === undefined) throw miss;
    this.firstMiss = miss;
    this.counts.live++;
    return { live: this.live };
  }

  private serve(recording: Recording | undefined): Recording {
    this.answered += 1;
    this.counts.served++;
    return recording as Recording;
  }

  private reportDifference(difference: ToolResultDifference): void {
    if (this.reportedCalls.has(difference.toolCallId)) return;
    this.reportedCalls.add(difference.toolCallId);
    this.toolDifferences.push(difference);
  }

  private miss(
    digest: string,
    header: RequestHeaderData,
    messages: readonly Message[],
    expected: Recording | undefined,
  ): ReplayMissError {
    const where =
      expected === undefined
        ? undefined
        : firstDifference(
            requestShape(
              expected.call.header as RequestHeaderData,
              this.requestOf(expected).messages,
            ),
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

  /** The request of a recorded call, rebuilt (only a miss needs it). */
  private requestOf(recording: Recording): {
    header: RequestHeaderData;
    messages: readonly Message[];
  } {
    const { header, messages } = requestAt(this.session, recording.call.stepStartSeq);
    return { header, messages };
  }
}
