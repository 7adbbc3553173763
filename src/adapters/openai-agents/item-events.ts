/**
 * How one OpenAI Agents `AgentInputItem` becomes one surface event. The item itself is kept
 * verbatim in the event's `data.item`, so `getItems` gives back exactly what was added; the
 * message beside it is palimpsest's reading of the item, for the CLI, the viewer and any tool
 * that derives messages. The table in docs/openai-agents.md is this file in prose.
 */
import type {
  AssistantContentBlock,
  AssistantMessageData,
  ImageBlock,
  JsonObject,
  JsonValue,
  TextBlock,
  ToolResultContentBlock,
  ToolResultData,
  UserContentBlock,
  UserMessage,
} from '../../core/index.js';

/** Where the events of one `addItems` call go: its turn and step, and ids for messages. */
export interface ItemPlace {
  readonly turn: number;
  readonly step: number;
  /** A message id for an item that has no `id` of its own (unique within the session). */
  readonly fallbackId: string;
}

/** The provider and model an assistant message names: the items do not say which model. */
export const ITEM_SOURCE = { kind: 'model', provider: 'openai-agents', model: 'unknown' } as const;

/** A user or context message carrying an item. */
export interface UserItemEvent {
  readonly type: 'user/message' | 'context/message';
  readonly data: UserMessage & { readonly item: JsonObject };
}

/**
 * An assistant message carrying an item, or (`items`) the several call items of one model
 * response; `calls` are the call ids its tool-call blocks open.
 */
export interface AssistantItemEvent {
  readonly type: 'assistant/message';
  readonly data: AssistantMessageData &
    ({ readonly item: JsonObject } | { readonly items: readonly JsonObject[] });
  readonly calls: readonly string[];
}

/** A tool result carrying an item; `answers` is the call id it answers. */
export interface ToolItemEvent {
  readonly type: 'tool/result';
  readonly data: ToolResultData & { readonly item: JsonObject };
  readonly answers: string;
}

/** The event one item becomes. */
export type ItemEvent = UserItemEvent | AssistantItemEvent | ToolItemEvent;

/** Item types whose call id opens a tool call, with the tool name palimpsest records. */
const CALLS: ReadonlyMap<string, string | undefined> = new Map([
  ['function_call', undefined], // named by the item
  ['computer_call', 'computer'],
  ['shell_call', 'shell'],
  ['apply_patch_call', 'apply_patch'],
  ['program', 'program'],
]);

/** Item types that answer a call, by call id. */
const RESULTS = new Set([
  'function_call_result',
  'computer_call_result',
  'shell_call_output',
  'apply_patch_call_output',
  'program_output',
]);

/** Server-side work the model reports: shown as assistant text, with no tool pairing to keep. */
const HOSTED = new Set(['hosted_tool_call', 'tool_search_call', 'tool_search_output']);

/** Whether `item` asks the application to run a tool (a call its result will answer). */
export function isCallItem(item: JsonObject): boolean {
  return CALLS.has(itemKind(item));
}

/**
 * The one assistant message that carries consecutive call items: the calls a model response
 * makes in parallel. Providers take parallel calls as one assistant message with several
 * tool-call blocks followed by their results; a message per call would leave each call
 * unanswered before the next message. One item gives the event {@link itemEvent} gives.
 */
export function callsEvent(items: readonly JsonObject[], place: ItemPlace): AssistantItemEvent {
  const events = items.map((item) => itemEvent(item, place));
  const first = events[0];
  if (events.length === 1 && first?.type === 'assistant/message') return first;
  const content: AssistantContentBlock[] = [];
  const calls: string[] = [];
  for (const event of events) {
    if (event.type !== 'assistant/message') continue; // callers pass call items only
    content.push(...event.data.message.content);
    calls.push(...event.calls);
  }
  const data: AssistantItemEvent['data'] = {
    turn: place.turn,
    step: place.step,
    message: {
      id: first?.type === 'assistant/message' ? first.data.message.id : place.fallbackId,
      role: 'assistant',
      content,
      source: ITEM_SOURCE,
    },
    finishReason: 'tool-calls',
    items: [...items],
  };
  return { type: 'assistant/message', data, calls };
}

