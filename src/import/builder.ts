/**
 * The one place imported events are made. A reader walks its source's entries in conversation
 * order and calls the builder; the builder adds the structure palimpsest's vocabulary needs and
 * the sources do not record as such (turns, steps, a `tool/call` before each result), validates
 * every event through a `Session`, and stamps each with where it came from.
 *
 * Everything the builder emits is decided by the entries seen so far, never by later ones: the
 * events of a file's prefix are a prefix of the events of the whole file. That is what makes a
 * re-import of a grown file an append of the new part only.
 */

import { validateHeader } from '../core/header.js';
import {
  type AssistantContentBlock,
  type ChildSessionLink,
  type FinishReason,
  type JsonObject,
  type JsonValue,
  jsonEqual,
  type ReplaceOp,
  type SessionEvent,
  type SessionHeader,
  type TokenUsage,
  type ToolResultContentBlock,
  type TurnEndReason,
  type UserContentBlock,
} from '../core/index.js';
import { SeededLog } from '../core/seeded-log.js';

/** The harnesses palimpsest imports from. */
export type Harness = 'claude-code' | 'codex' | 'pi';

/** Where an event came from, as recorded in its `data.origin`. */
export interface ImportOrigin extends JsonObject {
  readonly harness: Harness;
  /** The source file's name (its full path is in the header's `metadata.imported`). */
  readonly file: string;
  /** The 1-based line of the source entry. */
  readonly line: number;
  /**
   * Present on events the source does not hold as such: `structure` for turn and step brackets
   * and the `tool/call` before a result, `no-result` for the error result of a call the source
   * never answered.
   */
  readonly made?: 'structure' | 'no-result';
  /**
   * Present on a context message the source wrote between a tool call and its result (Codex's
   * approval and sandbox notices): it is placed after the step's results, where every provider
   * accepts it, and `line` keeps its place in the source.
   */
  readonly moved?: 'after-tool-results';
}

/** A source entry's position: its line, and its time in epoch ms. */
export interface At {
  readonly line: number;
  readonly time: number;
}

/** What an assistant message says beyond its content. */
export interface AssistantInfo {
  readonly provider: string;
  readonly model: string;
  readonly finishReason: FinishReason;
  readonly rawFinishReason?: string;
  readonly usage?: TokenUsage;
  /** The turn ends with this message (the source says the agent stopped). */
  readonly endsTurn?: TurnEndReason;
  /**
   * The system prompt the model was sent with this message, where the source records it: a
   * `request/header` precedes the message when it differs from the one in effect.
   */
  readonly system?: string;
}

/** Error code of the result made for a call the source recorded no result for. */
export const NO_RESULT = 'IMPORT_NO_RESULT';

/** How many {@link readingParsedLines} calls are running (they nest; reading is synchronous). */
let parsedReads = 0;

/**
 * Runs `read`, a reader given entries that `JSON.parse` has just made and no other code has
 * seen: the builders it makes admit their events in `parsed` mode, which skips the checks such
 * values pass by construction (symbol and non-enumerable keys, accessors) and keeps every other.
 * Entries handed to a reader by its caller may be any objects, so elsewhere builders check all.
 */
export function readingParsedLines<T>(read: () => T): T {
  parsedReads++;
  try {
    return read();
  } finally {
    parsedReads--;
  }
}

/**
 * Builds one imported session's events. Each event is admitted as it is made, by the rules of a
 * session's seed (see `SeededLog`): every check of an append, without a live session's per-event
 * work.
 */
export class SessionBuilder {
  private readonly log: SeededLog;
  private now = 0;
  private turn = 0;
  private turnOpen = false;
  private step = 0;
  private stepOpen = false;
  private requester = -1;
  /** The system prompt of the last `request/header` written. */
  private system: string | undefined;
  /** Calls the open step's assistant messages requested and no result answered, in order. */
  private readonly pending = new Map<string, { name: string; arguments: string }>();
  /** The source line of each surface-eligible event, by seq. */
  private readonly lines: number[] = [];
  private readonly summaries = new Set<number>();
  private ids = 0;
  /** Context that arrived while calls awaited their results, placed once they have them. */
  private deferred: {
    content: readonly UserContentBlock[];
    at: At;
    source: JsonObject;
    id?: string;
  }[] = [];
  /** The surface seqs the next prompt shadows, after a rewind. */
  private rewound: number[] | undefined;
  /** Messages read from the source (not made by the builder). */
  sourceMessages = 0;
  /** Results the builder made for calls the source never answered. */
  madeResults = 0;

