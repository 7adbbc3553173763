/**
 * A palimpsest session written as a pi session file, which pi resumes: its `session` header, then
 * one entry per message on one path (`id`/`parentId`), a compaction as pi's own `compaction`
 * entry. What pi's format cannot hold (stream chunks, request headers, provenance, edits that
 * are not a compaction of the history's start) is counted in the result's `losses`.
 */
import type {
  AssistantContentBlock,
  AssistantMessageData,
  JsonObject,
  SessionEvent,
  SessionHeader,
  ToolResultData,
  UserContentBlock,
  UserMessage,
} from '../core/index.js';
import { objectField, stringField } from './fields.js';

/** Something of the session the harness's format cannot hold, and how often it occurred. */
export interface ExportLoss {
  readonly what: string;
  readonly count: number;
}

/** A session written in a harness's format. */
export interface HarnessFile {
  /** The file's text (JSONL, `\n` after every line). */
  readonly text: string;
  /** What was not carried over, by reason; empty when nothing was lost. */
  readonly losses: readonly ExportLoss[];
}

/** Options of {@link exportPi}. */
export interface PiExportOptions {
  /**
   * The working directory the header names (pi files sessions by it). Default: the one an
   * imported session recorded, else the empty string pi itself writes for unknown ones.
   */
  readonly cwd?: string;
}

/** The pi format version written (pi 0.73 writes and reads version 3). */
export const PI_SESSION_VERSION = 3;

/** Events that carry nothing pi keeps, by the reason they are left out. */
const NOT_KEPT: Readonly<Record<string, string>> = {
  'assistant/chunk': 'stream chunks (pi keeps whole messages)',
  'request/header': 'request headers: system prompt, tools and settings (pi keeps none)',
  'request/retry': 'retried model calls (pi keeps the answer only)',
};

/** Brackets pi's entries imply: turns, steps, tool starts, compaction markers. */
const IMPLIED: ReadonlySet<string> = new Set([
  'turn/start',
  'turn/end',
  'step/start',
  'step/end',
  'tool/call',
  'compaction/start',
  'compaction/end',
]);

/** A pi entry as written: mutable until the file is serialized (a pruned result is updated). */
type PiEntry = { id: string; [key: string]: unknown };
type Body = Record<string, unknown>;
type PiRole = { role: string; [key: string]: unknown };

/**
 * Writes `session` as a pi session file.
 *
 * @example
 * ```ts
 * import { Session } from 'palimpsest';
 * import { exportPi } from 'palimpsest/import';
 *
 * const session = Session.create({ id: 'pi-export-example', clock: () => 1_767_225_600_000 });
 * session.append('turn/start', { turn: 1 });
 * session.append(
 *   'user/message',
 *   { id: 'u1', role: 'user', content: [{ type: 'text', text: 'Hello' }], source: { kind: 'user' } },
 *   { surfaceOp: 'append' },
 * );
 * const file = exportPi(session);
 * console.log(file.text.split('\n')[1]); // the user message as a pi `message` entry
 * ```
 */
export function exportPi(
  session: { readonly header: SessionHeader; readonly events: readonly SessionEvent[] },
  options: PiExportOptions = {},
): HarnessFile {
  const writer = new PiWriter();
  for (const event of session.events) writer.add(event);
  const imported = importedFrom(session.header);
  const header = {
    type: 'session',
    version: PI_SESSION_VERSION,
    id: imported.harness === 'pi' ? (imported.sessionId ?? session.header.id) : session.header.id,
    timestamp: iso(session.header.createdAt),
    cwd: options.cwd ?? imported.cwd ?? '',
  };
  const lines = [header, ...writer.entries].map((entry) => JSON.stringify(entry));
  return { text: `${lines.join('\n')}\n`, losses: writer.losses() };
}

/** What an imported session's header says of its source (`metadata.imported`). */
function importedFrom(header: SessionHeader): {
  readonly harness: string | undefined;
  readonly sessionId: string | undefined;
  readonly cwd: string | undefined;
} {
  const imported = objectField(header.metadata, 'imported');
  return {
    harness: stringField(imported, 'harness'),
    sessionId: stringField(imported, 'sessionId'),
    cwd: stringField(imported, 'cwd'),
  };
}

/** Walks a log in order, keeping the surface, and writes pi's entries for it. */
class PiWriter {
  readonly entries: PiEntry[] = [];
  /** The surface so far, as seqs; and the pi entry each surface seq became. */
  private readonly surface: number[] = [];
  private readonly entryOf = new Map<number, PiEntry>();
  private readonly toolNames = new Map<string, string>();
  private readonly usedIds = new Set<string>();
  private readonly lost = new Map<string, number>();
  private leaf: string | null = null;

