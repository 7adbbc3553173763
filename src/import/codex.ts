/**
 * Codex CLI rollouts (`~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<uuid>.jsonl`): one
 * `{timestamp, type, payload}` line per `RolloutItem`. `response_item` lines are what the model
 * sees (Responses API items); `event_msg` lines are what the TUI shows, mostly copies of them;
 * `compacted` replaces the history; `turn_context` and `session_meta` are settings. A rollout is
 * linear: a fork is a new rollout naming `forked_from_id`, which starts with a copy of the
 * parent's items (linked as a palimpsest fork by `link.ts`).
 */
import type {
  AssistantContentBlock,
  JsonObject,
  TokenUsage,
  ToolResultContentBlock,
  UserContentBlock,
} from '../core/index.js';
import { type At, SessionBuilder } from './builder.js';
import {
  baseName,
  imageFromUrl,
  objectField,
  objectsField,
  stringField,
  text,
  usageOf,
} from './fields.js';
import { malformedEntry, type SourceLine } from './lines.js';
import { assemble, baseHeader, type ImportedFile, type ReadOptions, Skips } from './source.js';
import { timeOf } from './timestamps.js';

const ROLLOUT_TYPES: ReadonlySet<string> = new Set([
  'session_meta',
  'token_usage_record',
  'world_state',
  'response_item',
  'compacted',
  'turn_context',
  'event_msg',
]);

/** Text that Codex itself puts in a user-role message: context, not the user's words. */
const CONTEXT_PREFIXES = [
  '<environment_context>',
  '<user_instructions>',
  '# AGENTS.md instructions',
  '<user_shell_command>',
  '<turn_aborted>',
];

/** True when the first entry is a rollout line. */
export function looksLikeCodex(lines: readonly SourceLine[]): boolean {
  const first = lines[0]?.value;
  return (
    first !== undefined &&
    typeof first.type === 'string' &&
    ROLLOUT_TYPES.has(first.type) &&
    'payload' in first
  );
}

/** One model response being gathered: Codex writes each of its output items as a line. */
interface Response {
  readonly content: AssistantContentBlock[];
  readonly at: At;
  usage?: TokenUsage;
}

/**
 * Reads one Codex rollout.
 *
 * @throws ImportError `MALFORMED_LINE` for a line without a string `type` or an object `payload`.
 */
export function readCodex(
  lines: readonly SourceLine[],
  path: string,
  options: ReadOptions = {},
): ImportedFile {
  const file = baseName(path);
  const skips = new Skips();
  let meta: JsonObject | undefined;
  for (const { line, value } of lines) {
    if (typeof value.type !== 'string' || objectField(value, 'payload') === undefined) {
      throw malformedEntry(path, line, 'expected a rollout line {timestamp, type, payload}');
    }
    if (value.type === 'session_meta') meta ??= objectField(value, 'payload');
  }
  const sourceId = stringField(meta, 'id') ?? file.replace(/\.jsonl$/, '');
  const forkedFrom = stringField(meta, 'forked_from_id');
  const cwd = stringField(meta, 'cwd');
  const version = stringField(meta, 'cli_version');
  const base = {
    id: `codex-${sourceId}`,
    createdAt: timeOf(meta?.timestamp, timeOf(lines[0]?.value.timestamp, 0)),
    metadata: {
      imported: {
        harness: 'codex',
        path,
        sessionId: sourceId,
        ...(cwd === undefined ? {} : { cwd }),
        ...(version === undefined ? {} : { version }),
        ...(forkedFrom === undefined ? {} : { forkedFromId: forkedFrom }),
      },
    },
  };
  const builder = new SessionBuilder(baseHeader(base), 'codex', file);
  convert(
    lines,
    builder,
    skips,
    stringField(meta, 'model_provider') ?? 'openai',
    options.holdUnfinished === true,
    stringField(objectField(meta, 'base_instructions'), 'text'),
  );
  const sessions = builder.events.length === 0 ? [] : assemble(base, builder, []);
  return {
    harness: 'codex',
    path,
    sessions,
    skipped: skips.counts,
    // Codex copies the parent's rollout items (its session_meta line first) after the child's
    // own session_meta, unmarked: where the copy ends is not recorded.
    ...(forkedFrom === undefined || forkedFrom === ''
      ? {}
      : { forkedFrom: { parent: `codex-${forkedFrom}`, sourceId: forkedFrom } }),
  };
}