  constructor(
    header: SessionHeader,
    private readonly harness: Harness,
    private readonly file: string,
  ) {
    // Validated as a session validates its header.
    validateHeader(header);
    this.log = new SeededLog(parsedReads > 0 ? 'parsed' : 'adopt');
  }

  /** The events so far, validated and frozen. */
  get events(): readonly SessionEvent[] {
    return this.log.events;
  }

  /** True while a turn is open (the source has not said it ended). */
  get inTurn(): boolean {
    return this.turnOpen;
  }

  /** A user prompt: closes the open turn, opens a new one. */
  prompt(content: readonly UserContentBlock[], at: At, id?: string): void {
    this.at(at);
    if (this.turnOpen) this.closeTurn(this.pending.size > 0 ? abandoned : completed, at);
    this.openTurn(at);
    this.sourceMessages++;
    const data = { id: this.id(id, at), role: 'user', content, source: { kind: 'user' } };
    const rewound = this.rewound;
    this.rewound = undefined;
    if (rewound === undefined || rewound.length === 0) {
      this.surface('user/message', data, at);
      return;
    }
    // The prompt takes the place of what the source went back on, which stays in the log.
    const replace: ReplaceOp = {
      op: 'replace',
      start: rewound[0] as number,
      end: rewound[rewound.length - 1] as number,
    };
    const event = this.add('user/message', withOrigin(data, this.origin(at)), replace, rewound);
    this.lines[event.seq] = at.line;
  }

  /**
   * The source went back to an earlier point (a rewind): the surface entries from position
   * `keep` on are shadowed by the next prompt. Returns false, and changes nothing, when there is
   * no such prompt to go back to (`keep` past the surface).
   */
  rewind(keep: number): boolean {
    const seqs = this.log.surface.seqs;
    if (keep < 0 || keep > seqs.length) return false;
    this.rewound = seqs.slice(keep);
    return true;
  }

  /** The position on the surface of the prompt with this id, if it is on the surface. */
  surfaceIndexOf(id: string): number {
    const seqs = this.log.surface.seqs;
    for (let i = 0; i < seqs.length; i++) {
      const event = this.log.event(seqs[i] as number);
      if (event?.type === 'user/message' && event.data.id === id) return i;
    }
    return -1;
  }

  /** Context the harness injected (instructions, environment, extension messages). */
  context(content: readonly UserContentBlock[], at: At, source: JsonObject, id?: string): void {
    this.at(at);
    this.sourceMessages++;
    if (this.stepOpen && this.pending.size > 0) {
      // Between calls and their results the surface holds only results (a provider refuses
      // anything else there): the message waits for the step's last result.
      this.deferred.push({ content, at, source, ...(id === undefined ? {} : { id }) });
      return;
    }
    this.appendContext(content, at, source, id);
  }

  /**
   * The source ended (not a file still being written): context still waiting for results that
   * never came is placed after the step, closed with made results, so nothing read is dropped.
   */
  settle(at: At): void {
    if (this.deferred.length > 0 && this.stepOpen) this.closeStep(at);
  }

  private appendContext(
    content: readonly UserContentBlock[],
    at: At,
    source: JsonObject,
    id: string | undefined,
    moved?: ImportOrigin['moved'],
  ): void {
    this.surface(
      'context/message',
      { id: this.id(id, at), role: 'user', content, source: { kind: 'context', ...source } },
      at,
      undefined,
      moved,
    );
  }

  private placeDeferred(): void {
    const waiting = this.deferred;
    this.deferred = [];
    for (const { content, at, source, id } of waiting) {
      this.appendContext(content, at, source, id, 'after-tool-results');
    }
  }

  /** One model response: a step of its own, in the open turn (or a new one). */
  assistant(
    content: readonly AssistantContentBlock[],
    info: AssistantInfo,
    at: At,
    id?: string,
  ): void {
    this.at(at);
    if (!this.turnOpen) this.openTurn(at);
    if (this.stepOpen) this.closeStep(at);
    this.step++;
    this.stepOpen = true;
    this.structure('step/start', { turn: this.turn, step: this.step }, at);
    if (info.system !== undefined && info.system !== this.system) {
      this.system = info.system;
      const header = { provider: info.provider, model: info.model, system: info.system };
      this.add('request/header', withOrigin(header, this.origin(at)));
    }
    this.sourceMessages++;
    const data: Record<string, unknown> = {
      turn: this.turn,
      step: this.step,
      message: {
        id: this.id(id, at),
        role: 'assistant',
        content,
        source: { kind: 'model', provider: info.provider, model: info.model },
      },
      finishReason: info.finishReason,
    };
    if (info.rawFinishReason !== undefined) data.rawFinishReason = info.rawFinishReason;
    if (info.usage !== undefined) data.usage = info.usage;
    const event = this.surface('assistant/message', data, at);
    this.requester = event.seq;
    for (const block of content) {
      if (block.type === 'tool-call')
        this.pending.set(block.id, { name: block.name, arguments: block.arguments });
    }
    if (info.endsTurn !== undefined) this.closeTurn(info.endsTurn, at);
  }