  add(event: SessionEvent): void {
    if (event.surfaceOp === undefined) {
      if (IMPLIED.has(event.type)) return;
      this.lose(NOT_KEPT[event.type] ?? `${event.type} events (no pi entry holds them)`);
      return;
    }
    if (event.sourceEventSeqs !== undefined && event.surfaceOp === 'append') {
      if (event.type !== 'assistant/message' && event.type !== 'tool/result') {
        this.lose('provenance (sourceEventSeqs): pi records no derivation');
      }
    }
    const message = this.message(event);
    if (message === undefined) return;
    if (event.surfaceOp === 'append') {
      this.append(event, message.type === 'message' ? { message: message.value } : message.value);
      return;
    }
    this.replace(event, message);
  }

  losses(): ExportLoss[] {
    return [...this.lost].map(([what, count]) => ({ what, count }));
  }

  private append(event: SessionEvent, body: Body): void {
    this.surface.push(event.seq);
    this.entryOf.set(event.seq, this.push(event, body));
  }

  /** A new entry, the child of the last one (pi's leaf). */
  private push(event: SessionEvent, body: Body): PiEntry {
    const entry: PiEntry = {
      type: body.type === undefined ? 'message' : String(body.type),
      id: this.idFor(event),
      parentId: this.leaf,
      timestamp: iso(event.time),
      ...withoutType(body),
    };
    this.entries.push(entry);
    this.leaf = entry.id;
    return entry;
  }

  /**
   * A replace: of the history's start by a compaction summary, pi's compaction entry; of one
   * entry by another of its kind (a pruned result), that entry as the model sees it now.
   */
  private replace(event: SessionEvent, message: PiMessage): void {
    const op = event.surfaceOp as { start: number; end: number };
    const from = this.surface.indexOf(op.start);
    const to = this.surface.indexOf(op.end);
    if (from === -1 || to < from) return;
    const summary =
      event.type === 'user/message' && (event.data as UserMessage).source.kind === 'compaction';
    if (summary && from === 0) {
      const content = (event.data as UserMessage).content;
      if (content.some((block) => block.type !== 'text')) {
        this.lose('images in a compaction summary (pi’s summary is text)');
      }
      const kept = this.surface[to + 1];
      const entry = this.push(event, {
        type: 'compaction',
        summary: textOf(content),
        firstKeptEntryId: '',
        tokensBefore: 0,
      });
      // Nothing kept: the entry's own id keeps nothing before it (pi's reading of a compaction).
      entry.firstKeptEntryId =
        kept === undefined ? entry.id : (this.entryOf.get(kept)?.id ?? entry.id);
      // The entry is at the tail of pi's path; its summary is first on the surface.
      this.surface.splice(0, to + 1, event.seq);
      this.entryOf.set(event.seq, entry);
      return;
    }
    const shadowed = this.entryOf.get(op.start);
    if (from === to && shadowed !== undefined && message.type === 'message') {
      if ((shadowed.message as PiRole | undefined)?.role === message.value.role) {
        shadowed.message = message.value;
        this.surface[from] = event.seq;
        this.entryOf.set(event.seq, shadowed);
        this.lose('originals of pruned or edited entries (pi holds each as the model sees it now)');
        return;
      }
    }
    this.lose(
      'surface edits that are neither a compaction of the history’s start nor an edit of one entry (the entries are exported as they were)',
    );
  }

  private message(event: SessionEvent): PiMessage | undefined {
    const time = event.time;
    switch (event.type) {
      case 'user/message': {
        const data = event.data as UserMessage;
        return {
          type: 'message',
          value: { role: 'user', content: this.userBlocks(data.content), timestamp: time },
        };
      }
      case 'context/message': {
        const data = event.data as UserMessage;
        const name = (data.source as { name?: unknown }).name;
        return {
          type: 'entry',
          value: {
            type: 'custom_message',
            customType: typeof name === 'string' && name !== '' ? name : 'context',
            content: this.userBlocks(data.content),
            display: true,
          },
        };
      }
      case 'assistant/message':
        return { type: 'message', value: this.assistant(event.data as AssistantMessageData, time) };
      case 'tool/result':
        return { type: 'message', value: this.toolResult(event.data as ToolResultData, time) };
      default:
        this.lose(`${event.type} events on the surface (no pi entry holds them)`);
        return undefined;
    }
  }

