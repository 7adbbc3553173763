/**
 * A deterministic language model for offline demos and tests. It implements the AI SDK
 * language-model spec v3 like any provider, streaming each scripted response in small chunks
 * (reasoning, text, tool-input deltas, usage, finish), so the agent loop cannot tell it from a
 * real provider.
 */

import {
  APICallError,
  type LanguageModelV3,
  type LanguageModelV3CallOptions,
  type LanguageModelV3Content,
  type LanguageModelV3FinishReason,
  type LanguageModelV3GenerateResult,
  type LanguageModelV3StreamPart,
  type LanguageModelV3StreamResult,
  type LanguageModelV3Usage,
} from '@ai-sdk/provider';
import type { JsonValue } from '../core/index.js';

/** A tool call the scripted model makes. */
export interface ScriptedToolCall {
  readonly name: string;
  /** The arguments; a string is sent as-is (so tests can send invalid JSON). */
  readonly args: JsonValue;
  /** The call id; defaults to `call_<call>_<index>`. */
  readonly id?: string;
}

/** A failure the scripted model produces instead of, or in the middle of, its response. */
export interface ScriptedError {
  readonly message: string;
  /**
   * An HTTP status: the call fails before streaming, as an `APICallError` (like a provider's
   * 4xx/5xx). Without one, the error arrives as a stream `error` part after the scripted text.
   */
  readonly status?: number;
  /** Defaults to true for 408, 409, 429 and 5xx. */
  readonly retryable?: boolean;
  /** Sent as the `x-request-id` response header of an HTTP failure. */
  readonly requestId?: string;
  /**
   * The provider error type (default `scripted_error`); in-stream errors of type
   * `overloaded_error` or `rate_limit_error` are retryable, like Anthropic's.
   */
  readonly type?: string;
}

/** One model call's response. */
export interface ScriptedResponse {
  readonly text?: string;
  readonly reasoning?: string;
  readonly toolCalls?: readonly ScriptedToolCall[];
  /**
   * Reported usage; input and output estimated from the characters (4 per token) when absent.
   * Cache reads and writes are part of the input tokens, as providers report them.
   */
  readonly usage?: {
    readonly inputTokens?: number;
    readonly outputTokens?: number;
    readonly cacheReadTokens?: number;
    readonly cacheWriteTokens?: number;
  };
  readonly error?: string | ScriptedError;
  /** Delay before each streamed part, in ms (honours the abort signal). */
  readonly delayMs?: number;
  /** Defaults to `tool-calls` when there are tool calls, else `stop`. */
  readonly finishReason?: LanguageModelV3FinishReason['unified'];
}

/** A response, or a function that makes one from the request (for echoing tools and such). */
export type ScriptStep =
  | ScriptedResponse
  | ((request: LanguageModelV3CallOptions, call: number) => ScriptedResponse);

/** Options of {@link scriptedModel}. */
export interface ScriptedModelOptions {
  /** Reported as the model's provider (default `scripted`). */
  readonly provider?: string;
  /** Reported as the model id (default `scripted-model`). */
  readonly modelId?: string;
  /** Characters per text delta (default 8). */
  readonly chunkSize?: number;
  /** Start over at the first response when the script runs out, instead of failing. */
  readonly loop?: boolean;
}

/** The scripted model; `calls` holds every request it received, in order. */
export class ScriptedModel implements LanguageModelV3 {
  readonly specificationVersion = 'v3' as const;
  readonly provider: string;
  readonly modelId: string;
  readonly supportedUrls: Record<string, RegExp[]> = {};
  /** Every request received, in order (for assertions). */
  readonly calls: LanguageModelV3CallOptions[] = [];
  private readonly script: readonly ScriptStep[];
  private readonly chunkSize: number;
  private readonly loop: boolean;

