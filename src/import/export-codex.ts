/**
 * A palimpsest session written as a Codex CLI rollout, which Codex resumes (`codex resume <id>`,
 * `codex exec resume <id>`): its `session_meta`, then the model's history as `response_item`
 * lines (messages, reasoning, function and custom tool calls and their outputs), the turns and
 * usage as the `event_msg` lines Codex writes beside them, and a compaction as Codex's own
 * `compacted` line whose replacement history is the summary, followed by what the surface keeps.
 */
import type {
  AssistantContentBlock,
  AssistantMessageData,
  JsonObject,
  ReasoningBlock,
  RequestHeaderData,
  SessionEvent,
  SessionHeader,
  TokenUsage,
  ToolResultData,
  TurnEndData,
  UserContentBlock,
  UserMessage,
} from '../core/index.js';
import { uuidOf } from './export-ids.js';
import {
  type ExportSink,
  ExportWalk,
  type HarnessFile,
  iso,
  parseObject,
  textOf,
} from './export-walk.js';
import { objectField, stringField } from './fields.js';

/** Options of {@link exportCodex}. */
export interface CodexExportOptions {
  /**
   * The rollout's session id (a UUID: Codex finds a session by it). Default: the one an imported
   * Codex session had, else a UUID derived from the palimpsest id.
   */
  readonly sessionId?: string;
  /**
   * The working directory `session_meta` names (Codex lists a directory's sessions by it).
   * Default: the one an imported session recorded, else the empty string.
   */
  readonly cwd?: string;
}

/** A rollout written by {@link exportCodex}: its session id, and where Codex looks for it. */
export interface CodexFile extends HarnessFile {
  readonly sessionId: string;
  /**
   * The file's path under Codex's home (`~/.codex` unless `CODEX_HOME` says otherwise):
   * `sessions/YYYY/MM/DD/rollout-YYYY-MM-DDThh-mm-ss-<session id>.jsonl`, dated by the session's
   * creation (UTC).
   */
  readonly path: string;
}

/** One line of a rollout. */
interface RolloutLine {
  readonly timestamp: string;
  readonly type: 'session_meta' | 'response_item' | 'event_msg' | 'compacted';
  payload: JsonObject;
}

/** What one surface entry became: its lines, the model-visible ones first. */
interface Entry {
  readonly lines: RolloutLine[];
}

/** The `originator` the rollout names: which program wrote it (Codex writes its own there). */
const ORIGINATOR = 'palimpsest_export';

/**
 * Writes `session` as a Codex rollout.
 *
 * @example
 * ```ts
 * import { Session } from 'palimpsest';
 * import { exportCodex } from 'palimpsest/import';
 *
 * const session = Session.create({ id: 'codex-export-example', clock: () => 1_767_225_600_000 });
 * session.append('turn/start', { turn: 1 });
 * session.append(
 *   'user/message',
 *   { id: 'u1', role: 'user', content: [{ type: 'text', text: 'Hello' }], source: { kind: 'user' } },
 *   { surfaceOp: 'append' },
 * );
 * const file = exportCodex(session, { cwd: '/work/app' });
 * console.log(file.path); // sessions/2026/01/01/rollout-2026-01-01T00-00-00-<id>.jsonl
 * ```
 */
