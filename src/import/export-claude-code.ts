/**
 * A palimpsest session written as a Claude Code transcript, which Claude Code resumes
 * (`claude --resume <session id>` from the project's directory, or the Agent SDK's `resume`): one
 * entry per message chained by `parentUuid`, context as `isMeta` user entries, a compaction as
 * Claude Code's own `compact_boundary` and compact summary followed by the entries the surface
 * keeps. Entry ids are derived from the session, so exporting twice writes the same file.
 */
import type {
  AssistantContentBlock,
  AssistantMessageData,
  SessionEvent,
  SessionHeader,
  ToolResultData,
  UserContentBlock,
  UserMessage,
} from '../core/index.js';
import { hexDigest, uuidOf } from './export-ids.js';
import { type ExportSink, ExportWalk, type HarnessFile } from './export-walk.js';
import { objectField, stringField } from './fields.js';

/** Options of {@link exportClaudeCode}. */
export interface ClaudeCodeExportOptions {
  /**
   * The transcript's session id (a UUID: Claude Code names the file after it). Default: the one
   * an imported Claude Code session had, else a UUID derived from the palimpsest id.
   */
  readonly sessionId?: string;
  /**
   * The project directory the entries name (Claude Code files a transcript under it). Default:
   * the one an imported session recorded, else the empty string.
   */
  readonly cwd?: string;
}

/** A transcript written by {@link exportClaudeCode}, and the session id it is filed under. */
export interface ClaudeCodeFile extends HarnessFile {
  readonly sessionId: string;
}

type Entry = { uuid: string; [key: string]: unknown };
type Body = Record<string, unknown>;

/**
 * Writes `session` as a Claude Code transcript (`<sessionId>.jsonl`).
 *
 * @example
 * ```ts
 * import { Session } from 'palimpsest';
 * import { exportClaudeCode } from 'palimpsest/import';
 *
 * const session = Session.create({ id: 'claude-export-example', clock: () => 1_767_225_600_000 });
 * session.append('turn/start', { turn: 1 });
 * session.append(
 *   'user/message',
 *   { id: 'u1', role: 'user', content: [{ type: 'text', text: 'Hello' }], source: { kind: 'user' } },
 *   { surfaceOp: 'append' },
 * );
 * const file = exportClaudeCode(session, { cwd: '/work/app' });
 * console.log(file.sessionId); // a UUID derived from 'claude-export-example'
 * console.log(JSON.parse(file.text).type); // 'user'
 * ```
 */
export function exportClaudeCode(
  session: { readonly header: SessionHeader; readonly events: readonly SessionEvent[] },
  options: ClaudeCodeExportOptions = {},
): ClaudeCodeFile {
  const imported = objectField(session.header.metadata, 'imported');
  const fromClaude = stringField(imported, 'harness') === 'claude-code';
  const sessionId =
    options.sessionId ??
    (fromClaude ? stringField(imported, 'sessionId') : undefined) ??
    uuidOf(`palimpsest:${session.header.id}`);
  const writer = new ClaudeWriter(sessionId, options.cwd ?? stringField(imported, 'cwd') ?? '');
  writer.walk.run(session.events);
  const text = writer.entries.map((entry) => `${JSON.stringify(entry)}\n`).join('');
  return { text, losses: writer.walk.losses(), sessionId };
}

/** Writes Claude Code's entries for the steps of an {@link ExportWalk}. */
class ClaudeWriter implements ExportSink<Entry> {
  readonly entries: Entry[] = [];
  readonly walk = new ExportWalk<Entry>(this);
  private parent: string | null = null;
  private made = 0;

  constructor(
    private readonly sessionId: string,
    private readonly cwd: string,
  ) {}

  append(event: SessionEvent): Entry | undefined {
    const body = this.body(event);
    return body === undefined ? undefined : this.push(event.time, body);
  }

  compaction(event: SessionEvent<'user/message'>, kept: readonly Entry[]): Entry {
    const boundary = this.push(event.time, {
      type: 'system',
      subtype: 'compact_boundary',
      content: 'Conversation compacted',
      isMeta: false,
      level: 'info',
      compactMetadata: { trigger: 'manual', preTokens: 0 },
    });
    // A boundary starts a new chain: Claude Code reads nothing before it.
    boundary.logicalParentUuid = boundary.parentUuid;
    boundary.parentUuid = null;
    const summary = this.push(event.time, {
      type: 'user',
      isCompactSummary: true,
      isVisibleInTranscriptOnly: true,
      message: { role: 'user', content: this.userBlocks(event.data.content) },
    });
    // What the surface keeps after the summary follows it again, as copies on the new chain; a
    // copied answer gets a message id of its own (Claude Code gathers entries by message id).
    for (const entry of kept) {
      const { uuid: _uuid, parentUuid: _parent, timestamp, ...rest } = entry;
      const copy = this.push(Date.parse(String(timestamp)), rest);
      const message = copy.message as Body;
      if (copy.type === 'assistant') copy.message = { ...message, id: messageId(copy.uuid) };
    }
    return summary;
  }

