/**
 * The span model: a session's events, read once in log order, become OpenTelemetry spans one
 * turn at a time. Only the open turn is held; its spans leave when its `turn/end` arrives, so a
 * session of any length exports in memory bounded by its largest turn.
 */
import {
  applySurfaceOp,
  isEventOfType,
  type JsonObject,
  type JsonValue,
  type Message,
  type RequestHeaderData,
  type SessionEvent,
  type SessionHeader,
  type TokenUsage,
  type UserMessage,
} from '../../core/index.js';
import { ERROR_TYPE, GEN_AI, OPERATION, PALIMPSEST } from './attributes.js';
import {
  inputMessagesJson,
  outputMessagesJson,
  providerName,
  resultText,
  semconvFinishReason,
  systemInstructionsJson,
} from './content.js';
import { type SpanAddress, spanIdOf, traceIdOf } from './ids.js';

/** An attribute value as OpenTelemetry takes it. */
export type OtelAttributeValue = string | number | boolean | readonly string[];

/** A span's attributes. */
export type OtelAttributes = Readonly<Record<string, OtelAttributeValue>>;

/** The kinds of span the export writes. */
export type PalimpsestSpanKind = 'invoke_agent' | 'chat' | 'execute_tool' | 'compaction';

/** A span before it is handed to the SDK: plain data, times in epoch ms. */
export interface SpanRecord {
  readonly kind: PalimpsestSpanKind;
  readonly name: string;
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string | undefined;
  /** The seq of the event the span's ids derive from. */
  readonly seq: number;
  readonly startMs: number;
  readonly endMs: number;
  readonly attributes: OtelAttributes;
  /** `error` with a message, or `unset`. */
  readonly error: string | undefined;
  readonly links: readonly SpanLinkRecord[];
  /** `client` for model calls, `internal` for the rest. */
  readonly client: boolean;
}

/** A link from a span to another trace's span (a fork's origin, a subagent's call). */
export interface SpanLinkRecord extends SpanAddress {
  readonly type: 'fork' | 'subagent';
}

/** What {@link SpanModel} needs besides the events. */
export interface SpanModelOptions {
  readonly header: SessionHeader;
  /** Add message content (off by default: nothing a user or tool wrote leaves without it). */
  readonly content: boolean;
  /** `gen_ai.agent.name` and the `invoke_agent {name}` span name, when given. */
  readonly agentName: string | undefined;
  /** The cost in USD of the call whose `assistant/message` or `compaction/end` is at `seq`. */
  readonly cost: ((seq: number) => number | undefined) | undefined;
  /**
   * Where a subagent's turns hang: the parent's `execute_tool` span. Absent for a session that
   * is no subagent, or whose parent was not found.
   */
  readonly parentCall: SpanAddress | undefined;
}

type Mutable = Record<string, OtelAttributeValue>;

interface OpenTurn {
  readonly seq: number;
  readonly turn: number;
  readonly startMs: number;
  readonly traceId: string;
  readonly spanId: string;
  readonly spans: SpanRecord[];
  readonly usage: Record<string, number>;
  cost: number | undefined;
  provider: string | undefined;
  model: string | undefined;
}

interface OpenTool {
  readonly seq: number;
  readonly startMs: number;
  readonly name: string;
  readonly callId: string;
  readonly arguments: string;
  readonly child: string | undefined;
}

interface OpenCompaction {
  readonly seq: number;
  readonly startMs: number;
  readonly data: SessionEvent<'compaction/start'>['data'];
  summary: string | undefined;
}

/**
 * Turns a session's events into spans, one event at a time. `push` returns the spans an event
 * completed (a turn's, when its `turn/end` arrives; a compaction's outside any turn); events of
 * a fork's inherited prefix build state but no spans, since the parent's export names them.
 */
export class SpanModel {
  private readonly session: string;
  private readonly seedLength: number;
  private header: RequestHeaderData | undefined;
  private turn: OpenTurn | undefined;
  private stepStartMs: number | undefined;
  private retries = 0;
  private readonly tools = new Map<string, OpenTool>();
  /** Tool names by call id, from the turn's answers: a denied call has no `tool/call`. */
  private readonly requested = new Map<string, string>();
  private compaction: OpenCompaction | undefined;
  /** The fork's origin: the parent's last turn before the fork point. */
  private forkOrigin: number | undefined;
  private forkLinked = false;
  /** With content only: the surface, and the message of each seq on it. */
  private readonly order: number[] = [];
  private readonly messages = new Map<number, Message>();
  /** Turns begun but never ended (a session still being written, or one a crash cut). */
  openTurnsSkipped = 0;