export function exportCodex(
  session: { readonly header: SessionHeader; readonly events: readonly SessionEvent[] },
  options: CodexExportOptions = {},
): CodexFile {
  const imported = objectField(session.header.metadata, 'imported');
  const fromCodex = stringField(imported, 'harness') === 'codex';
  const sessionId =
    options.sessionId ??
    (fromCodex ? stringField(imported, 'sessionId') : undefined) ??
    uuidOf(`palimpsest:${session.header.id}`);
  const created = new Date(session.header.createdAt).toISOString();
  const meta: RolloutLine = {
    timestamp: created,
    type: 'session_meta',
    payload: {
      id: sessionId,
      timestamp: created,
      cwd: options.cwd ?? stringField(imported, 'cwd') ?? '',
      originator: ORIGINATOR,
      cli_version: (fromCodex ? stringField(imported, 'version') : undefined) ?? '0.0.0',
      source: 'exec',
    },
  };
  const writer = new CodexWriter(sessionId);
  writer.walk.run(session.events);
  const head: RolloutLine =
    writer.system === undefined
      ? meta
      : { ...meta, payload: { ...meta.payload, base_instructions: { text: writer.system } } };
  const text = [head, ...writer.lines].map((line) => `${JSON.stringify(line)}\n`).join('');
  const stamp = created.slice(0, 19).replaceAll(':', '-');
  const [year, month, day] = created.slice(0, 10).split('-');
  return {
    text,
    losses: writer.walk.losses(),
    sessionId,
    path: `sessions/${year}/${month}/${day}/rollout-${stamp}-${sessionId}.jsonl`,
  };
}

/** Writes a rollout's lines for the steps of an {@link ExportWalk}. */
class CodexWriter implements ExportSink<Entry> {
  readonly lines: RolloutLine[] = [];
  readonly walk = new ExportWalk<Entry>(this);
  /** Calls written as `custom_tool_call` (free-form input): their outputs are custom too. */
  private readonly customCalls = new Set<string>();
  private turnId: string | undefined;
  private lastAnswer: string | null = null;
  private readonly total: Record<string, number> = {};
  /** The system prompt in effect at the end: Codex resumes with it as its base instructions. */
  system: string | undefined;

  constructor(private readonly sessionId: string) {}

  append(event: SessionEvent): Entry | undefined {
    switch (event.type) {
      case 'user/message': {
        const content = (event.data as UserMessage).content;
        return this.entry([
          this.item(event.time, { type: 'message', role: 'user', content: this.input(content) }),
          this.event(event.time, {
            type: 'user_message',
            message: textOf(content),
            images: content.flatMap((block) => (block.type === 'image' ? [imageUrl(block)] : [])),
          }),
        ]);
      }
      case 'context/message': {
        const data = event.data as UserMessage;
        // Codex's own context is a user message (environment) or a developer one (permissions,
        // instructions); context from elsewhere is the developer's word too.
        const role = data.source.name === 'codex' ? 'user' : 'developer';
        return this.entry([
          this.item(event.time, { type: 'message', role, content: this.input(data.content) }),
        ]);
      }
      case 'assistant/message':
        return this.entry(this.response(event.data as AssistantMessageData, event.time));
      case 'tool/result':
        return this.entry([this.output(event.data as ToolResultData, event.time)]);
      default:
        this.walk.lose(`${event.type} events on the surface (no rollout item holds them)`);
        return undefined;
    }
  }

  compaction(event: SessionEvent<'user/message'>, kept: readonly Entry[]): Entry {
    const { history, message } = this.replacementHistory(event.data);
    // Codex continues from the replacement history alone; `message` is what older Codex read.
    const compacted: RolloutLine = {
      timestamp: iso(event.time),
      type: 'compacted',
      payload: { message, replacement_history: history },
    };
    const entry = this.entry([compacted]);
    // What the surface keeps after the summary follows it again, as Codex reads items after a
    // compaction: appended to the replacement history.
    for (const keptEntry of kept) {
      for (const line of keptEntry.lines) {
        if (line.type === 'response_item')
          this.lines.push({ ...line, payload: { ...line.payload } });
      }
    }
    return entry;
  }

  /**
   * A compaction summary as Codex's replacement history: the messages an imported `compacted`
   * line held (its layout says which blocks each gave, and which role it had), else the summary
   * as one user message; `message` is the summary's last text.
   */
  private replacementHistory(data: UserMessage): { history: JsonObject[]; message: string } {
    const content = data.content;
    const last = content.findLast((block) => block.type === 'text');
    const message = last?.type === 'text' ? last.text : '';
    const layout = data.source.replacementHistory;
    if (!Array.isArray(layout)) {
      return {
        history: [{ type: 'message', role: 'user', content: this.input(content) }],
        message,
      };
    }
    const history: JsonObject[] = [];
    let at = 0;
    for (const item of layout) {
      const role = stringField(item as JsonObject, 'role') ?? 'user';
      const blocks = Number((item as JsonObject).blocks ?? 0);
      const part = content.slice(at, at + blocks);
      at += blocks;
      history.push({ type: 'message', role, content: this.input(part) });
    }
    // A `message` none of the history's messages held follows their blocks.
    const rest = content.slice(at);
    const [extra] = rest;
    return { history, message: extra?.type === 'text' ? extra.text : message };
  }

