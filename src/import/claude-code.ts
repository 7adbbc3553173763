/**
 * Claude Code project transcripts (`~/.claude/projects/<project>/<session>.jsonl`): one entry per
 * line, linked into a tree by `uuid`/`parentUuid`. A compaction starts a new root (a
 * `system`/`compact_boundary` entry whose `logicalParentUuid` names the last entry before it),
 * followed by a user entry marked `isCompactSummary`. One API response is often written as several
 * `assistant` entries, one per content block, sharing `message.id`; they are one message here.
 */
import type {
  AssistantContentBlock,
  FinishReason,
  ImageBlock,
  JsonObject,
  TokenUsage,
  ToolResultContentBlock,
  TurnEndReason,
  UserContentBlock,
} from '../core/index.js';
import { type At, SessionBuilder, timeOf } from './builder.js';
import { type ChainNode, conversationPaths } from './claude-code-chain.js';
import {
  baseName,
  jsonText,
  numberField,
  objectField,
  objectsField,
  stringField,
  text,
  textAndImages,
} from './fields.js';
import { malformedEntry, type SourceLine } from './lines.js';
import {
  assemble,
  baseHeader,
  type ForkSource,
  type ImportedFile,
  type ReadOptions,
  Skips,
} from './source.js';

interface Node extends ChainNode {
  readonly entry: JsonObject;
}

const LEFT_OUT: Readonly<Record<string, string>> = {
  summary: 'summary (a title for the session picker, not conversation)',
  'file-history-snapshot': 'file-history-snapshot (file backups for undo, not conversation)',
  'queue-operation': 'queue-operation (input queued in the UI; it enters as a user entry)',
  progress: 'progress (tool and hook progress shown in the UI)',
  agent_metadata: "agent_metadata (a subagent's type and the call that spawned it, in the header)",
};

/** True when the entries look like a Claude Code transcript (one of its entry shapes appears). */
export function looksLikeClaudeCode(lines: readonly SourceLine[]): boolean {
  return lines.some(({ value }) => {
    const type = value.type;
    if (type === 'summary' || type === 'file-history-snapshot') return true;
    return (
      (type === 'user' || type === 'assistant' || type === 'system') &&
      typeof value.uuid === 'string' &&
      !('payload' in value)
    );
  });
}

/**
 * Reads one Claude Code transcript.
 *
 * @throws ImportError `MALFORMED_LINE` for an entry without a string `type`, or a user or
 *   assistant entry without `uuid` or `message`.
 */
export function readClaudeCode(
  lines: readonly SourceLine[],
  path: string,
  options: ReadOptions = {},
): ImportedFile {
  const file = baseName(path);
  const skips = new Skips();
  const nodes: Node[] = [];
  let sessionId: string | undefined;
  let cwd: string | undefined;
  let version: string | undefined;
  const copies = new Copies();
  // A subagent's own transcript (under `subagents/` in newer versions) is all sidechain: it is
  // read as a conversation; sidechain entries inside a main transcript are left to their own file.
  const subagent = isSubagentTranscript(lines);
  for (const { line, value } of lines) {
    const type = value.type;
    if (typeof type !== 'string') throw malformedEntry(path, line, 'expected a string type');
    copies.note(value, line);
    if (type === 'user' || type === 'assistant') {
      if (typeof value.uuid !== 'string' || objectField(value, 'message') === undefined) {
        throw malformedEntry(path, line, `expected a ${type} entry with a uuid and a message`);
      }
      if (value.isSidechain === true && !subagent) {
        skips.add("sidechain (a subagent's conversation, in its own transcript)");
        continue;
      }
      sessionId ??= stringField(value, 'sessionId');
      cwd ??= stringField(value, 'cwd');
      version ??= stringField(value, 'version');
      nodes.push(node(value, line, 'conversation'));
      continue;
    }
    const boundary = type === 'system' && value.subtype === 'compact_boundary';
    if (!boundary) {
      const subtype = stringField(value, 'subtype');
      skips.add(
        LEFT_OUT[type] ??
          (type === 'system'
            ? `system/${subtype ?? '?'} (a notice shown in the UI, not sent to the model)`
            : `${type} (not part of the model's conversation)`),
      );
    }
    // Every entry with a uuid is a link of the chain, carried over or not.
    if (typeof value.uuid === 'string')
      nodes.push(node(value, line, boundary ? 'boundary' : 'other'));
  }
  const paths = conversationPaths(nodes);
  const first = paths.active.find((n) => n.role === 'conversation');
  if (first === undefined)
    return { harness: 'claude-code', path, sessions: [], skipped: skips.counts };
  const base = {
    // A subagent's transcript is named after its parent session, where Claude Code files it
    // (`<session>/subagents/agent-<id>.jsonl`) and where the Agent SDK's store keys it.
    id:
      subagent && sessionId !== undefined
        ? `claude-code-${sessionId}/subagents/${file.replace(/\.jsonl$/, '')}`
        : `claude-code-${file.replace(/\.jsonl$/, '')}`,
    createdAt: timeOf(first.entry.timestamp, 0),
    metadata: {
      imported: {
        harness: 'claude-code',
        path,
        ...(sessionId === undefined ? {} : { sessionId }),
        ...(cwd === undefined ? {} : { cwd }),
        ...(version === undefined ? {} : { version }),
        ...(copies.parentId === undefined ? {} : { forkedFromSessionId: copies.parentId }),
      },
      ...(subagent && sessionId !== undefined
        ? { subagentOf: subagentLink(lines, sessionId) }
        : {}),
    },
  };
  const build = (path_: readonly Node[], hold = false): SessionBuilder => {
    const builder = new SessionBuilder(baseHeader(base), 'claude-code', file);
    convert(path_, builder, skips, hold);
    return builder;
  };
  const active = build(paths.active, options.holdUnfinished === true);
  skips.active = false;
  const branches = paths.branches
    .filter((branch) => branch.path.some((n) => n.role === 'conversation'))
    .map((branch) => ({ leaf: branch.leaf.id, builder: build(branch.path) }));
  const forkedFrom = copies.source();
  return {
    harness: 'claude-code',
    path,
    sessions: assemble(base, active, branches),
    skipped: skips.counts,
    ...(forkedFrom === undefined ? {} : { forkedFrom }),
  };
}