  /**
   * The result of call `callId`, as a `tool/call` then a `tool/result` citing it. Returns false,
   * and appends nothing, when the open step requested no such call (an orphan in the source).
   */
  toolResult(
    callId: string,
    content: readonly ToolResultContentBlock[],
    isError: boolean,
    at: At,
    id?: string,
    child?: ChildSessionLink,
  ): boolean {
    this.at(at);
    const call = this.pending.get(callId);
    if (call === undefined || !this.stepOpen) return false;
    this.pending.delete(callId);
    const callData: Record<string, unknown> = {
      turn: this.turn,
      step: this.step,
      callId,
      name: call.name,
      arguments: call.arguments,
    };
    if (child !== undefined) callData.child = child;
    const started = this.structure('tool/call', callData, at);
    this.sourceMessages++;
    const resultData: Record<string, unknown> = {
      turn: this.turn,
      step: this.step,
      message: {
        id: this.id(id, at),
        role: 'tool',
        content: [{ type: 'tool-result', toolCallId: callId, content, isError }],
      },
    };
    if (child !== undefined) resultData.child = child;
    this.surface('tool/result', resultData, at, [started.seq]);
    if (this.pending.size === 0) this.placeDeferred();
    return true;
  }

  /**
   * A compaction the source recorded: `compaction/start`, the summary as a `user/message` that
   * replaces the surface from its start through the last entry `shadows` accepts (it is asked
   * with each entry's source line, and whether the entry is an earlier summary), then
   * `compaction/end`. With nothing to shadow, the summary is appended. `details` are the source's
   * own fields, kept on the bracket.
   */
  compaction(
    summary: readonly UserContentBlock[],
    at: At,
    shadows: (line: number, isSummary: boolean) => boolean,
    details: JsonObject,
    /** What the summary's source says of its shape, beside its kind (Codex's history layout). */
    layout?: JsonObject,
  ): void {
    this.at(at);
    const seqs = this.log.surface.seqs;
    let end = -1;
    for (let i = 0; i < seqs.length; i++) {
      const seq = seqs[i] as number;
      if (shadows(this.lines[seq] ?? 0, this.summaries.has(seq))) end = i;
    }
    const id = `${this.harness}-compaction-${at.line}`;
    const start = this.structure('compaction/start', { id, ...details }, at);
    const shadowed = seqs.slice(0, end + 1);
    const replace: ReplaceOp | undefined =
      end >= 0 ? { op: 'replace', start: seqs[0] as number, end: seqs[end] as number } : undefined;
    this.sourceMessages++;
    const event = this.add(
      'user/message',
      {
        id: this.id(undefined, at),
        role: 'user',
        content: summary,
        source: { kind: 'compaction', id, ...layout },
        origin: this.origin(at),
      },
      replace ?? 'append',
      replace === undefined ? undefined : [...shadowed, start.seq],
    );
    this.lines[event.seq] = at.line;
    this.summaries.add(event.seq);
    this.structure('compaction/end', { id, replaced: shadowed.length }, at);
  }

  /** The source says the turn ended (completed, aborted, failed). */
  endTurn(reason: TurnEndReason, at: At): void {
    this.at(at);
    if (this.turnOpen) this.closeTurn(reason, at);
  }

  private openTurn(at: At): void {
    this.turn++;
    this.step = 0;
    this.turnOpen = true;
    this.structure('turn/start', { turn: this.turn }, at);
  }

  private closeTurn(reason: TurnEndReason, at: At): void {
    if (this.stepOpen) this.closeStep(at);
    this.turnOpen = false;
    this.structure('turn/end', { turn: this.turn, reason }, at);
  }

  private closeStep(at: At): void {
    for (const [callId] of this.pending) {
      this.madeResults++;
      this.add(
        'tool/result',
        {
          turn: this.turn,
          step: this.step,
          message: {
            id: this.id(undefined, at),
            role: 'tool',
            content: [
              {
                type: 'tool-result',
                toolCallId: callId,
                content: [{ type: 'text', text: NO_RESULT_TEXT }],
                isError: true,
              },
            ],
          },
          error: { code: NO_RESULT, message: NO_RESULT_TEXT },
          origin: { harness: this.harness, file: this.file, line: at.line, made: 'no-result' },
        },
        'append',
        [this.requester],
      );
    }
    this.pending.clear();
    this.placeDeferred();
    this.stepOpen = false;
    this.structure('step/end', { turn: this.turn, step: this.step }, at);
  }