  private assistant(data: AssistantMessageData, time: number): PiRole {
    const content: Body[] = [];
    for (const block of data.message.content) {
      const converted = this.assistantBlock(block);
      if (converted !== undefined) content.push(converted);
    }
    const source = data.message.source;
    const usage = data.usage;
    return {
      role: 'assistant',
      content,
      api: 'palimpsest',
      provider: source.kind === 'model' ? source.provider : 'unknown',
      model: source.kind === 'model' ? source.model : 'unknown',
      usage: {
        input: usage?.inputTokens ?? 0,
        output: usage?.outputTokens ?? 0,
        cacheRead: usage?.cachedInputTokens ?? 0,
        cacheWrite: usage?.cacheWriteTokens ?? 0,
        totalTokens: usage?.totalTokens ?? 0,
        cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
      },
      stopReason: STOP_REASONS[data.finishReason] ?? 'stop',
      timestamp: time,
    };
  }

  private assistantBlock(block: AssistantContentBlock): Body | undefined {
    switch (block.type) {
      case 'text':
        return { type: 'text', text: block.text };
      case 'reasoning': {
        const signature = signatureOf(block.providerMetadata);
        return {
          type: 'thinking',
          thinking: block.text,
          ...(signature === undefined ? {} : { thinkingSignature: signature }),
        };
      }
      case 'tool-call': {
        this.toolNames.set(block.id, block.name);
        const parsed = parseObject(block.arguments);
        if (parsed === undefined) this.lose('tool-call arguments that are not a JSON object');
        return { type: 'toolCall', id: block.id, name: block.name, arguments: parsed ?? {} };
      }
      case 'image':
        this.lose('images in model output (pi holds none there)');
        return undefined;
    }
  }

  private toolResult(data: ToolResultData, time: number): PiRole {
    const [result] = data.message.content;
    return {
      role: 'toolResult',
      toolCallId: result.toolCallId,
      toolName: this.toolNames.get(result.toolCallId) ?? 'unknown',
      content: this.userBlocks(result.content),
      isError: result.isError === true,
      timestamp: time,
    };
  }

  private userBlocks(blocks: readonly (UserContentBlock | { type: string })[]): Body[] {
    const out: Body[] = [];
    for (const block of blocks) {
      if (block.type === 'text') out.push({ type: 'text', text: (block as { text: string }).text });
      else if (block.type === 'image' && typeof (block as { data?: unknown }).data === 'string') {
        const image = block as { data: string; mediaType: string };
        out.push({ type: 'image', data: image.data, mimeType: image.mediaType });
      } else this.lose(`${block.type} blocks pi cannot hold (an image by URL)`);
    }
    return out;
  }

  private idFor(event: SessionEvent): string {
    const data = event.data as { id?: unknown; message?: { id?: unknown } };
    const own = typeof data.id === 'string' ? data.id : data.message?.id;
    const id =
      typeof own === 'string' && own !== '' && !this.usedIds.has(own) ? own : `seq-${event.seq}`;
    this.usedIds.add(id);
    return id;
  }

  private lose(what: string): void {
    this.lost.set(what, (this.lost.get(what) ?? 0) + 1);
  }
}

type PiMessage =
  | { readonly type: 'message'; readonly value: PiRole }
  | { readonly type: 'entry'; readonly value: Body };

const STOP_REASONS: Readonly<Record<string, string>> = {
  stop: 'stop',
  'tool-calls': 'toolUse',
  length: 'length',
  error: 'error',
  aborted: 'aborted',
  'content-filter': 'stop',
};

function withoutType(body: Body): Body {
  const { type: _type, ...rest } = body;
  return rest;
}

function signatureOf(metadata: JsonObject | undefined): string | undefined {
  return (
    stringField(objectField(metadata, 'pi'), 'thinkingSignature') ??
    stringField(objectField(metadata, 'anthropic'), 'signature')
  );
}

function parseObject(text: string): JsonObject | undefined {
  try {
    const value: unknown = JSON.parse(text === '' ? '{}' : text);
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as JsonObject)
      : undefined;
  } catch {
    return undefined;
  }
}

function textOf(blocks: readonly UserContentBlock[]): string {
  return blocks
    .map((block) => (block.type === 'text' ? block.text : ''))
    .filter((text) => text !== '')
    .join('\n\n');
}

function iso(time: number): string {
  return new Date(time).toISOString();
}
