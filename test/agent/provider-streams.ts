/**
 * Reading a LanguageModelV3 stream in the provider wire tests (wire-openai-compatible,
 * wire-deepseek and wire-anthropic .test.ts): the parts, text, reasoning and finish of a run, the
 * error a failed call throws, and the prompts and tools they send.
 */
import {
  APICallError,
  type LanguageModelV3CallOptions,
  type LanguageModelV3FunctionTool,
  type LanguageModelV3Prompt,
  type LanguageModelV3StreamPart,
} from '@ai-sdk/provider';
import { expect } from 'vitest';

/** The part of LanguageModelV3 these tests drive (structural, so every provider's copy fits). */
export interface StreamingModel {
  doStream(options: LanguageModelV3CallOptions): PromiseLike<{
    stream: ReadableStream<LanguageModelV3StreamPart>;
    response?: { headers?: Record<string, string> };
  }>;
}

export interface StreamRun {
  readonly parts: LanguageModelV3StreamPart[];
  /** The response headers doStream reported. */
  readonly headers: Record<string, string>;
  /** What a read rejected with, when the stream failed instead of ending. */
  readonly readError: unknown;
}

/** Calls doStream and reads the stream to its end (or to its failure). */
export async function streamOf(model: StreamingModel, options: LanguageModelV3CallOptions) {
  const result = await model.doStream(options);
  const parts: LanguageModelV3StreamPart[] = [];
  const reader = result.stream.getReader();
  let readError: unknown;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      parts.push(value);
    }
  } catch (error) {
    readError = error;
  }
  return { parts, headers: result.response?.headers ?? {}, readError } satisfies StreamRun;
}

/** Calls doStream and returns the APICallError it rejects with. */
export async function apiCallErrorOf(model: StreamingModel, options: LanguageModelV3CallOptions) {
  try {
    await model.doStream(options);
  } catch (error) {
    if (APICallError.isInstance(error)) return error;
    throw error;
  }
  throw new Error('expected doStream to reject with an APICallError');
}

export type PartOf<T extends LanguageModelV3StreamPart['type']> = Extract<
  LanguageModelV3StreamPart,
  { type: T }
>;

export function partsOf<T extends LanguageModelV3StreamPart['type']>(
  parts: readonly LanguageModelV3StreamPart[],
  type: T,
): PartOf<T>[] {
  return parts.filter((part): part is PartOf<T> => part.type === type);
}

export function types(parts: readonly LanguageModelV3StreamPart[]): string[] {
  return parts.map((part) => part.type);
}

export function textOf(parts: readonly LanguageModelV3StreamPart[]): string {
  return partsOf(parts, 'text-delta')
    .map((part) => part.delta)
    .join('');
}

export function reasoningOf(parts: readonly LanguageModelV3StreamPart[]): string {
  return partsOf(parts, 'reasoning-delta')
    .map((part) => part.delta)
    .join('');
}

export function finishOf(parts: readonly LanguageModelV3StreamPart[]): PartOf<'finish'> {
  const finishes = partsOf(parts, 'finish');
  expect(finishes).toHaveLength(1);
  return finishes[0] as PartOf<'finish'>;
}

/** The chain of `cause`s below an error, as `code`s (undici and node put them there). */
export function causeCodes(error: unknown): string[] {
  const codes: string[] = [];
  let current: unknown = error;
  while (current instanceof Error) {
    const code = (current as Error & { code?: unknown }).code;
    if (typeof code === 'string') codes.push(code);
    current = current.cause;
  }
  return codes;
}

export const user = (text: string): LanguageModelV3Prompt[number] => ({
  role: 'user',
  content: [{ type: 'text', text }],
});

export const readFileTool: LanguageModelV3FunctionTool = {
  type: 'function',
  name: 'read_file',
  description: 'Read a UTF-8 file from the workspace.',
  inputSchema: {
    type: 'object',
    properties: { path: { type: 'string' } },
    required: ['path'],
    additionalProperties: false,
  },
};

export const grepTool: LanguageModelV3FunctionTool = {
  type: 'function',
  name: 'grep',
  description: 'Search files for a pattern.',
  inputSchema: {
    type: 'object',
    properties: { pattern: { type: 'string' }, path: { type: 'string' } },
    required: ['pattern'],
    additionalProperties: false,
  },
};

/**
 * A function tool as the chat-completions API expects it in a request body (OpenAI, DeepSeek,
 * OpenAI-compatible servers): the wire shape the providers' request tests compare against.
 */
export function chatCompletionsTool(tool: LanguageModelV3FunctionTool) {
  return {
    type: 'function',
    function: { name: tool.name, description: tool.description, parameters: tool.inputSchema },
  };
}

/**
 * A conversation one tool round-trip deep: the user asks, the assistant answered with text and
 * a tool call, the tool answered. The next model call continues from here.
 */
export const toolRoundTrip: LanguageModelV3Prompt = [
  { role: 'system', content: 'You are a careful coding agent.' },
  user('What does the core export?'),
  {
    role: 'assistant',
    content: [
      { type: 'text', text: 'Let me list the directory.' },
      {
        type: 'tool-call',
        toolCallId: 'call_prev_list_1',
        toolName: 'list_dir',
        input: { path: 'src/core' },
      },
    ],
  },
  {
    role: 'tool',
    content: [
      {
        type: 'tool-result',
        toolCallId: 'call_prev_list_1',
        toolName: 'list_dir',
        output: { type: 'json', value: ['index.ts', 'session.ts'] },
      },
    ],
  },
];

/** The API key every provider client here sends. */
export const API_KEY = 'wire-test-key';