  constructor(script: readonly ScriptStep[], options: ScriptedModelOptions = {}) {
    if (!Array.isArray(script)) {
      throw new TypeError(`scriptedModel expects an array of responses, found ${typeof script}`);
    }
    this.script = script;
    this.provider = options.provider ?? 'scripted';
    this.modelId = options.modelId ?? 'scripted-model';
    this.chunkSize = Math.max(1, Math.floor(options.chunkSize ?? 8));
    this.loop = options.loop === true;
  }

  /** Responses not yet used (0 once the script is exhausted; always the full length with `loop`). */
  get remaining(): number {
    return this.loop ? this.script.length : Math.max(0, this.script.length - this.calls.length);
  }

  async doStream(options: LanguageModelV3CallOptions): Promise<LanguageModelV3StreamResult> {
    const call = this.calls.length;
    this.calls.push(options);
    const response = this.responseFor(options, call);
    const signal = options.abortSignal;
    signal?.throwIfAborted();
    const error = typeof response.error === 'string' ? { message: response.error } : response.error;
    if (error?.status !== undefined) throw httpError(error, options);
    const parts = this.parts(response, options, call, error);
    const delayMs = response.delayMs ?? 0;
    let index = 0;
    const stream = new ReadableStream<LanguageModelV3StreamPart>({
      async pull(controller) {
        if (delayMs > 0) await pause(delayMs, signal);
        if (signal?.aborted) {
          controller.error(signal.reason);
          return;
        }
        const part = parts[index++];
        if (part === undefined) controller.close();
        else controller.enqueue(part);
      },
    });
    return { stream, request: { body: { scriptedCall: call } } };
  }

  async doGenerate(options: LanguageModelV3CallOptions): Promise<LanguageModelV3GenerateResult> {
    const { stream } = await this.doStream(options);
    const content: LanguageModelV3Content[] = [];
    let finishReason: LanguageModelV3FinishReason = { unified: 'other', raw: undefined };
    let usage: LanguageModelV3Usage = usageOf(0, 0);
    const text = new Map<string, { type: 'text' | 'reasoning'; text: string }>();
    // A reader, which every ReadableStream has: async iteration of one is not on every runtime.
    const reader = stream.getReader();
    for (let next = await reader.read(); !next.done; next = await reader.read()) {
      const part = next.value;
      if (part.type === 'text-start' || part.type === 'reasoning-start') {
        const entry = {
          type: part.type === 'text-start' ? ('text' as const) : ('reasoning' as const),
          text: '',
        };
        text.set(part.id, entry);
        content.push(entry);
      } else if (part.type === 'text-delta' || part.type === 'reasoning-delta') {
        const entry = text.get(part.id);
        if (entry !== undefined) entry.text += part.delta;
      } else if (part.type === 'tool-call') content.push(part);
      else if (part.type === 'finish') ({ finishReason, usage } = part);
      else if (part.type === 'error') throw part.error;
    }
    return { content, finishReason, usage, warnings: [] };
  }

  private responseFor(options: LanguageModelV3CallOptions, call: number): ScriptedResponse {
    const length = this.script.length;
    const index = this.loop && length > 0 ? call % length : call;
    const step = this.script[index];
    if (step === undefined) {
      throw new Error(
        `scripted model: the script has ${length} response${length === 1 ? '' : 's'} and call ${call + 1} was made`,
      );
    }
    return typeof step === 'function' ? step(options, call) : step;
  }