  edit(entry: Entry, event: SessionEvent): boolean {
    const body = this.body(event);
    if (body === undefined || body.type !== entry.type || body.isMeta !== entry.isMeta)
      return false;
    entry.message = body.message;
    return true;
  }

  private body(event: SessionEvent): Body | undefined {
    switch (event.type) {
      case 'user/message':
        return {
          type: 'user',
          message: { role: 'user', content: this.userBlocks(event.data.content) },
        };
      case 'context/message':
        return {
          type: 'user',
          isMeta: true,
          message: { role: 'user', content: this.userBlocks((event.data as UserMessage).content) },
        };
      case 'assistant/message':
        return { type: 'assistant', message: this.assistant(event.data as AssistantMessageData) };
      case 'tool/result':
        return { type: 'user', message: this.toolResult(event.data as ToolResultData) };
      default:
        this.walk.lose(`${event.type} events on the surface (no Claude Code entry holds them)`);
        return undefined;
    }
  }

  private assistant(data: AssistantMessageData): Body {
    const usage = data.usage;
    const cacheRead = usage?.cachedInputTokens ?? 0;
    const cacheWrite = usage?.cacheWriteTokens ?? 0;
    const source = data.message.source;
    return {
      id: messageId(`${this.sessionId}:${data.message.id}`),
      type: 'message',
      role: 'assistant',
      model: source.kind === 'model' ? source.model : 'unknown',
      content: data.message.content.flatMap((block) => this.assistantBlock(block)),
      stop_reason: STOP_REASONS[data.finishReason] ?? null,
      stop_sequence: null,
      usage: {
        // Claude Code's input excludes the cache reads and writes; palimpsest's counts them.
        input_tokens: Math.max(0, (usage?.inputTokens ?? 0) - cacheRead - cacheWrite),
        output_tokens: usage?.outputTokens ?? 0,
        cache_read_input_tokens: cacheRead,
        cache_creation_input_tokens: cacheWrite,
      },
    };
  }

  private assistantBlock(block: AssistantContentBlock): Body[] {
    switch (block.type) {
      case 'text':
        return [{ type: 'text', text: block.text }];
      case 'reasoning': {
        const signature = stringField(
          objectField(block.providerMetadata, 'anthropic'),
          'signature',
        );
        if (signature === undefined) {
          this.walk.lose(
            'reasoning without an Anthropic signature (Claude Code sends only signed thinking)',
          );
        }
        return [{ type: 'thinking', thinking: block.text, signature: signature ?? '' }];
      }
      case 'tool-call':
        return [
          {
            type: 'tool_use',
            id: block.id,
            name: block.name,
            input: parseInput(block.arguments, this.walk),
          },
        ];
      case 'image':
        this.walk.lose('images in model output (Claude Code holds none there)');
        return [];
    }
  }

  private toolResult(data: ToolResultData): Body {
    const [result] = data.message.content;
    return {
      role: 'user',
      content: [
        {
          type: 'tool_result',
          tool_use_id: result.toolCallId,
          content: this.userBlocks(result.content),
          ...(result.isError === true ? { is_error: true } : {}),
        },
      ],
    };
  }

  private userBlocks(blocks: readonly UserContentBlock[]): Body[] {
    const out: Body[] = [];
    for (const block of blocks) {
      if (block.type === 'text') out.push({ type: 'text', text: block.text });
      else if (block.data !== undefined) {
        out.push({
          type: 'image',
          source: { type: 'base64', media_type: block.mediaType, data: block.data },
        });
      } else if (block.url !== undefined) {
        out.push({ type: 'image', source: { type: 'url', url: block.url } });
      }
    }
    return out;
  }

  /** A new entry, chained to the one before it. */
  private push(time: number, body: Body): Entry {
    const uuid = uuidOf(`${this.sessionId}:${this.made++}`);
    const entry: Entry = {
      parentUuid: this.parent,
      isSidechain: false,
      ...body,
      uuid,
      timestamp: new Date(time).toISOString(),
      userType: 'external',
      cwd: this.cwd,
      sessionId: this.sessionId,
      version: EXPORT_VERSION,
    };
    this.entries.push(entry);
    this.parent = uuid;
    return entry;
  }
}

/** The `version` the entries carry: which writer made them (Claude Code writes its own there). */
const EXPORT_VERSION = 'palimpsest-export';

const STOP_REASONS: Readonly<Record<string, string>> = {
  stop: 'end_turn',
  'tool-calls': 'tool_use',
  length: 'max_tokens',
  'content-filter': 'refusal',
};

function parseInput(text: string, walk: ExportWalk<Entry>): unknown {
  try {
    const value: unknown = JSON.parse(text === '' ? '{}' : text);
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value;
  } catch {}
  walk.lose('tool-call arguments that are not a JSON object');
  return {};
}

/** An Anthropic-style message id derived from `text`. */
function messageId(text: string): string {
  return `msg_${hexDigest(text).slice(0, 24)}`;
}