function convert(
  lines: readonly SourceLine[],
  builder: SessionBuilder,
  skips: Skips,
  provider: string,
  holdUnfinished: boolean,
  system: string | undefined,
): void {
  let time = 0;
  let model = 'unknown';
  let response: Response | undefined;
  const flush = (): void => {
    if (response === undefined) return;
    const calls = response.content.some((block) => block.type === 'tool-call');
    builder.assistant(
      response.content,
      {
        provider,
        model,
        finishReason: calls ? 'tool-calls' : 'unknown',
        ...(response.usage === undefined ? {} : { usage: response.usage }),
        // Codex sends its base instructions as the request's instructions, every time.
        ...(system === undefined ? {} : { system }),
      },
      response.at,
    );
    response = undefined;
  };
  const gather = (block: AssistantContentBlock, at: At): void => {
    response ??= { content: [], at };
    response.content.push(block);
  };
  for (const { line, value } of lines) {
    time = timeOf(value.timestamp, time);
    const at: At = { line, time };
    const payload = objectField(value, 'payload') as JsonObject;
    switch (value.type) {
      case 'session_meta':
        break;
      case 'turn_context':
        model = stringField(payload, 'model') ?? model;
        skips.add('turn_context (per-turn settings; the model is recorded on each message)');
        break;
      case 'compacted': {
        flush();
        const { content, layout } = compactedSummary(payload);
        builder.compaction(
          content,
          at,
          () => true,
          {
            source: 'compacted',
            ...(Array.isArray(payload.replacement_history)
              ? { replacementHistoryItems: payload.replacement_history.length }
              : {}),
          },
          layout === undefined ? undefined : { replacementHistory: layout },
        );
        break;
      }
      case 'event_msg':
        event(payload, builder, skips, at, flush, () => response);
        break;
      case 'token_usage_record': {
        // Codex 0.17x writes a response's usage as soon as it completes, before the outputs of
        // its calls (its token_count event may come after them).
        const usage = objectField(payload, 'usage');
        if (response !== undefined && usage !== undefined)
          response.usage = usageOf(usage, CODEX_USAGE);
        else skips.add('token_usage_record (usage of a response already ended)');
        break;
      }
      case 'world_state':
        skips.add(
          'world_state (the environment Codex renders into the context messages it sends, which are imported)',
        );
        break;
      case 'response_item':
        item(payload, builder, skips, at, flush, gather);
        break;
      default:
        skips.add(`${String(value.type)} (a rollout item this importer does not know)`);
    }
  }
  // A response's token_count line ends it; without one yet, the harness may still be writing it.
  if (!holdUnfinished) {
    flush();
    builder.settle({ line: lines.at(-1)?.line ?? 0, time });
  }
}

