/**
 * Where a request differs from the one a recording expected: the path of the first difference,
 * and, for a request that differs only in what tools returned, each tool result that differs.
 */
import type { Message, RequestHeaderData } from '../../core/index.js';
import { buildPrompt, canonicalJson } from '../../model/index.js';

/** A tool result that differs from the one the recording holds at the same place. */
export interface ToolResultDifference {
  /** The index of the tool message in the request's messages. */
  readonly messageIndex: number;
  readonly toolCallId: string;
  readonly toolName: string;
  /** The result's output as the recording holds it, and as the request has it, as JSON. */
  readonly recorded: string;
  readonly found: string;
}

/** The request as the digest sees it, for naming where two requests differ. */
export function requestShape(header: RequestHeaderData, messages: readonly Message[]): unknown {
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
export function firstDifference(
  expected: unknown,
  found: unknown,
  path: string,
): string | undefined {
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

/**
 * The tool results of `found` that differ from `expected`'s when the two requests differ in
 * nothing else (the same header, the same messages in the same order, the same calls answered);
 * `undefined` when they differ anywhere else too.
 */
export function toolResultDifferences(
  expected: { header: RequestHeaderData; messages: readonly Message[] },
  found: { header: RequestHeaderData; messages: readonly Message[] },
): ToolResultDifference[] | undefined {
  const withoutOutputs = (request: typeof expected) =>
    requestShape(request.header, request.messages.map(withoutOutput));
  if (firstDifference(withoutOutputs(expected), withoutOutputs(found), '') !== undefined) {
    return undefined;
  }
  const differences: ToolResultDifference[] = [];
  found.messages.forEach((message, messageIndex) => {
    const before = expected.messages[messageIndex];
    if (message.role !== 'tool' || before?.role !== 'tool') return;
    const [recordedPart] = shapeOf(before);
    const [foundPart] = shapeOf(message);
    const recorded = JSON.stringify(recordedPart?.output ?? null);
    const now = JSON.stringify(foundPart?.output ?? null);
    if (recorded === now) return;
    const { toolCallId } = message.content[0];
    differences.push({
      messageIndex,
      toolCallId,
      toolName: toolNameOf(found.messages, toolCallId),
      recorded,
      found: now,
    });
  });
  return differences;
}

/** A tool message with its output emptied: what is left must match exactly. */
function withoutOutput(message: Message): Message {
  if (message.role !== 'tool') return message;
  const { toolCallId, providerMetadata } = message.content[0];
  const block = {
    type: 'tool-result' as const,
    toolCallId,
    content: [],
    ...(providerMetadata === undefined ? {} : { providerMetadata }),
  };
  return { ...message, content: [block] };
}

function shapeOf(message: Message): { output?: unknown }[] {
  const [prompt] = JSON.parse(canonicalJson(buildPrompt(undefined, [message]))) as {
    content: { output?: unknown }[];
  }[];
  return prompt?.content ?? [];
}

/** The name of the tool a call id was called with, from the assistant message that called it. */
function toolNameOf(messages: readonly Message[], toolCallId: string): string {
  for (const message of messages) {
    if (message.role !== 'assistant') continue;
    for (const block of message.content) {
      if (block.type === 'tool-call' && block.id === toolCallId) return block.name;
    }
  }
  return 'unknown';
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