  constructor(private readonly options: SpanModelOptions) {
    this.session = options.header.id;
    this.seedLength = options.header.seedLength ?? 0;
  }

  /** Reads one event; returns the spans it completed, in the order they ended. */
  push(event: SessionEvent): readonly SpanRecord[] {
    if (this.options.content) this.trackSurface(event);
    const inherited = event.seq < this.seedLength;
    if (isEventOfType(event, 'request/header')) this.header = event.data;
    else if (isEventOfType(event, 'turn/start')) {
      if (inherited) this.forkOrigin = event.seq;
      else {
        if (this.turn !== undefined) this.openTurnsSkipped++;
        this.openTurn(event.seq, event.data.turn, event.time);
      }
    } else if (event.type === 'step/start') {
      this.stepStartMs = event.time;
      this.retries = 0;
    } else if (event.type === 'request/retry') this.retries++;
    else if (inherited) return NONE;
    else if (isEventOfType(event, 'assistant/message')) {
      this.chat(event);
      // A second call of the same step (after an overflow) begins when the first ended.
      this.stepStartMs = event.time;
    } else if (isEventOfType(event, 'tool/call')) this.toolCall(event);
    else if (isEventOfType(event, 'tool/result')) this.toolResult(event);
    else if (isEventOfType(event, 'compaction/start')) {
      this.compaction = {
        seq: event.seq,
        startMs: event.time,
        data: event.data,
        summary: undefined,
      };
    } else if (isEventOfType(event, 'user/message')) this.summary(event.data);
    else if (isEventOfType(event, 'compaction/end')) return this.compactionEnd(event);
    else if (isEventOfType(event, 'turn/end')) return this.turnEnd(event);
    return NONE;
  }

  private summary(message: UserMessage): void {
    if (this.compaction === undefined || !this.options.content) return;
    if (message.source.kind !== 'compaction') return;
    this.compaction.summary = message.content
      .map((block) => (block.type === 'text' ? block.text : ''))
      .join('');
  }

  /** The spans of a turn still open when the events ran out are not exported; counts it. */
  finish(): void {
    if (this.turn !== undefined) this.openTurnsSkipped++;
    this.turn = undefined;
  }

  private trackSurface(event: SessionEvent): void {
    if (event.surfaceOp === undefined) return;
    applySurfaceOp(this.order, event, (replacement) => {
      for (const seq of replacement.shadowedSeqs) this.messages.delete(seq);
    });
    const message = messageOf(event);
    if (message !== undefined) this.messages.set(event.seq, message);
  }

  private openTurn(seq: number, turn: number, time: number): void {
    const parent = this.options.parentCall;
    this.turn = {
      seq,
      turn,
      startMs: time,
      // A subagent's turns join its parent's trace, under the call that ran them.
      traceId: parent?.traceId ?? traceIdOf(this.session, seq),
      spanId: spanIdOf(this.session, seq),
      spans: [],
      usage: {},
      cost: undefined,
      provider: undefined,
      model: undefined,
    };
    this.tools.clear();
    this.requested.clear();
  }