  private parts(
    response: ScriptedResponse,
    options: LanguageModelV3CallOptions,
    call: number,
    error: ScriptedError | undefined,
  ): LanguageModelV3StreamPart[] {
    const parts: LanguageModelV3StreamPart[] = [
      { type: 'stream-start', warnings: [] },
      { type: 'response-metadata', id: `scripted-${call}`, modelId: this.modelId },
    ];
    let outputChars = 0;
    const streamText = (kind: 'text' | 'reasoning', id: string, text: string): void => {
      parts.push({ type: `${kind}-start`, id });
      for (const piece of pieces(text, this.chunkSize)) {
        parts.push({ type: `${kind}-delta`, id, delta: piece });
      }
      parts.push({ type: `${kind}-end`, id });
      outputChars += text.length;
    };
    if (response.reasoning !== undefined && response.reasoning !== '') {
      streamText('reasoning', `r${call}`, response.reasoning);
    }
    if (response.text !== undefined && response.text !== '')
      streamText('text', `t${call}`, response.text);
    if (error !== undefined) {
      parts.push({
        type: 'error',
        error: { type: error.type ?? 'scripted_error', message: error.message },
      });
      return parts;
    }
    for (const [index, toolCall] of (response.toolCalls ?? []).entries()) {
      const id = toolCall.id ?? `call_${call}_${index}`;
      const input =
        typeof toolCall.args === 'string' ? toolCall.args : JSON.stringify(toolCall.args);
      parts.push({ type: 'tool-input-start', id, toolName: toolCall.name });
      for (const piece of pieces(input, this.chunkSize * 2)) {
        parts.push({ type: 'tool-input-delta', id, delta: piece });
      }
      parts.push({ type: 'tool-input-end', id });
      parts.push({ type: 'tool-call', toolCallId: id, toolName: toolCall.name, input });
      outputChars += input.length;
    }
    const hasCalls = (response.toolCalls?.length ?? 0) > 0;
    const unified = response.finishReason ?? (hasCalls ? 'tool-calls' : 'stop');
    const inputTokens =
      response.usage?.inputTokens ?? Math.ceil(JSON.stringify(options.prompt).length / 4);
    const outputTokens = response.usage?.outputTokens ?? Math.ceil(outputChars / 4);
    parts.push({
      type: 'finish',
      finishReason: { unified, raw: unified },
      usage: usageOf(inputTokens, outputTokens, response.usage),
    });
    return parts;
  }
}

/** A deterministic model that answers each call with the next scripted response. */
export function scriptedModel(
  script: readonly ScriptStep[],
  options: ScriptedModelOptions = {},
): ScriptedModel {
  return new ScriptedModel(script, options);
}

function usageOf(
  inputTokens: number,
  outputTokens: number,
  cache: ScriptedResponse['usage'] = {},
): LanguageModelV3Usage {
  const { cacheReadTokens, cacheWriteTokens } = cache;
  return {
    inputTokens: {
      total: inputTokens,
      noCache: inputTokens - (cacheReadTokens ?? 0) - (cacheWriteTokens ?? 0),
      cacheRead: cacheReadTokens,
      cacheWrite: cacheWriteTokens,
    },
    outputTokens: { total: outputTokens, text: outputTokens, reasoning: undefined },
  };
}

function httpError(error: ScriptedError, options: LanguageModelV3CallOptions): APICallError {
  const status = error.status ?? 500;
  const type = error.type ?? 'scripted_error';
  const retryable =
    error.retryable ?? (status === 408 || status === 409 || status === 429 || status >= 500);
  return new APICallError({
    message: error.message,
    url: 'scripted://model',
    requestBodyValues: { prompt: options.prompt },
    statusCode: status,
    responseHeaders: error.requestId === undefined ? {} : { 'x-request-id': error.requestId },
    responseBody: JSON.stringify({ error: { message: error.message, type } }),
    isRetryable: retryable,
    data: { error: { message: error.message, type } },
  });
}

function pieces(text: string, size: number): string[] {
  const out: string[] = [];
  // Split by code points so no delta ends inside a surrogate pair.
  const chars = Array.from(text);
  for (let i = 0; i < chars.length; i += size) out.push(chars.slice(i, i + size).join(''));
  return out;
}

/**
 * Resolves after `ms`, or when `signal` aborts. The test double depends on core and the
 * provider spec only (it must not pull the model layer into every test bundle), hence its own.
 */
function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted === true) return resolve();
    const done = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}