function item(
  payload: JsonObject,
  builder: SessionBuilder,
  skips: Skips,
  at: At,
  flush: () => void,
  gather: (block: AssistantContentBlock, at: At) => void,
): void {
  switch (payload.type) {
    case 'message': {
      const role = payload.role;
      if (role === 'assistant') {
        // Codex 0.12x marks an answer `commentary` or `final_answer` and sends the mark back;
        // 0.17x keeps a text's annotations and sends those back too.
        const phase = stringField(payload, 'phase');
        for (const part of objectsField(payload, 'content') ?? []) {
          const value = stringField(part, 'text');
          if (value === undefined) continue;
          const openai = {
            ...(phase === undefined ? {} : { phase }),
            ...(Array.isArray(part.annotations) ? { annotations: part.annotations } : {}),
          };
          gather(
            Object.keys(openai).length === 0
              ? text(value)
              : { type: 'text', text: value, providerMetadata: { openai } },
            at,
          );
        }
        return;
      }
      flush();
      const content = inputContent(payload, skips);
      if (role === 'user' && !isInjected(content)) builder.prompt(content, at);
      else builder.context(content, at, { name: role === 'user' ? 'codex' : String(role) });
      return;
    }
    case 'reasoning': {
      // One block per summary part, as the AI SDK reads OpenAI's reasoning; the item's
      // encrypted content rides on its first part, and later parts say which part they are.
      const parts = [
        ...(objectsField(payload, 'summary') ?? []),
        ...(objectsField(payload, 'content') ?? []),
      ]
        .map((part) => stringField(part, 'text'))
        .filter((part): part is string => part !== undefined);
      const encrypted = stringField(payload, 'encrypted_content');
      (parts.length === 0 ? [''] : parts).forEach((part, index) => {
        const openai = {
          ...(index === 0 && encrypted !== undefined ? { encryptedContent: encrypted } : {}),
          ...(index === 0 ? {} : { summaryPart: index }),
        };
        gather(
          {
            type: 'reasoning',
            text: part,
            ...(Object.keys(openai).length === 0 ? {} : { providerMetadata: { openai } }),
          },
          at,
        );
      });
      return;
    }
    case 'function_call':
    case 'custom_tool_call':
    case 'local_shell_call': {
      const id = stringField(payload, 'call_id') ?? stringField(payload, 'id');
      if (id === undefined || id === '') {
        skips.add(`${payload.type} without a call_id`);
        return;
      }
      const name =
        payload.type === 'local_shell_call'
          ? 'local_shell'
          : stringField(payload, 'name') || 'unknown';
      const args =
        payload.type === 'function_call'
          ? (stringField(payload, 'arguments') ?? '')
          : payload.type === 'custom_tool_call'
            ? (stringField(payload, 'input') ?? '')
            : JSON.stringify(payload.action ?? {});
      gather({ type: 'tool-call', id, name, arguments: args }, at);
      return;
    }
    case 'function_call_output':
    case 'custom_tool_call_output': {
      flush();
      const { content, isError } = callOutput(payload.output);
      if (!builder.toolResult(stringField(payload, 'call_id') ?? '', content, isError, at)) {
        skips.add(`${payload.type} without a matching call in its step`);
      }
      return;
    }
    case 'web_search_call':
      skips.add('web_search_call (a search the provider ran; no result is recorded)');
      return;
    case 'ghost_snapshot':
      skips.add('ghost_snapshot (a git snapshot for undo, not conversation)');
      return;
    case 'compaction':
    case 'compaction_summary':
      skips.add(`${payload.type} (an encrypted remote compaction; its summary cannot be read)`);
      return;
    default:
      skips.add(`response_item/${String(payload.type)} (an item type this importer does not know)`);
  }
}

function event(
  payload: JsonObject,
  builder: SessionBuilder,
  skips: Skips,
  at: At,
  flush: () => void,
  pending: () => Response | undefined,
): void {
  const type = String(payload.type);
  switch (type) {
    case 'token_count': {
      // Written when a response completes: it ends the response and carries its usage.
      const usage = objectField(objectField(payload, 'info'), 'last_token_usage');
      const response = pending();
      if (response !== undefined && usage !== undefined && response.usage === undefined)
        response.usage = usageOf(usage, CODEX_USAGE);
      flush();
      return;
    }
    case 'task_complete':
    case 'turn_complete':
      flush();
      builder.endTurn({ kind: 'completed' }, at);
      return;
    case 'turn_aborted': {
      flush();
      const reason = stringField(payload, 'reason');
      builder.endTurn({ kind: 'aborted', ...(reason === undefined ? {} : { cause: reason }) }, at);
      return;
    }
    case 'thread_rolled_back':
      skips.add(
        'event_msg/thread_rolled_back (dropping turns would need a replacement that removes entries)',
      );
      return;
    case 'user_message':
    case 'agent_message':
    case 'agent_reasoning':
    case 'agent_reasoning_raw_content':
    case 'context_compacted':
      skips.add(
        `event_msg/${type} (the TUI's copy of what a response_item or compacted line holds)`,
      );
      return;
    default:
      skips.add(`event_msg/${type} (a UI event, not sent to the model)`);
  }
}

