/**
 * Provider-neutral messages and their content blocks: what the model sees. Events carry them;
 * `deriveMessages()` returns them. Adapters map them to a provider's request format.
 */
import type { JsonObject, JsonValue } from './json.js';

/** Plain text. */
export type TextBlock = {
  readonly type: 'text';
  readonly text: string;
  /** Provider data that must travel back on the next request (opaque to palimpsest). */
  readonly providerMetadata?: JsonObject;
};

/** Model reasoning ("thinking"), kept so providers that need it on the next request get it. */
export type ReasoningBlock = {
  readonly type: 'reasoning';
  readonly text: string;
  /** For example an Anthropic thinking signature or redacted-thinking payload. */
  readonly providerMetadata?: JsonObject;
};

/** An image, inline (base64 `data`) or by `url`; exactly one of the two is present. */
export type ImageBlock = {
  readonly type: 'image';
  readonly mediaType: string;
  readonly data?: string;
  readonly url?: string;
};

/** A tool call requested by the model. `arguments` is the raw JSON text the model produced. */
export type ToolCallBlock = {
  readonly type: 'tool-call';
  readonly id: string;
  readonly name: string;
  readonly arguments: string;
  readonly providerMetadata?: JsonObject;
};

/** The result of one tool call. */
export type ToolResultBlock = {
  readonly type: 'tool-result';
  readonly toolCallId: string;
  readonly content: readonly ToolResultContentBlock[];
  readonly isError?: boolean;
  /**
   * The result is one JSON value, held as the text of its single text block and sent to the
   * provider as JSON (the AI SDK's `json` tool output): a provider that takes structured results
   * (Google's `functionResponse`) saw an object, not a string, and a rebuilt request must too.
   */
  readonly isJson?: boolean;
  /**
   * Provider data the result carried in the request (an OpenAI Responses item id, say): kept so
   * the next request sends the result as the provider last saw it.
   */
  readonly providerMetadata?: JsonObject;
};

/** Blocks a tool result may hold. */
export type ToolResultContentBlock = TextBlock | ImageBlock;
/** Blocks a user or context message may hold. */
export type UserContentBlock = TextBlock | ImageBlock;
/** Blocks an assistant message may hold. */
export type AssistantContentBlock = TextBlock | ReasoningBlock | ImageBlock | ToolCallBlock;
/** Every content block. */
export type ContentBlock =
  | TextBlock
  | ReasoningBlock
  | ImageBlock
  | ToolCallBlock
  | ToolResultBlock;

/**
 * Where a message came from: `{kind:'user'}` for typed input, `{kind:'compaction', id}` for a
 * summary, `{kind:'context', ...}` for injected context, or any application kind.
 */
export interface MessageSource {
  readonly kind: string;
  readonly [key: string]: JsonValue;
}

/** The source of every assistant message. */
export interface ModelSource extends MessageSource {
  readonly kind: 'model';
  readonly provider: string;
  readonly model: string;
}

/** A message in the user role (prompts, injected context, compaction summaries). */
export type UserMessage = {
  readonly id: string;
  readonly role: 'user';
  readonly content: readonly UserContentBlock[];
  readonly source: MessageSource;
};

/** A message produced by the model. */
export type AssistantMessage = {
  readonly id: string;
  readonly role: 'assistant';
  readonly content: readonly AssistantContentBlock[];
  readonly source: ModelSource;
};

/** The result of one tool call, as the model sees it. */
export type ToolMessage = {
  readonly id: string;
  readonly role: 'tool';
  readonly content: readonly [ToolResultBlock];
};

/** Any message the model sees. */
export type Message = UserMessage | AssistantMessage | ToolMessage;

/** A shape problem: where in the value, and what was wrong. */
export interface ShapeIssue {
  readonly path: string;
  readonly reason: string;
}

type Role = Message['role'];

const ALLOWED_BLOCKS: Record<Role, ReadonlySet<string>> = {
  user: new Set(['text', 'image']),
  assistant: new Set(['text', 'reasoning', 'image', 'tool-call']),
  tool: new Set(['tool-result']),
};
const TOOL_RESULT_BLOCKS: ReadonlySet<string> = new Set(['text', 'image']);

/**
 * Checks that a JSON value is a message of `role`. Returns the first problem, or `undefined`.
 * Only structure that derivation and providers rely on is checked.
 */
export function checkMessageShape(
  value: JsonValue,
  role: Role,
  path: string,
): ShapeIssue | undefined {
  const message = asObject(value);
  if (message === undefined) return { path, reason: `expected a ${role} message object` };
  if (typeof message.id !== 'string' || message.id === '') {
    return { path: `${path}.id`, reason: 'expected a non-empty string message id' };
  }
  if (message.role !== role) {
    return { path: `${path}.role`, reason: `expected role '${role}', found ${show(message.role)}` };
  }
  const content = message.content;
  if (!Array.isArray(content)) {
    return { path: `${path}.content`, reason: 'expected an array of content blocks' };
  }
  if (role === 'tool') {
    if (content.length !== 1) {
      return {
        path: `${path}.content`,
        reason: `expected exactly one tool-result block, found ${content.length} blocks`,
      };
    }
  } else {
    const source = asObject(message.source);
    if (source === undefined || typeof source.kind !== 'string' || source.kind === '') {
      return { path: `${path}.source`, reason: 'expected a source object with a non-empty kind' };
    }
    if (role === 'assistant') {
      if (source.kind !== 'model') {
        return {
          path: `${path}.source.kind`,
          reason: `expected 'model', found ${show(source.kind)}`,
        };
      }
      for (const field of ['provider', 'model'] as const) {
        if (typeof source[field] !== 'string' || source[field] === '') {
          return { path: `${path}.source.${field}`, reason: 'expected a non-empty string' };
        }
      }
    }
  }
  return checkBlocks(content, ALLOWED_BLOCKS[role], path);
}