/**
 * Where a subagent's transcript came from: the parent session's import, the call that spawned it
 * (newer versions name it in an `agent_metadata` entry) and the agent's id.
 */
function subagentLink(lines: readonly SourceLine[], sessionId: string): JsonObject {
  let agentId: string | undefined;
  let toolCallId: string | undefined;
  for (const { value } of lines) {
    agentId ??= stringField(value, 'agentId');
    if (value.type === 'agent_metadata') toolCallId ??= stringField(value, 'toolUseId');
  }
  return {
    session: `claude-code-${sessionId}`,
    ...(toolCallId === undefined ? {} : { toolCallId }),
    ...(agentId === undefined ? {} : { agentId }),
  };
}

function isSubagentTranscript(lines: readonly SourceLine[]): boolean {
  const conversation = lines.filter(
    ({ value }) => value.type === 'user' || value.type === 'assistant',
  );
  return conversation.length > 0 && conversation.every(({ value }) => value.isSidechain === true);
}

/**
 * The entries a `/branch` (or the Agent SDK's `forkSession`) copied: Claude Code writes the
 * branch as a new transcript, `<new session id>.jsonl`, whose copied entries each carry
 * `forkedFrom: {sessionId, messageUuid}` naming the parent session. `--fork-session` copies
 * without the mark, so such a transcript reads as a session of its own.
 */
class Copies {
  private parent: string | undefined;
  private readonly lines = new Set<number>();

  note(entry: JsonObject, line: number): void {
    const from = stringField(objectField(entry, 'forkedFrom'), 'sessionId');
    if (from === undefined || from === '') return;
    this.parent ??= from;
    if (from === this.parent) this.lines.add(line);
  }

  /** The parent's session id, once an entry named it. */
  get parentId(): string | undefined {
    return this.parent;
  }

  source(): ForkSource | undefined {
    if (this.parent === undefined) return undefined;
    return { parent: `claude-code-${this.parent}`, sourceId: this.parent, copiedLines: this.lines };
  }
}

function node(entry: JsonObject, line: number, role: Node['role']): Node {
  const parent =
    stringField(entry, 'parentUuid') ??
    (role === 'boundary' ? stringField(entry, 'logicalParentUuid') : undefined);
  const blocks =
    role === 'conversation' ? (objectsField(objectField(entry, 'message'), 'content') ?? []) : [];
  const ids = (type: string, field: string): string[] =>
    blocks.flatMap((block) => {
      const id = block.type === type ? stringField(block, field) : undefined;
      return id === undefined ? [] : [id];
    });
  const answers = entry.type === 'user' ? ids('tool_result', 'tool_use_id') : [];
  const messageId =
    entry.type === 'assistant' && role === 'conversation'
      ? stringField(objectField(entry, 'message'), 'id')
      : undefined;
  return {
    id: entry.uuid as string,
    parentId: parent,
    line,
    entry,
    role,
    nullParent: entry.parentUuid === null,
    ...(messageId === undefined ? {} : { messageId }),
    calls: entry.type === 'assistant' ? ids('tool_use', 'id') : [],
    answers,
    resultsOnly: answers.length > 0 && blocks.every((block) => block.type === 'tool_result'),
  };
}