  private surface(
    type: 'user/message' | 'context/message' | 'assistant/message' | 'tool/result',
    data: object,
    at: At,
    sourceEventSeqs?: readonly number[],
    moved?: ImportOrigin['moved'],
  ): SessionEvent {
    const origin: ImportOrigin =
      moved === undefined
        ? this.origin(at)
        : { harness: this.harness, file: this.file, line: at.line, moved };
    const event = this.add(type, withOrigin(data, origin), 'append', sourceEventSeqs);
    this.lines[event.seq] = at.line;
    return event;
  }

  private structure(type: string, data: object, at: At): SessionEvent {
    const origin: ImportOrigin = {
      harness: this.harness,
      file: this.file,
      line: at.line,
      made: 'structure',
    };
    return this.add(type, withOrigin(data, origin));
  }

  /**
   * Admits the next event. The data shapes are checked at admission (the builder's callers build
   * them); the envelope's keys are in the order a store writes them.
   */
  private add(
    type: string,
    data: object,
    surfaceOp?: 'append' | ReplaceOp,
    sourceEventSeqs?: readonly number[],
  ): SessionEvent {
    const seq = this.log.seq;
    const time = this.now;
    if (surfaceOp === undefined) return this.log.add({ seq, time, type, data });
    if (sourceEventSeqs === undefined) return this.log.add({ seq, time, type, data, surfaceOp });
    return this.log.add({ seq, time, type, data, surfaceOp, sourceEventSeqs });
  }

  private origin(at: At): ImportOrigin {
    return { harness: this.harness, file: this.file, line: at.line };
  }

  private at(at: At): void {
    // Sources' clocks step back; an event's time is its entry's, never checked for order.
    this.now = at.time;
  }

  private id(sourceId: string | undefined, at: At): string {
    this.ids++;
    return sourceId !== undefined && sourceId !== ''
      ? sourceId
      : `${this.harness}-${at.line}-${this.ids}`;
  }
}

const NO_RESULT_TEXT =
  'The imported session recorded no result for this call (the harness stopped or moved on before it finished).';
const completed: TurnEndReason = { kind: 'completed' };
const abandoned: TurnEndReason = {
  kind: 'aborted',
  cause: 'the source session went on to a new prompt before this turn finished',
};

/**
 * `data`, which the builder made for this one event, with its `origin` as its last field (set in
 * place: a spread into a new object costs more than the rest of the event).
 */
function withOrigin(data: object, origin: ImportOrigin): object {
  (data as { origin?: ImportOrigin }).origin = origin;
  return data;
}

/** The ids {@link SessionBuilder} makes where the source has none: they name the source line. */
const MADE_ID = /^(?:claude-code|codex|pi)-(?:\d+-\d+|compaction-\d+)$/;

/**
 * True when `a` and `b` are the same imported event read from two places: the same entry copied
 * into another file (a harness's fork) gives the same event but for where and when it was read.
 * So the event's `time`, its `data.origin` and the ids the builder made from source lines are
 * left out of the comparison; everything else must be equal.
 */
export function sameImportedEvent(a: SessionEvent, b: SessionEvent): boolean {
  return (
    a.seq === b.seq &&
    a.type === b.type &&
    jsonEqual((a.surfaceOp ?? null) as JsonValue, (b.surfaceOp ?? null) as JsonValue) &&
    jsonEqual((a.sourceEventSeqs ?? null) as JsonValue, (b.sourceEventSeqs ?? null) as JsonValue) &&
    alike(a.data, b.data, true)
  );
}

function alike(a: JsonValue, b: JsonValue, top: boolean): boolean {
  if (typeof a === 'string' && typeof b === 'string') {
    return a === b || (MADE_ID.test(a) && MADE_ID.test(b));
  }
  if (Array.isArray(a) || Array.isArray(b)) {
    return (
      Array.isArray(a) &&
      Array.isArray(b) &&
      a.length === b.length &&
      a.every((item, i) => alike(item, b[i] as JsonValue, false))
    );
  }
  if (typeof a !== 'object' || a === null || typeof b !== 'object' || b === null) return a === b;
  // The top level's `origin` says where the entry was read: the one field a copy changes.
  const keys = Object.keys(a).filter((key) => !(top && key === 'origin'));
  const others = Object.keys(b).filter((key) => !(top && key === 'origin'));
  return (
    keys.length === others.length &&
    keys.every(
      (key) =>
        Object.hasOwn(b, key) &&
        alike((a as JsonObject)[key] as JsonValue, (b as JsonObject)[key] as JsonValue, false),
    )
  );
}