/**
 * Checks each block of `blocks`, the `content` of the value at `owner`. A block's issue carries
 * its path relative to the block, and the full path is built only then: a seed checks every
 * block of every message, and building each block's path up front cost strings per block.
 */
function checkBlocks(
  blocks: readonly JsonValue[],
  allowed: ReadonlySet<string>,
  owner: string,
): ShapeIssue | undefined {
  for (let i = 0; i < blocks.length; i++) {
    const issue = checkBlock(blocks[i] as JsonValue, allowed);
    if (issue !== undefined) {
      return { path: `${owner}.content[${i}]${issue.path}`, reason: issue.reason };
    }
  }
  return undefined;
}

/** The first problem of one content block, its path relative to the block (`''`: the block). */
function checkBlock(value: JsonValue, allowed: ReadonlySet<string>): ShapeIssue | undefined {
  const block = asObject(value);
  if (block === undefined || typeof block.type !== 'string') {
    return { path: '', reason: 'expected a content block object with a string type' };
  }
  if (!allowed.has(block.type)) {
    return {
      path: '.type',
      reason: `expected one of ${[...allowed].join(', ')}, found ${show(block.type)}`,
    };
  }
  switch (block.type) {
    case 'text':
    case 'reasoning':
      if (typeof block.text !== 'string') return { path: '.text', reason: 'expected a string' };
      return checkMetadata(block);
    case 'image': {
      if (typeof block.mediaType !== 'string' || block.mediaType === '') {
        return { path: '.mediaType', reason: 'expected a non-empty string' };
      }
      const hasData = typeof block.data === 'string';
      const hasUrl = typeof block.url === 'string';
      if (hasData === hasUrl) {
        return { path: '', reason: 'expected exactly one of a string data or a string url' };
      }
      return undefined;
    }
    case 'tool-call':
      for (const field of ['id', 'name'] as const) {
        if (typeof block[field] !== 'string' || block[field] === '') {
          return { path: `.${field}`, reason: 'expected a non-empty string' };
        }
      }
      if (typeof block.arguments !== 'string') {
        return { path: '.arguments', reason: 'expected the raw JSON arguments as a string' };
      }
      return checkMetadata(block);
    default: {
      // tool-result
      if (typeof block.toolCallId !== 'string' || block.toolCallId === '') {
        return { path: '.toolCallId', reason: 'expected a non-empty string' };
      }
      if (block.isError !== undefined && typeof block.isError !== 'boolean') {
        return { path: '.isError', reason: 'expected a boolean when present' };
      }
      const inner = block.content;
      if (!Array.isArray(inner)) return { path: '.content', reason: 'expected an array' };
      return checkBlocks(inner, TOOL_RESULT_BLOCKS, '') ?? checkJson(block) ?? checkMetadata(block);
    }
  }
}

/** A result marked `isJson` holds one text block whose text is JSON. */
function checkJson(block: JsonObject): ShapeIssue | undefined {
  if (block.isJson === undefined || block.isJson === false) return undefined;
  if (block.isJson !== true) return { path: '.isJson', reason: 'expected a boolean when present' };
  const content = block.content as JsonValue[];
  const only = content.length === 1 ? asObject(content[0]) : undefined;
  if (only?.type !== 'text') {
    return {
      path: '.content',
      reason: `expected one text block with isJson, found ${content.length} blocks`,
    };
  }
  try {
    JSON.parse(only.text as string);
  } catch {
    return {
      path: '.content[0].text',
      reason: `expected JSON text with isJson, found ${show(only.text)}`,
    };
  }
  return undefined;
}

function checkMetadata(block: JsonObject): ShapeIssue | undefined {
  const metadata = block.providerMetadata;
  if (metadata !== undefined && asObject(metadata) === undefined) {
    return { path: '.providerMetadata', reason: 'expected an object when present' };
  }
  return undefined;
}

/** The value as a JSON object, or `undefined` when it is a scalar or an array. */
export function asObject(value: JsonValue | undefined): JsonObject | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as JsonObject)
    : undefined;
}

function show(value: JsonValue | undefined): string {
  if (value === undefined) return 'nothing';
  if (typeof value === 'string') return `'${value.length > 40 ? `${value.slice(0, 39)}…` : value}'`;
  if (Array.isArray(value)) return 'an array';
  return value === null ? 'null' : typeof value === 'object' ? 'an object' : String(value);
}