  private chat(event: SessionEvent<'assistant/message'>): void {
    const turn = this.turn;
    if (turn === undefined) return;
    const data = event.data;
    const source = data.message.source;
    const requestModel = this.header?.model ?? source.model;
    const attributes: Mutable = {
      [GEN_AI.operationName]: OPERATION.chat,
      [GEN_AI.providerName]: providerName(source.provider),
      [GEN_AI.requestModel]: requestModel,
      [GEN_AI.responseModel]: source.model,
      [GEN_AI.responseFinishReasons]: [semconvFinishReason(data.finishReason)],
      [GEN_AI.conversationId]: this.session,
      [PALIMPSEST.seq]: event.seq,
      [PALIMPSEST.turn]: data.turn,
      [PALIMPSEST.step]: data.step,
    };
    addSettings(attributes, this.header);
    if (data.rawFinishReason !== undefined)
      attributes[PALIMPSEST.rawFinishReason] = data.rawFinishReason;
    if (this.retries > 0) attributes[PALIMPSEST.retries] = this.retries;
    if (data.interrupted === true) attributes[PALIMPSEST.interrupted] = true;
    addUsage(attributes, data.usage, turn.usage);
    const cost = this.options.cost?.(event.seq);
    if (cost !== undefined) {
      attributes[PALIMPSEST.costUsd] = cost;
      turn.cost = (turn.cost ?? 0) + cost;
    }
    if (this.options.content) {
      const system = this.header?.system;
      if (system !== undefined)
        attributes[GEN_AI.systemInstructions] = systemInstructionsJson(system);
      attributes[GEN_AI.inputMessages] = inputMessagesJson(this.messagesBefore(event.seq));
      attributes[GEN_AI.outputMessages] = outputMessagesJson(data.message, data.finishReason);
    }
    for (const block of data.message.content) {
      if (block.type === 'tool-call') this.requested.set(block.id, block.name);
    }
    turn.provider ??= source.provider;
    turn.model ??= requestModel;
    const failed = data.finishReason === 'error';
    if (failed) attributes[ERROR_TYPE] = 'error';
    turn.spans.push({
      kind: 'chat',
      name: `${OPERATION.chat} ${requestModel}`,
      traceId: turn.traceId,
      spanId: spanIdOf(this.session, event.seq),
      parentSpanId: turn.spanId,
      seq: event.seq,
      startMs: this.stepStartMs ?? event.time,
      endMs: event.time,
      attributes,
      error: failed ? 'the model call ended with an error' : undefined,
      links: [],
      client: true,
    });
  }

  /** The surface the call at `seq` received: every entry but its own answer. */
  private *messagesBefore(seq: number): Iterable<Message> {
    for (const entry of this.order) {
      if (entry === seq) continue;
      const message = this.messages.get(entry);
      if (message !== undefined) yield message;
    }
  }

  private toolCall(event: SessionEvent<'tool/call'>): void {
    const data = event.data;
    this.tools.set(data.callId, {
      seq: event.seq,
      startMs: event.time,
      name: data.name,
      callId: data.callId,
      arguments: data.arguments,
      child: data.child?.session,
    });
  }

  private toolResult(event: SessionEvent<'tool/result'>): void {
    const turn = this.turn;
    if (turn === undefined) return;
    const data = event.data;
    const block = data.message.content[0];
    const callId = block.toolCallId;
    const call = this.tools.get(callId);
    this.tools.delete(callId);
    const name = call?.name ?? this.requested.get(callId) ?? 'tool';
    // A denied call never started: its span is the result alone, keyed by the result's seq.
    const seq = call?.seq ?? event.seq;
    const attributes: Mutable = {
      [GEN_AI.operationName]: OPERATION.executeTool,
      [GEN_AI.toolName]: name,
      [GEN_AI.toolCallId]: callId,
      [GEN_AI.toolType]: 'function',
      [GEN_AI.conversationId]: this.session,
      [PALIMPSEST.seq]: seq,
      [PALIMPSEST.turn]: data.turn,
      [PALIMPSEST.step]: data.step,
    };
    if (data.decision !== undefined) attributes[PALIMPSEST.toolDecision] = data.decision.action;
    const child = call?.child ?? data.child?.session;
    if (child !== undefined) attributes[PALIMPSEST.childSession] = child;
    const failed = data.error !== undefined || block.isError === true;
    if (data.error !== undefined) attributes[ERROR_TYPE] = data.error.code;
    else if (failed) attributes[ERROR_TYPE] = 'tool_error';
    if (this.options.content) {
      if (call !== undefined) attributes[GEN_AI.toolCallArguments] = call.arguments;
      attributes[GEN_AI.toolCallResult] = resultText(block.content);
    }
    turn.spans.push({
      kind: 'execute_tool',
      name: `${OPERATION.executeTool} ${name}`,
      traceId: turn.traceId,
      spanId: spanIdOf(this.session, seq),
      parentSpanId: turn.spanId,
      seq,
      startMs: call?.startMs ?? event.time,
      endMs: event.time,
      attributes,
      // The error code only: the message may quote what the tool was given or returned.
      error: failed ? `the tool call failed (${data.error?.code ?? 'tool_error'})` : undefined,
      links: [],
      client: false,
    });
  }