function inputContent(payload: JsonObject, skips: Skips): UserContentBlock[] {
  const out: UserContentBlock[] = [];
  for (const part of objectsField(payload, 'content') ?? []) {
    const value = stringField(part, 'text');
    const url = stringField(part, 'image_url');
    if (value !== undefined) out.push(text(value));
    else if (url !== undefined) out.push(imageFromUrl(url));
    else skips.add(`message content '${String(part.type)}' (no palimpsest block holds it)`);
  }
  return out;
}

function isInjected(content: readonly UserContentBlock[]): boolean {
  const first = content[0];
  return (
    first?.type === 'text' &&
    CONTEXT_PREFIXES.some((prefix) => first.text.trimStart().startsWith(prefix))
  );
}

function callOutput(output: unknown): { content: ToolResultContentBlock[]; isError: boolean } {
  if (typeof output === 'string') return { content: [text(output)], isError: false };
  if (Array.isArray(output)) {
    const content: ToolResultContentBlock[] = [];
    for (const part of output) {
      if (typeof part !== 'object' || part === null || Array.isArray(part)) continue;
      const value = stringField(part as JsonObject, 'text');
      const url = stringField(part as JsonObject, 'image_url');
      if (value !== undefined) content.push(text(value));
      else if (url !== undefined) content.push(imageFromUrl(url));
    }
    return { content, isError: false };
  }
  if (typeof output === 'object' && output !== null) {
    const value = stringField(output as JsonObject, 'content') ?? '';
    return { content: [text(value)], isError: (output as JsonObject).success === false };
  }
  return { content: [], isError: false };
}

/** One message of a `replacement_history`: its role, and how many blocks of the summary it gave. */
interface HistoryMessage extends JsonObject {
  readonly role: string;
  readonly blocks: number;
}

/**
 * The summary of a `compacted` line: the texts of its `replacement_history` messages (the history
 * Codex continues from: its context, the user messages it kept, its summary), then `message` if
 * none of them holds it; and which message gave which blocks, so an export writes the same
 * history back.
 */
function compactedSummary(payload: JsonObject): {
  content: UserContentBlock[];
  layout?: HistoryMessage[];
} {
  const message = stringField(payload, 'message') ?? '';
  const history = objectsField(payload, 'replacement_history');
  if (history === undefined) return { content: [text(message)] };
  const content: UserContentBlock[] = [];
  const layout: HistoryMessage[] = [];
  for (const entry of history) {
    if (entry.type !== 'message') continue;
    const before = content.length;
    for (const part of objectsField(entry, 'content') ?? []) {
      const value = stringField(part, 'text');
      if (value !== undefined) content.push(text(value));
    }
    layout.push({ role: stringField(entry, 'role') ?? 'user', blocks: content.length - before });
  }
  if (message !== '' && !content.some((block) => block.type === 'text' && block.text === message)) {
    content.push(text(message));
  }
  return { content, layout };
}

/** The usage fields of the source, by their palimpsest names. */
const CODEX_USAGE = {
  inputTokens: 'input_tokens',
  cachedInputTokens: 'cached_input_tokens',
  outputTokens: 'output_tokens',
  reasoningTokens: 'reasoning_output_tokens',
  cacheWriteTokens: 'cache_write_input_tokens',
  totalTokens: 'total_tokens',
} as const;
