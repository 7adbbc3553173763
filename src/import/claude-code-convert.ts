/**
 * A Claude Code conversation path, converted into palimpsest events through a `SessionBuilder`:
 * prompts, context, responses (the entries of one response gathered into one message), tool
 * results, compactions. The conversion can stop and go on later, for a transcript that grows.
 */
import type {
  AssistantContentBlock,
  ChildSessionLink,
  FinishReason,
  ImageBlock,
  JsonObject,
  TokenUsage,
  ToolResultContentBlock,
  TurnEndReason,
  UserContentBlock,
} from '../core/index.js';
import type { At, SessionBuilder } from './builder.js';
import type { EntryNode } from './claude-code-nodes.js';
import {
  jsonText,
  numberField,
  objectField,
  objectsField,
  stringField,
  text,
  textAndImages,
} from './fields.js';
import type { Skips } from './source.js';
import { timeOf } from './timestamps.js';

const NO_CHILDREN: ReadonlyMap<string, ChildSessionLink> = new Map();

/** Converts a path into a builder's events, from where it left off. */
export class PathConverter {
  private time = 0;
  private compactMetadata: JsonObject | undefined;

  /**
   * @param children The sessions that calls of this path ran in, by call id, where the result
   *   entry does not name one itself (a subagent whose conversation the same file holds).
   */
  constructor(
    private readonly builder: SessionBuilder,
    private readonly skips: Skips,
    private readonly children: ReadonlyMap<string, ChildSessionLink> = NO_CHILDREN,
  ) {}

  /**
   * Converts `path[from, to)` and returns the index it reached: `to`, or, with `holdUnfinished`,
   * the start of a last response the source has not said is finished (left for a later call).
   */
  convert(path: readonly EntryNode[], from = 0, to = path.length, holdUnfinished = false): number {
    const { builder, skips } = this;
    // Past this index the range holds only links (attachments, metadata), no conversation.
    let lastLink = to - 1;
    while (lastLink >= from && (path[lastLink] as EntryNode).role === 'other') lastLink--;
    for (let i = from; i < to; i++) {
      const current = path[i] as EntryNode;
      this.time = timeOf(current.entry.timestamp, this.time);
      const at: At = { line: current.line, time: this.time };
      if (current.role === 'boundary') {
        this.compactMetadata = objectField(current.entry, 'compactMetadata') ?? {};
        continue;
      }
      if (current.role !== 'conversation') continue;
      const message = objectField(current.entry, 'message') as JsonObject;
      if (current.entry.type === 'assistant') {
        // The entries of one response share message.id; later links of the chain may sit between,
        // and so may the results of calls Claude Code ran while the response was still streaming:
        // the model saw one message, then the results.
        const start = i;
        const group = [message];
        // Results between entries of the response: read after it, before anything that follows.
        const early: EntryNode[] = [];
        const results: EntryNode[] = [];
        const id = stringField(message, 'id');
        // Only results followed the response to the end of what is read: more of it may come.
        let openAtEnd = false;
        for (let scan = i; id !== undefined; ) {
          const next = nextConversation(path, scan, to);
          if (next === undefined) {
            openAtEnd = results.length > 0;
            break;
          }
          scan = next.index;
          if (next.node.entry.type === 'user' && next.node.resultsOnly) {
            results.push(next.node);
            continue;
          }
          const nextMessage = objectField(next.node.entry, 'message');
          if (next.node.entry.type !== 'assistant' || stringField(nextMessage, 'id') !== id) break;
          group.push(nextMessage as JsonObject);
          i = next.index;
          // Results after the last entry of the response are read in their own place.
          early.push(...results.splice(0));
        }
        const last = i >= lastLink || openAtEnd;
        if (holdUnfinished && last && !group.some((m) => typeof m.stop_reason === 'string')) {
          return start;
        }
        assistant(group, builder, skips, at, id ?? (current.entry.uuid as string));
        for (const result of early) {
          const resultAt: At = {
            line: result.line,
            time: timeOf(result.entry.timestamp, this.time),
          };
          user(
            result,
            objectField(result.entry, 'message') as JsonObject,
            builder,
            skips,
            resultAt,
            this.children,
          );
        }
        continue;
      }
      if (current.entry.isCompactSummary === true) {
        const compactMetadata = this.compactMetadata;
        builder.compaction(userContent(message, skips), at, () => true, {
          source: 'compact_boundary',
          ...(compactMetadata === undefined ? {} : { compactMetadata }),
        });
        this.compactMetadata = undefined;
        continue;
      }
      user(current, message, builder, skips, at, this.children);
    }
    return to;
  }
}

