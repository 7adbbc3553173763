/**
 * What an export to a harness's format sees of a log: its surface-eligible events in order, each
 * an append, a compaction of the history's start, or an edit of one entry, with the surface kept
 * as it goes. The writers (`export-pi.ts`, `export-claude-code.ts`, `export-codex.ts`) turn these
 * into entries; what no format holds is counted here, once, by reason.
 */
import {
  isEventOfType,
  type JsonObject,
  type SessionEvent,
  type UserContentBlock,
} from '../core/index.js';

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

/** What a writer does with each step of the walk. */
export interface ExportSink<Entry> {
  /** An event appended to the surface; its entry, or undefined when it has none. */
  append(event: SessionEvent): Entry | undefined;
  /**
   * A compaction summary replacing the surface's start; `kept` are the entries the surface keeps
   * after it, in order. Returns the summary's entry.
   */
  compaction(event: SessionEvent<'user/message'>, kept: readonly Entry[]): Entry;
  /** One entry replaced by `event` (a pruned result): update `entry` as the model sees it now. */
  edit(entry: Entry, event: SessionEvent): boolean;
  /** A bracket the entries imply (a turn's start or end), for a format that marks them too. */
  bracket?(event: SessionEvent): void;
  /**
   * For an event off the surface that the format holds in part (a request header's system
   * prompt): what of it is lost, or `''` when nothing is. Without it, the walk's own reason.
   */
  unkept?(event: SessionEvent): string | undefined;
}

/** Events that carry nothing a harness file keeps, by the reason they are left out. */
const NOT_KEPT: Readonly<Record<string, string>> = {
  'assistant/chunk': 'stream chunks (the harness keeps whole messages)',
  'request/header': 'request headers: system prompt, tools and settings',
  'request/retry': 'retried model calls (the answer is kept)',
};

/** Brackets a harness's entries imply: turns, steps, tool starts, compaction markers. */
const IMPLIED: ReadonlySet<string> = new Set([
  'turn/start',
  'turn/end',
  'step/start',
  'step/end',
  'tool/call',
  'compaction/start',
  'compaction/end',
]);

/** Walks a log in order, keeping the surface, and hands each step to `sink`. */
export class ExportWalk<Entry> {
  /** The surface so far, as seqs, and the entry each surface seq became. */
  private readonly surface: number[] = [];
  private readonly entryOf = new Map<number, Entry>();
  private readonly lost = new Map<string, number>();

  constructor(private readonly sink: ExportSink<Entry>) {}

  /** Walks `events`. */
  run(events: readonly SessionEvent[]): this {
    for (const event of events) this.add(event);
    return this;
  }

  /** Counts something the format cannot hold. */
  lose(what: string): void {
    this.lost.set(what, (this.lost.get(what) ?? 0) + 1);
  }

  losses(): ExportLoss[] {
    return [...this.lost].map(([what, count]) => ({ what, count }));
  }

  private add(event: SessionEvent): void {
    const op = event.surfaceOp;
    if (op === undefined) {
      if (IMPLIED.has(event.type)) this.sink.bracket?.(event);
      else {
        const reason =
          this.sink.unkept?.(event) ??
          NOT_KEPT[event.type] ??
          `${event.type} events (no entry of the format holds them)`;
        if (reason !== '') this.lose(reason);
      }
      return;
    }
    if (op === 'append') {
      // A message's own chunks and a result's call are implied by the entries; other citations
      // are provenance no harness file records.
      if (
        event.sourceEventSeqs !== undefined &&
        event.type !== 'assistant/message' &&
        event.type !== 'tool/result'
      ) {
        this.lose('provenance (sourceEventSeqs): the format records no derivation');
      }
      const entry = this.sink.append(event);
      if (entry === undefined) return;
      this.surface.push(event.seq);
      this.entryOf.set(event.seq, entry);
      return;
    }
    const from = this.surface.indexOf(op.start);
    const to = this.surface.indexOf(op.end);
    if (from === -1 || to < from) return;
    if (
      from === 0 &&
      isEventOfType(event, 'user/message') &&
      event.data.source.kind === 'compaction'
    ) {
      const kept = this.surface
        .slice(to + 1)
        .map((seq) => this.entryOf.get(seq))
        .filter((entry): entry is Entry => entry !== undefined);
      this.entryOf.set(event.seq, this.sink.compaction(event, kept));
      this.surface.splice(0, to + 1, event.seq);
      return;
    }
    const shadowed = this.entryOf.get(op.start);
    if (from === to && shadowed !== undefined && this.sink.edit(shadowed, event)) {
      this.surface[from] = event.seq;
      this.entryOf.set(event.seq, shadowed);
      this.lose('originals of pruned or edited entries (each is kept as the model sees it now)');
      return;
    }
    this.lose(
      'surface edits that are neither a compaction of the history’s start nor an edit of one entry (the entries are exported as they were)',
    );
  }
}

/** Tool-call arguments as an object (none at all is an empty one); `undefined` if not one. */
export function parseObject(text: string): JsonObject | undefined {
  try {
    const value: unknown = JSON.parse(text === '' ? '{}' : text);
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as JsonObject)
      : undefined;
  } catch {
    return undefined;
  }
}

/** The text blocks of `blocks`, joined by blank lines. */
export function textOf(blocks: readonly UserContentBlock[]): string {
  return blocks
    .map((block) => (block.type === 'text' ? block.text : ''))
    .filter((text) => text !== '')
    .join('\n\n');
}

/** An epoch-ms time as the ISO text the harnesses write. */
export function iso(time: number): string {
  return new Date(time).toISOString();
}