  private compactionEnd(event: SessionEvent<'compaction/end'>): readonly SpanRecord[] {
    const open = this.compaction;
    this.compaction = undefined;
    if (open === undefined) return NONE;
    const data = event.data;
    const turn = this.turn;
    const attributes: Mutable = {
      [GEN_AI.operationName]: OPERATION.chat,
      [GEN_AI.conversationId]: this.session,
      [PALIMPSEST.seq]: open.seq,
      [PALIMPSEST.compactionId]: open.data.id,
    };
    const kind = open.data.kind;
    if (typeof kind === 'string') attributes[PALIMPSEST.compactionKind] = kind;
    // palimpsest's compaction names the summarizer on compaction/end (older logs do not).
    const model = data.model as { provider?: unknown; model?: unknown } | undefined;
    if (typeof model?.provider === 'string')
      attributes[GEN_AI.providerName] = providerName(model.provider);
    if (typeof model?.model === 'string') attributes[GEN_AI.requestModel] = model.model;
    if (typeof data.replaced === 'boolean')
      attributes[PALIMPSEST.compactionReplaced] = data.replaced;
    if (typeof data.tokensBefore === 'number')
      attributes[PALIMPSEST.compactionTokensBefore] = data.tokensBefore;
    if (typeof data.tokensAfter === 'number')
      attributes[PALIMPSEST.compactionTokensAfter] = data.tokensAfter;
    addUsage(attributes, usageOf(data.usage), turn?.usage);
    const cost = this.options.cost?.(event.seq);
    if (cost !== undefined) {
      attributes[PALIMPSEST.costUsd] = cost;
      if (turn !== undefined) turn.cost = (turn.cost ?? 0) + cost;
    }
    if (this.options.content && open.summary !== undefined) {
      attributes[PALIMPSEST.compactionSummary] = open.summary;
    }
    const failed = data.error !== undefined;
    if (failed) attributes[ERROR_TYPE] = typeof data.reason === 'string' ? data.reason : 'failed';
    const span: SpanRecord = {
      kind: 'compaction',
      name: `compaction ${typeof kind === 'string' ? kind : 'summary'}`,
      traceId:
        turn?.traceId ?? this.options.parentCall?.traceId ?? traceIdOf(this.session, open.seq),
      spanId: spanIdOf(this.session, open.seq),
      parentSpanId: turn?.spanId ?? this.options.parentCall?.spanId,
      seq: open.seq,
      startMs: open.startMs,
      endMs: event.time,
      attributes,
      error: failed ? 'the compaction failed' : undefined,
      links: [],
      client: false,
    };
    if (turn !== undefined) {
      turn.spans.push(span);
      return NONE;
    }
    return [span];
  }

  private turnEnd(event: SessionEvent<'turn/end'>): readonly SpanRecord[] {
    const turn = this.turn;
    this.turn = undefined;
    if (turn === undefined) return NONE;
    const reason = event.data.reason;
    const agentName = this.options.agentName;
    const attributes: Mutable = {
      [GEN_AI.operationName]: OPERATION.invokeAgent,
      [GEN_AI.conversationId]: this.session,
      [PALIMPSEST.sessionId]: this.session,
      [PALIMPSEST.seq]: turn.seq,
      [PALIMPSEST.turn]: turn.turn,
      [PALIMPSEST.turnEndReason]: reason.kind,
    };
    if (agentName !== undefined) attributes[GEN_AI.agentName] = agentName;
    if (turn.provider !== undefined) attributes[GEN_AI.providerName] = providerName(turn.provider);
    if (turn.model !== undefined) attributes[GEN_AI.requestModel] = turn.model;
    for (const [key, value] of Object.entries(turn.usage)) attributes[key] = value;
    if (turn.cost !== undefined) attributes[PALIMPSEST.costUsd] = turn.cost;
    const links = this.linksOf(attributes);
    const failure = failureOf(reason);
    if (failure !== undefined) attributes[ERROR_TYPE] = failure;
    // A tool still open at the turn's end never reported (a crash repair closes it with a result).
    this.tools.clear();
    this.requested.clear();
    turn.spans.push({
      kind: 'invoke_agent',
      name:
        agentName === undefined ? OPERATION.invokeAgent : `${OPERATION.invokeAgent} ${agentName}`,
      traceId: turn.traceId,
      spanId: turn.spanId,
      parentSpanId: this.options.parentCall?.spanId,
      seq: turn.seq,
      startMs: turn.startMs,
      endMs: event.time,
      attributes,
      error: failure === undefined ? undefined : `the turn ended: ${failure}`,
      links,
      client: false,
    });
    return turn.spans;
  }