function nextConversation(
  path: readonly EntryNode[],
  from: number,
  to: number,
): { node: EntryNode; index: number } | undefined {
  for (let j = from + 1; j < to; j++) {
    const candidate = path[j] as EntryNode;
    if (candidate.role === 'conversation') return { node: candidate, index: j };
    if (candidate.role === 'boundary') return undefined;
  }
  return undefined;
}

function user(
  current: EntryNode,
  message: JsonObject,
  builder: SessionBuilder,
  skips: Skips,
  at: At,
  children: ReadonlyMap<string, ChildSessionLink>,
): void {
  const content = message.content;
  const uuid = current.entry.uuid as string;
  if (Array.isArray(content)) {
    const results = (objectsField(message, 'content') ?? []).filter(
      (block) => block.type === 'tool_result',
    );
    // The result of a subagent's call names the agent; its transcript is the child session.
    const named = results.length === 1 ? childSession(current.entry) : undefined;
    for (const block of results) {
      const callId = stringField(block, 'tool_use_id') ?? '';
      const answered = builder.toolResult(
        callId,
        toolResultContent(block.content, skips),
        block.is_error === true,
        at,
        undefined,
        named ?? children.get(callId),
      );
      if (!answered) skips.add('tool_result without a matching tool_use in its step');
    }
  }
  const blocks = userContent(message, skips);
  if (blocks.length === 0) return;
  if (current.entry.isMeta === true) builder.context(blocks, at, { name: 'meta' }, uuid);
  else builder.prompt(blocks, at, uuid);
}

/**
 * The subagent session a tool result entry names: Claude Code records the agent's id in the
 * entry's `toolUseResult` and files its transcript as `<session>/subagents/agent-<id>.jsonl`,
 * which imports as `claude-code-<session>/subagents/agent-<id>`.
 */
function childSession(entry: JsonObject): ChildSessionLink | undefined {
  const agentId = stringField(objectField(entry, 'toolUseResult'), 'agentId');
  const sessionId = stringField(entry, 'sessionId');
  if (agentId === undefined || agentId === '' || sessionId === undefined || sessionId === '') {
    return undefined;
  }
  return { session: `claude-code-${sessionId}/subagents/agent-${agentId}`, agentId };
}

/** The text and image blocks of a user message (its tool results are read apart). */
function userContent(message: JsonObject, skips: Skips): UserContentBlock[] {
  return textAndImages(message.content, imageBlock, (type) => {
    if (type !== 'tool_result')
      skips.add(`user content block '${type}' (no palimpsest block holds it)`);
  });
}

function toolResultContent(content: unknown, skips: Skips): ToolResultContentBlock[] {
  return textAndImages(content, imageBlock, (type) =>
    skips.add(`tool_result block '${type}' (no palimpsest block holds it)`),
  );
}

function imageBlock(block: JsonObject): ImageBlock | undefined {
  const source = objectField(block, 'source');
  const mediaType = stringField(source, 'media_type') ?? 'image/png';
  const data = stringField(source, 'data');
  if (source?.type === 'base64' && data !== undefined) return { type: 'image', mediaType, data };
  const url = stringField(source, 'url');
  if (url !== undefined) return { type: 'image', mediaType, url };
  return undefined;
}

