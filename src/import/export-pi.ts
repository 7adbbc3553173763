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
import {
  type ExportSink,
  ExportWalk,
  type HarnessFile,
  iso,
  parseObject,
  textOf,
} from './export-walk.js';
import { objectField, stringField } from './fields.js';

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
  writer.walk.run(session.events);
  const imported = importedFrom(session.header);
  const header = {
    type: 'session',
    version: PI_SESSION_VERSION,
    id: imported.harness === 'pi' ? (imported.sessionId ?? session.header.id) : session.header.id,
    timestamp: iso(session.header.createdAt),
    cwd: options.cwd ?? imported.cwd ?? '',
  };
  const lines = [header, ...writer.entries].map((entry) => JSON.stringify(entry));
  return { text: `${lines.join('\n')}\n`, losses: writer.walk.losses() };
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

/** Writes pi's entries for the steps of an {@link ExportWalk}. */
class PiWriter implements ExportSink<PiEntry> {
  readonly entries: PiEntry[] = [];
  readonly walk = new ExportWalk<PiEntry>(this);
  private readonly toolNames = new Map<string, string>();
  private readonly usedIds = new Set<string>();
  private leaf: string | null = null;

  append(event: SessionEvent): PiEntry | undefined {
    const message = this.message(event);
    if (message === undefined) return undefined;
    return this.push(
      event,
      message.type === 'message' ? { message: message.value } : message.value,
    );
  }

  compaction(event: SessionEvent<'user/message'>, kept: readonly PiEntry[]): PiEntry {
    const content = event.data.content;
    if (content.some((block) => block.type !== 'text')) {
      this.walk.lose('images in a compaction summary (pi’s summary is text)');
    }
    const entry = this.push(event, {
      type: 'compaction',
      summary: textOf(content),
      firstKeptEntryId: '',
      tokensBefore: 0,
    });
    // Nothing kept: the entry's own id keeps nothing before it (pi's reading of a compaction).
    entry.firstKeptEntryId = kept[0]?.id ?? entry.id;
    return entry;
  }

  edit(entry: PiEntry, event: SessionEvent): boolean {
    const message = this.message(event);
    if (message?.type !== 'message') return false;
    if ((entry.message as PiRole | undefined)?.role !== message.value.role) return false;
    entry.message = message.value;
    return true;
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
        this.walk.lose(`${event.type} events on the surface (no pi entry holds them)`);
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
        if (parsed === undefined) this.walk.lose('tool-call arguments that are not a JSON object');
        return { type: 'toolCall', id: block.id, name: block.name, arguments: parsed ?? {} };
      }
      case 'image':
        this.walk.lose('images in model output (pi holds none there)');
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
      } else this.walk.lose(`${block.type} blocks pi cannot hold (an image by URL)`);
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