/** The event that carries `item` (already JSON, validated by the caller). */
export function itemEvent(item: JsonObject, place: ItemPlace): ItemEvent {
  const kind = itemKind(item);
  const id = typeof item.id === 'string' && item.id !== '' ? item.id : place.fallbackId;
  if (kind === 'user' || kind === 'system' || kind === 'developer') {
    const content = messageContent(item.content);
    const data: UserItemEvent['data'] =
      kind === 'user'
        ? { id, role: 'user', content, source: { kind: 'user' }, item }
        : { id, role: 'user', content, source: { kind: 'context', role: kind }, item };
    return { type: kind === 'user' ? 'user/message' : 'context/message', data };
  }
  if (kind === 'compaction') {
    const data: UserItemEvent['data'] = {
      id,
      role: 'user',
      content: [text('[compaction: history summarised by the provider, encrypted]')],
      source: { kind: 'compaction', by: 'openai-agents' },
      item,
    };
    return { type: 'user/message', data };
  }
  if (RESULTS.has(kind)) {
    const callId = callIdOf(item);
    const data: ToolItemEvent['data'] = {
      turn: place.turn,
      step: place.step,
      message: {
        id,
        role: 'tool',
        content: [{ type: 'tool-result', toolCallId: callId, content: resultContent(item) }],
      },
      item,
    };
    return { type: 'tool/result', data, answers: callId };
  }
  const content: AssistantContentBlock[] = [];
  const calls: string[] = [];
  if (CALLS.has(kind)) {
    const callId = callIdOf(item);
    content.push({
      type: 'tool-call',
      id: callId,
      name: CALLS.get(kind) ?? functionName(item),
      arguments: callArguments(kind, item),
    });
    calls.push(callId);
  } else if (kind === 'assistant') {
    content.push(...messageContent(item.content));
  } else if (kind === 'reasoning') {
    content.push(...reasoningContent(item));
  } else if (HOSTED.has(kind)) {
    content.push(text(hostedText(kind, item)));
  } else {
    // `unknown` items and types this adapter does not know: context, so the model's view
    // keeps their place without claiming to know what they mean.
    const data: UserItemEvent['data'] = {
      id,
      role: 'user',
      content: [text(`[${kind} item]`)],
      source: { kind: 'context', itemType: kind },
      item,
    };
    return { type: 'context/message', data };
  }
  const data: AssistantItemEvent['data'] = {
    turn: place.turn,
    step: place.step,
    message: { id, role: 'assistant', content, source: ITEM_SOURCE },
    finishReason: calls.length > 0 ? 'tool-calls' : 'stop',
    item,
  };
  return { type: 'assistant/message', data, calls };
}

/**
 * The item's kind: its `type`, or for a message (whose `type` is optional) its `role`.
 * Undefined for a value that is neither.
 */
export function itemKind(item: JsonObject): string {
  const type = item.type;
  if (type === undefined || type === 'message') {
    const role = item.role;
    return typeof role === 'string' ? role : '';
  }
  return typeof type === 'string' ? type : '';
}

function callIdOf(item: JsonObject): string {
  const callId = item.callId ?? item.call_id;
  return typeof callId === 'string' && callId !== '' ? callId : 'unknown-call';
}

function functionName(item: JsonObject): string {
  const name = typeof item.name === 'string' && item.name !== '' ? item.name : 'function';
  return typeof item.namespace === 'string' && item.namespace !== ''
    ? `${item.namespace}.${name}`
    : name;
}

function callArguments(kind: string, item: JsonObject): string {
  if (kind === 'function_call') return typeof item.arguments === 'string' ? item.arguments : '';
  if (kind === 'program') return typeof item.code === 'string' ? item.code : '';
  const input = item.action ?? item.actions ?? item.operation ?? null;
  return JSON.stringify(input);
}