  edit(entry: Entry, event: SessionEvent): boolean {
    if (event.type !== 'tool/result') return false;
    const [line] = entry.lines;
    const type = line?.payload.type;
    if (
      line === undefined ||
      (type !== 'function_call_output' && type !== 'custom_tool_call_output')
    )
      return false;
    line.payload = this.output(event.data as ToolResultData, event.time).payload;
    return true;
  }

  unkept(event: SessionEvent): string | undefined {
    if (event.type !== 'request/header') return undefined;
    const header = event.data as RequestHeaderData;
    if (header.system !== undefined) this.system = header.system;
    if (header.tools === undefined && header.settings === undefined) return '';
    return 'request headers’ tools and settings (Codex sends its own; the last system prompt becomes its base instructions)';
  }

  bracket(event: SessionEvent): void {
    if (event.type === 'turn/start') {
      this.turnId = uuidOf(`${this.sessionId}:turn:${event.seq}`);
      this.lastAnswer = null;
      this.lines.push(this.event(event.time, { type: 'task_started', turn_id: this.turnId }));
    } else if (event.type === 'turn/end') {
      const { reason } = event.data as TurnEndData;
      const turn = this.turnId === undefined ? {} : { turn_id: this.turnId };
      this.lines.push(
        this.event(
          event.time,
          reason.kind === 'completed'
            ? { type: 'task_complete', ...turn, last_agent_message: this.lastAnswer }
            : {
                type: 'turn_aborted',
                ...turn,
                reason: reason.kind === 'aborted' ? (reason.cause ?? 'interrupted') : reason.kind,
              },
        ),
      );
      this.turnId = undefined;
    }
  }

  /** A model response: its items in order, the TUI's copy of its text, then its usage. */
  private response(data: AssistantMessageData, time: number): RolloutLine[] {
    const lines: RolloutLine[] = [];
    const texts: string[] = [];
    for (const block of data.message.content) {
      const previous = lines.at(-1)?.payload;
      if (block.type === 'reasoning' && previous?.type === 'reasoning' && isLaterPart(block)) {
        // A later part of the same reasoning item (see the importer): back into its summary.
        (previous.summary as JsonObject[]).push({ type: 'summary_text', text: block.text });
        continue;
      }
      const payload = this.assistantItem(block);
      if (payload !== undefined) lines.push(this.item(time, payload));
      if (block.type === 'text') texts.push(block.text);
    }
    if (texts.length > 0) {
      this.lastAnswer = texts.join('\n\n');
      lines.push(this.event(time, { type: 'agent_message', message: this.lastAnswer }));
    }
    // Codex ends each response with a token count; it is also where a reader sees one end.
    lines.push(this.event(time, { type: 'token_count', info: this.usageInfo(data.usage) }));
    return lines;
  }

  /** A `token_count`'s `info`: the response's usage and the session's so far. */
  private usageInfo(usage: TokenUsage | undefined): JsonObject | null {
    if (usage === undefined) return null;
    const last = codexUsage(usage);
    // An imported Codex session keeps the counts as Codex wrote them.
    const raw = usage.raw !== undefined && 'input_tokens' in usage.raw ? usage.raw : last;
    for (const [key, value] of Object.entries(last))
      this.total[key] = (this.total[key] ?? 0) + value;
    return { total_token_usage: { ...this.total }, last_token_usage: raw };
  }