function assistant(
  group: readonly JsonObject[],
  builder: SessionBuilder,
  skips: Skips,
  at: At,
  id: string,
): void {
  const blocks: JsonObject[] = [];
  let stopReason: string | undefined;
  let usage: JsonObject | undefined;
  let model = 'unknown';
  for (const message of group) {
    model = stringField(message, 'model') ?? model;
    stopReason = stringField(message, 'stop_reason') ?? stopReason;
    usage = objectField(message, 'usage') ?? usage;
    for (const block of objectsField(message, 'content') ?? []) blocks.push(block);
  }
  const content: AssistantContentBlock[] = [];
  // A response rewritten line by line repeats the blocks it had already written (told apart by
  // their JSON text, which a lone block does not need).
  const seen = blocks.length > 1 ? new Set<string>() : undefined;
  for (const block of blocks) {
    if (seen !== undefined) {
      const key = JSON.stringify(block);
      if (seen.has(key)) continue;
      seen.add(key);
    }
    const converted = assistantBlock(block);
    if (converted !== undefined) content.push(converted);
    else
      skips.add(`assistant content block '${String(block.type)}' (no palimpsest block holds it)`);
  }
  const calls = content.some((block) => block.type === 'tool-call');
  const { finishReason, endsTurn } =
    model === SYNTHETIC && !calls ? interrupted : finish(stopReason, calls);
  builder.assistant(
    content,
    {
      provider: 'anthropic',
      model,
      finishReason,
      ...(stopReason === undefined ? {} : { rawFinishReason: stopReason }),
      ...(usage === undefined ? {} : { usage: tokenUsage(usage) }),
      ...(endsTurn === undefined ? {} : { endsTurn }),
    },
    at,
    id,
  );
}

function assistantBlock(block: JsonObject): AssistantContentBlock | undefined {
  switch (block.type) {
    case 'text':
      return typeof block.text === 'string' ? text(block.text) : undefined;
    case 'thinking': {
      const signature = stringField(block, 'signature');
      return {
        type: 'reasoning',
        text: stringField(block, 'thinking') ?? '',
        ...(signature === undefined ? {} : { providerMetadata: { anthropic: { signature } } }),
      };
    }
    case 'redacted_thinking':
      return {
        type: 'reasoning',
        text: '',
        providerMetadata: { anthropic: { redactedData: stringField(block, 'data') ?? '' } },
      };
    case 'tool_use': {
      const id = stringField(block, 'id');
      const name = stringField(block, 'name');
      if (id === undefined || id === '' || name === undefined || name === '') return undefined;
      return { type: 'tool-call', id, name, arguments: jsonText(block.input) };
    }
    default:
      return undefined;
  }
}

/**
 * The model Claude Code names on a reply it wrote itself: resuming a session whose last turn was
 * interrupted (the process stopped mid-answer), it closes that turn with a synthetic "No response
 * requested." The turn was cut, and the reply is not the model's.
 */
const SYNTHETIC = '<synthetic>';
const interrupted: { finishReason: FinishReason; endsTurn: TurnEndReason } = {
  finishReason: 'unknown',
  endsTurn: {
    kind: 'aborted',
    cause: 'interrupted: Claude Code closed the turn with a reply of its own (<synthetic>)',
  },
};

function finish(
  stopReason: string | undefined,
  calls: boolean,
): { finishReason: FinishReason; endsTurn?: TurnEndReason } {
  if (calls) return { finishReason: 'tool-calls' };
  switch (stopReason) {
    case 'end_turn':
    case 'stop_sequence':
      return { finishReason: 'stop', endsTurn: { kind: 'completed' } };
    case 'max_tokens':
      return { finishReason: 'length', endsTurn: { kind: 'max-tokens' } };
    case 'refusal':
      return {
        finishReason: 'content-filter',
        endsTurn: { kind: 'completed', finishReason: 'content-filter' },
      };
    default:
      return { finishReason: 'unknown' };
  }
}

function tokenUsage(usage: JsonObject): TokenUsage {
  const input = numberField(usage, 'input_tokens');
  const output = numberField(usage, 'output_tokens');
  const cacheRead = numberField(usage, 'cache_read_input_tokens');
  const cacheWrite = numberField(usage, 'cache_creation_input_tokens');
  const out: { -readonly [K in keyof TokenUsage]: TokenUsage[K] } = {};
  if (input !== undefined) out.inputTokens = input + (cacheRead ?? 0) + (cacheWrite ?? 0);
  if (output !== undefined) out.outputTokens = output;
  if (cacheRead !== undefined) out.cachedInputTokens = cacheRead;
  if (cacheWrite !== undefined) out.cacheWriteTokens = cacheWrite;
  if (input !== undefined) out.noCacheTokens = input;
  out.raw = usage;
  return out;
}