  /** The fork's first own turn links to the parent's turn it was forked after. */
  private linksOf(attributes: Mutable): SpanLinkRecord[] {
    const header = this.options.header;
    const links: SpanLinkRecord[] = [];
    if (header.parentSession !== undefined) {
      attributes[PALIMPSEST.forkParentSession] = header.parentSession;
      attributes[PALIMPSEST.forkSeedLength] = this.seedLength;
      if (!this.forkLinked && this.forkOrigin !== undefined) {
        links.push({
          type: 'fork',
          traceId: traceIdOf(header.parentSession, this.forkOrigin),
          spanId: spanIdOf(header.parentSession, this.forkOrigin),
        });
      }
      this.forkLinked = true;
    }
    const subagent = subagentOf(header);
    if (subagent !== undefined) {
      attributes[PALIMPSEST.subagentParentSession] = subagent.session;
      if (subagent.toolCallId !== undefined)
        attributes[PALIMPSEST.subagentToolCallId] = subagent.toolCallId;
    }
    return links;
  }
}

const NONE: readonly SpanRecord[] = Object.freeze([]);

/** `metadata.subagentOf` of a child session's header, when it names its parent. */
export function subagentOf(
  header: SessionHeader,
): { readonly session: string; readonly toolCallId: string | undefined } | undefined {
  const link = header.metadata?.subagentOf;
  if (!isJsonObject(link)) return undefined;
  const session = link.session;
  if (typeof session !== 'string' || session === '') return undefined;
  const toolCallId = link.toolCallId;
  return { session, toolCallId: typeof toolCallId === 'string' ? toolCallId : undefined };
}

function isJsonObject(value: JsonValue | undefined): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function failureOf(reason: SessionEvent<'turn/end'>['data']['reason']): string | undefined {
  switch (reason.kind) {
    case 'error':
    case 'context-overflow':
      return reason.error.code ?? reason.kind;
    case 'interrupted':
      return 'interrupted';
    default:
      return undefined;
  }
}

function messageOf(event: SessionEvent): Message | undefined {
  switch (event.type) {
    case 'user/message':
    case 'context/message':
      return event.data;
    case 'assistant/message':
    case 'tool/result':
      return event.data.message;
    default:
      return undefined;
  }
}

function usageOf(value: unknown): TokenUsage | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as TokenUsage)
    : undefined;
}

const USAGE_ATTRIBUTES: ReadonlyArray<readonly [keyof TokenUsage, string]> = [
  ['inputTokens', GEN_AI.inputTokens],
  ['outputTokens', GEN_AI.outputTokens],
  ['cachedInputTokens', GEN_AI.cacheReadInputTokens],
  ['cacheWriteTokens', GEN_AI.cacheCreationInputTokens],
  ['reasoningTokens', GEN_AI.reasoningOutputTokens],
];

/** Writes a call's usage and adds it to its turn's totals. */
function addUsage(
  attributes: Mutable,
  usage: TokenUsage | undefined,
  totals: Record<string, number> | undefined,
): void {
  if (usage === undefined) return;
  for (const [field, name] of USAGE_ATTRIBUTES) {
    const value = usage[field];
    if (typeof value !== 'number') continue;
    attributes[name] = value;
    if (totals !== undefined) totals[name] = (totals[name] ?? 0) + value;
  }
}

const SETTINGS: ReadonlyArray<readonly [string, string]> = [
  ['temperature', GEN_AI.requestTemperature],
  ['topP', GEN_AI.requestTopP],
  ['topK', GEN_AI.requestTopK],
  ['maxOutputTokens', GEN_AI.requestMaxTokens],
  ['seed', GEN_AI.requestSeed],
];

function addSettings(attributes: Mutable, header: RequestHeaderData | undefined): void {
  const settings = header?.settings;
  if (settings === undefined) return;
  for (const [field, name] of SETTINGS) {
    const value = settings[field];
    if (typeof value === 'number') attributes[name] = value;
  }
}