  private assistantItem(block: AssistantContentBlock): JsonObject | undefined {
    switch (block.type) {
      case 'text': {
        // Codex 0.12x marks an answer `commentary` or `final_answer`, and sends the mark back;
        // 0.17x keeps a text's annotations.
        const openai = objectField(block.providerMetadata, 'openai');
        const phase = stringField(openai, 'phase');
        const annotations = openai?.annotations;
        return {
          type: 'message',
          role: 'assistant',
          content: [
            {
              type: 'output_text',
              text: block.text,
              ...(Array.isArray(annotations) ? { annotations } : {}),
            },
          ],
          ...(phase === undefined ? {} : { phase }),
        };
      }
      case 'reasoning': {
        const metadata = block.providerMetadata;
        if (metadata !== undefined && metadata.openai === undefined) {
          this.walk.lose('reasoning another provider signed (OpenAI accepts only its own)');
          return undefined;
        }
        const encrypted = stringField(objectField(metadata, 'openai'), 'encryptedContent');
        return {
          type: 'reasoning',
          summary: block.text === '' ? [] : [{ type: 'summary_text', text: block.text }],
          ...(encrypted === undefined ? {} : { encrypted_content: encrypted }),
        };
      }
      case 'tool-call': {
        if (isJsonObject(block.arguments)) {
          return {
            type: 'function_call',
            name: block.name,
            arguments: block.arguments,
            call_id: block.id,
          };
        }
        // Free-form input (Codex's apply_patch): a custom tool call, as Codex wrote it.
        this.customCalls.add(block.id);
        return {
          type: 'custom_tool_call',
          status: 'completed',
          call_id: block.id,
          name: block.name,
          input: block.arguments,
        };
      }
      case 'image':
        this.walk.lose('images in model output (a rollout holds none there)');
        return undefined;
    }
  }

  private output(data: ToolResultData, time: number): RolloutLine {
    const [result] = data.message.content;
    if (result.isError === true) {
      this.walk.lose(
        'the error flag of failed tool results (Codex’s outputs carry none; the text is kept)',
      );
    }
    const only = result.content.length === 1 ? result.content[0] : undefined;
    const output =
      result.content.length === 0
        ? ''
        : only?.type === 'text'
          ? only.text
          : this.input(result.content);
    const custom = this.customCalls.has(result.toolCallId);
    return this.item(time, {
      type: custom ? 'custom_tool_call_output' : 'function_call_output',
      call_id: result.toolCallId,
      output,
    });
  }

  private input(blocks: readonly UserContentBlock[]): JsonObject[] {
    return blocks.map((block) =>
      block.type === 'text'
        ? { type: 'input_text', text: block.text }
        : { type: 'input_image', image_url: imageUrl(block) },
    );
  }

  private entry(lines: RolloutLine[]): Entry {
    this.lines.push(...lines);
    return { lines };
  }

  private item(time: number, payload: JsonObject): RolloutLine {
    return { timestamp: iso(time), type: 'response_item', payload };
  }

  private event(time: number, payload: JsonObject): RolloutLine {
    return { timestamp: iso(time), type: 'event_msg', payload };
  }
}

/** Usage as Codex counts it (its input counts the cached tokens too, as palimpsest's does). */
function codexUsage(usage: TokenUsage): Record<string, number> {
  return {
    input_tokens: usage.inputTokens ?? 0,
    cached_input_tokens: usage.cachedInputTokens ?? 0,
    output_tokens: usage.outputTokens ?? 0,
    reasoning_output_tokens: usage.reasoningTokens ?? 0,
    total_tokens: usage.totalTokens ?? (usage.inputTokens ?? 0) + (usage.outputTokens ?? 0),
  };
}

function imageUrl(block: Extract<UserContentBlock, { type: 'image' }>): string {
  return block.url ?? `data:${block.mediaType};base64,${block.data ?? ''}`;
}

/** Whether a reasoning block continues the item before it (its summary's second part on). */
function isLaterPart(block: ReasoningBlock): boolean {
  return typeof objectField(block.providerMetadata, 'openai')?.summaryPart === 'number';
}

/** Whether tool-call arguments are a function call's (a JSON object, or none at all). */
function isJsonObject(text: string): boolean {
  return parseObject(text) !== undefined;
}