function convert(
  path: readonly Node[],
  builder: SessionBuilder,
  skips: Skips,
  holdUnfinished: boolean,
): void {
  let time = 0;
  let compactMetadata: JsonObject | undefined;
  // Past this index the path holds only links (attachments, metadata), no conversation.
  const lastLink = path.findLastIndex((n) => n.role !== 'other');
  for (let i = 0; i < path.length; i++) {
    const current = path[i] as Node;
    time = timeOf(current.entry.timestamp, time);
    const at: At = { line: current.line, time };
    if (current.role === 'boundary') {
      compactMetadata = objectField(current.entry, 'compactMetadata') ?? {};
      continue;
    }
    if (current.role !== 'conversation') continue;
    const message = objectField(current.entry, 'message') as JsonObject;
    if (current.entry.type === 'assistant') {
      // The entries of one response share message.id; later links of the chain may sit between.
      const group = [message];
      const id = stringField(message, 'id');
      while (id !== undefined) {
        const next = nextConversation(path, i);
        if (next === undefined) break;
        const nextMessage = objectField(next.node.entry, 'message');
        if (next.node.entry.type !== 'assistant' || stringField(nextMessage, 'id') !== id) break;
        group.push(nextMessage as JsonObject);
        i = next.index;
      }
      const last = i >= lastLink;
      if (holdUnfinished && last && !group.some((m) => typeof m.stop_reason === 'string')) break;
      assistant(group, builder, skips, at, id ?? (current.entry.uuid as string));
      continue;
    }
    if (current.entry.isCompactSummary === true) {
      builder.compaction(userContent(message, skips), at, () => true, {
        source: 'compact_boundary',
        ...(compactMetadata === undefined ? {} : { compactMetadata }),
      });
      compactMetadata = undefined;
      continue;
    }
    user(current, message, builder, skips, at);
  }
}

function nextConversation(
  path: readonly Node[],
  from: number,
): { node: Node; index: number } | undefined {
  for (let j = from + 1; j < path.length; j++) {
    const candidate = path[j] as Node;
    if (candidate.role === 'conversation') return { node: candidate, index: j };
    if (candidate.role === 'boundary') return undefined;
  }
  return undefined;
}

function user(
  current: Node,
  message: JsonObject,
  builder: SessionBuilder,
  skips: Skips,
  at: At,
): void {
  const content = message.content;
  const uuid = current.entry.uuid as string;
  if (Array.isArray(content)) {
    for (const block of objectsField(message, 'content') ?? []) {
      if (block.type !== 'tool_result') continue;
      const callId = stringField(block, 'tool_use_id') ?? '';
      const answered = builder.toolResult(
        callId,
        toolResultContent(block.content, skips),
        block.is_error === true,
        at,
      );
      if (!answered) skips.add('tool_result without a matching tool_use in its step');
    }
  }
  const blocks = userContent(message, skips);
  if (blocks.length === 0) return;
  if (current.entry.isMeta === true) builder.context(blocks, at, { name: 'meta' }, uuid);
  else builder.prompt(blocks, at, uuid);
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
  const content: AssistantContentBlock[] = [];
  const seen = new Set<string>();
  let stopReason: string | undefined;
  let usage: JsonObject | undefined;
  let model = 'unknown';
  for (const message of group) {
    model = stringField(message, 'model') ?? model;
    stopReason = stringField(message, 'stop_reason') ?? stopReason;
    usage = objectField(message, 'usage') ?? usage;
    for (const block of objectsField(message, 'content') ?? []) {
      // A response rewritten line by line repeats the blocks it had already written.
      const key = JSON.stringify(block);
      if (seen.has(key)) continue;
      seen.add(key);
      const converted = assistantBlock(block);
      if (converted !== undefined) content.push(converted);
      else
        skips.add(`assistant content block '${String(block.type)}' (no palimpsest block holds it)`);
    }
  }
  const calls = content.some((block) => block.type === 'tool-call');
  const { finishReason, endsTurn } = finish(stopReason, calls);
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
  return {
    ...(input === undefined ? {} : { inputTokens: input + (cacheRead ?? 0) + (cacheWrite ?? 0) }),
    ...(output === undefined ? {} : { outputTokens: output }),
    ...(cacheRead === undefined ? {} : { cachedInputTokens: cacheRead }),
    ...(cacheWrite === undefined ? {} : { cacheWriteTokens: cacheWrite }),
    ...(input === undefined ? {} : { noCacheTokens: input }),
    raw: usage,
  };
}