function text(value: string): TextBlock {
  return { type: 'text', text: value };
}

/** The parts of a user, system or assistant message: each is text or an image to palimpsest. */
function messageContent(content: JsonValue | undefined): UserContentBlock[] {
  if (typeof content === 'string') return [text(content)];
  if (!Array.isArray(content)) return [];
  return content.map((part) => {
    if (!isObject(part)) return text('');
    if (typeof part.text === 'string') return text(part.text); // input_text, output_text
    if (typeof part.refusal === 'string') return text(part.refusal);
    if (part.type === 'input_image' || part.type === 'image') {
      return image(part.image) ?? text('[image]');
    }
    if (part.type === 'input_file') return text(`[file${describeFile(part)}]`);
    if (part.type === 'audio') {
      return text(typeof part.transcript === 'string' ? part.transcript : '[audio]');
    }
    return text(`[${String(part.type)}]`);
  });
}

function reasoningContent(item: JsonObject): AssistantContentBlock[] {
  const parts = [
    ...(Array.isArray(item.rawContent) ? item.rawContent : []),
    ...(Array.isArray(item.content) ? item.content : []),
  ];
  const texts = parts.flatMap((part) =>
    isObject(part) && typeof part.text === 'string' ? [part.text] : [],
  );
  // An encrypted reasoning item has no readable text; an empty block keeps it a reasoning step.
  return (texts.length === 0 ? [''] : texts).map((value) => ({ type: 'reasoning', text: value }));
}

function resultContent(item: JsonObject): ToolResultContentBlock[] {
  const output = item.output;
  if (typeof output === 'string') return [text(output)];
  if (isObject(output)) {
    if (output.type === 'computer_screenshot') return [image(output.data) ?? text('[screenshot]')];
    if (output.type === 'text' && typeof output.text === 'string') return [text(output.text)];
    if (output.type === 'image') return [image(output.image) ?? text('[image]')];
  }
  if (Array.isArray(output)) {
    return output.map((part) => {
      if (isObject(part) && typeof part.text === 'string') return text(part.text);
      if (isObject(part) && (part.type === 'image' || part.type === 'input_image')) {
        return image(part.image) ?? text('[image]');
      }
      return text(JSON.stringify(part));
    });
  }
  return [text(output === undefined ? String(item.status ?? '') : JSON.stringify(output))];
}

function hostedText(kind: string, item: JsonObject): string {
  if (kind === 'hosted_tool_call') {
    const name = typeof item.name === 'string' ? item.name : 'tool';
    const status = typeof item.status === 'string' ? `: ${item.status}` : '';
    return `[hosted tool ${name}${status}]`;
  }
  if (kind === 'tool_search_output') {
    const count = Array.isArray(item.tools) ? item.tools.length : 0;
    return `[tool search found ${count} tool${count === 1 ? '' : 's'}]`;
  }
  return '[tool search]';
}

/** An image block from a URL or a `data:` URL; undefined for anything else (a file id). */
function image(value: JsonValue | undefined): ImageBlock | undefined {
  const url = typeof value === 'string' ? value : isObject(value) ? value.url : undefined;
  if (typeof url === 'string' && url !== '') {
    const data = /^data:([^;,]+);base64,(.*)$/s.exec(url);
    if (data !== null)
      return { type: 'image', mediaType: data[1] ?? 'image/*', data: data[2] ?? '' };
    return { type: 'image', mediaType: 'image/*', url };
  }
  if (isObject(value) && typeof value.data === 'string') {
    const mediaType = typeof value.mediaType === 'string' ? value.mediaType : 'image/*';
    return { type: 'image', mediaType, data: value.data };
  }
  return undefined;
}

function describeFile(part: JsonObject): string {
  if (typeof part.filename === 'string') return ` ${part.filename}`;
  const file = part.file;
  if (isObject(file) && typeof file.url === 'string') return ` ${file.url}`;
  if (isObject(file) && typeof file.id === 'string') return ` ${file.id}`;
  return '';
}

function isObject(value: JsonValue | undefined): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
