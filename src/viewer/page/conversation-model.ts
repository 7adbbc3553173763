/**
 * The conversation as a person reads it, as data: the log walked once into a flat list of
 * entries (a turn's separator, a message, a compaction or prune where it happened, the end of a
 * turn that was cut), and which tool result answers which call, so a call is drawn as one card
 * with its result. No DOM here: the panel draws entries as they scroll into sight, and a live
 * batch only adds entries.
 */
import {
  deriveEventMessage,
  type ImageBlock,
  type Message,
  replaceOpOf,
  type Session,
  type SessionEvent,
  type TurnEndReason,
} from '../../core/index.js';
import { timeText } from './text.js';

/** One turn: what its separator says. Open until its `turn/end` arrives. */
export interface TurnInfo {
  readonly turn: number;
  readonly startSeq: number;
  readonly startTime: number;
  /** `provider:model` of each model that answered in the turn, in order of first answer. */
  readonly models: string[];
  endTime?: number;
  outcome?: TurnEndReason['kind'];
}

/** One thing the conversation shows, in log order. */
export type ConversationEntry =
  | { readonly kind: 'turn'; readonly info: TurnInfo }
  | { readonly kind: 'message'; readonly seq: number }
  | { readonly kind: 'rewrite'; readonly seq: number }
  | { readonly kind: 'cut'; readonly seq: number; readonly info: TurnInfo };

/** Where a tool call's work is in the log. */
export interface ToolCallPlace {
  /** The `tool/call` event (it names a subagent's session when one ran the call). */
  callSeq?: number;
  /** The message that holds the call's result. */
  resultSeq?: number;
}

/** Raster image types drawn from inline data; anything else is named, not drawn. */
const DRAWN_IMAGES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/** The `data:` URL an inline image is drawn from, when it is a raster image with base64 data. */
export function imageSource(image: ImageBlock): string | undefined {
  const type = image.mediaType.toLowerCase();
  if (image.data === undefined || !DRAWN_IMAGES.has(type) || !BASE64.test(image.data)) {
    return undefined;
  }
  return `data:${type};base64,${image.data}`;
}

/** A tool call's arguments for reading: pretty JSON when they parse, else as written. */
export function argumentsText(raw: string): string {
  try {
    return JSON.stringify(JSON.parse(raw), null, 2) ?? raw;
  } catch {
    return raw;
  }
}

/** Who a message is from, as its block's heading says it. */
export function speaker(event: SessionEvent, role: string, sourceKind: string | undefined): string {
  if (event.type === 'context/message') return sourceKind === 'compaction' ? 'summary' : 'context';
  if (role === 'assistant') return 'assistant';
  if (role === 'tool') return 'tool result';
  return 'user';
}

/** A duration for people: `850 ms`, `4.2 s`, `12 min 5 s`, `3 h 20 min`. */
export function durationText(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '-';
  if (ms < 1_000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1_000).toFixed(1)} s`;
  const minutes = Math.floor(ms / 60_000);
  if (minutes < 60) return `${minutes} min ${Math.floor((ms % 60_000) / 1_000)} s`;
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

/** A separator's words: `turn 3 · openai:gpt-4o · 2026-05-01 10:00:00 · 4.2 s · aborted`. */
export function separatorText(info: TurnInfo): string {
  return [
    `turn ${info.turn}`,
    info.models.length === 0 ? 'no model call' : info.models.join(', '),
    timeText(info.startTime),
    info.endTime === undefined ? 'still open' : durationText(info.endTime - info.startTime),
    ...(info.outcome === undefined || info.outcome === 'completed' ? [] : [info.outcome]),
  ].join(' · ');
}

/** What the end of a cut turn says, from its `turn/end` reason. */
export function cutText(reason: TurnEndReason): string {
  switch (reason.kind) {
    case 'aborted':
      return `The turn was cut: aborted${reason.cause === undefined ? '' : ` (${reason.cause})`}.`;
    case 'interrupted':
      return 'The turn was cut: the writer stopped mid-turn and a repair closed it.';
    case 'error':
      return `The turn ended on an error: ${reason.error.message}`;
    case 'context-overflow':
      return `The turn ended: the request overflowed the context window (${reason.error.message}).`;
    case 'max-steps':
      return `The turn was cut at its step limit (${reason.maxSteps}).`;
    case 'max-tokens':
      return 'The turn was cut at the token limit.';
    case 'completed':
      return reason.finishReason === undefined
        ? 'The turn completed.'
        : `The turn ended on finish reason ${reason.finishReason}, its tool calls not run.`;
  }
}

/** Whether a `turn/end` reason means the turn did not finish normally. */
function isCut(reason: TurnEndReason): boolean {
  return reason.kind !== 'completed' || reason.finishReason !== undefined;
}

/** The call ids a tool-result message answers. */
function answeredCalls(message: Message): string[] {
  return message.content.flatMap((block) =>
    block.type === 'tool-result' ? [block.toolCallId] : [],
  );
}

/** The key of the call `callId` that the message `messageSeq` asked for. */
export function callKey(messageSeq: number, callId: string): string {
  return `${messageSeq}:${callId}`;
}

/**
 * The conversation of one session, built by {@link ConversationIndex.add} event by event: once
 * over the loaded log, then for each live event.
 */
export class ConversationIndex {
  readonly entries: ConversationEntry[] = [];
  /**
   * Tool calls by {@link callKey}: their `tool/call` and result, as far as the log has them.
   * Keyed by the asking message too, since a call id may come again in a later turn (the demo's
   * scripted model numbers its calls per turn).
   */
  readonly calls = new Map<string, ToolCallPlace>();
  /** The key of the latest call that asked for each call id: what a result or `tool/call` answers. */
  private readonly latest = new Map<string, string>();
  private open: TurnInfo | undefined;
  /** The seq up to which {@link readUpTo} has read its session's log. */
  private read = 0;

  /** Indexes every event of `events`. */
  static of(events: readonly SessionEvent[]): ConversationIndex {
    const index = new ConversationIndex();
    for (const event of events) index.add(event);
    return index;
  }

  /**
   * Adds the events of `session` it has not read yet (the whole log the first time, then what
   * came since), handing each to `added` with the entries it added. A stream chunk adds nothing
   * and is passed over unread (a loaded session holds most of its chunks unbuilt).
   */
  readUpTo(
    session: Session,
    added?: (seq: number, entries: readonly ConversationEntry[]) => void,
  ): void {
    for (let seq = this.read; seq < session.seq; seq++) {
      if (session.eventType(seq) === 'assistant/chunk') continue;
      const entries = this.add(session.event(seq) as SessionEvent);
      added?.(seq, entries);
    }
    this.read = session.seq;
  }

  /** The turn whose separator is drawn last, while it has no end. */
  get openTurn(): TurnInfo | undefined {
    return this.open;
  }

  /** The key of the latest call asking for `callId`, if one did. */
  latestKey(callId: string): string | undefined {
    return this.latest.get(callId);
  }

  private latestPlace(callId: string): ToolCallPlace | undefined {
    const key = this.latest.get(callId);
    return key === undefined ? undefined : this.calls.get(key);
  }

  /**
   * Adds `event`. Returns the entries it added (none for most log events; a `tool/result` whose
   * call was drawn adds none either: its card shows it).
   */
  add(event: SessionEvent): ConversationEntry[] {
    const before = this.entries.length;
    if (event.type === 'turn/start') {
      this.open = { turn: event.data.turn, startSeq: event.seq, startTime: event.time, models: [] };
      this.entries.push({ kind: 'turn', info: this.open });
    } else if (event.type === 'turn/end') {
      const info = this.open;
      if (info !== undefined) {
        info.endTime = event.time;
        info.outcome = event.data.reason.kind;
        this.open = undefined;
        if (isCut(event.data.reason)) this.entries.push({ kind: 'cut', seq: event.seq, info });
      }
    } else if (event.type === 'tool/call') {
      const place = this.latestPlace(event.data.callId);
      if (place !== undefined) place.callSeq = event.seq;
    } else if (replaceOpOf(event) !== undefined) {
      this.entries.push({ kind: 'rewrite', seq: event.seq });
    } else {
      this.addMessage(event);
    }
    return this.entries.slice(before);
  }

  private addMessage(event: SessionEvent): void {
    const message = deriveEventMessage(event);
    if (message === null) return;
    if (message.role === 'assistant') {
      const source = message.source;
      const model = source?.kind === 'model' ? `${source.provider}:${source.model}` : undefined;
      if (model !== undefined && this.open !== undefined && !this.open.models.includes(model)) {
        this.open.models.push(model);
      }
      for (const block of message.content) {
        if (block.type !== 'tool-call') continue;
        const key = callKey(event.seq, block.id);
        this.calls.set(key, {});
        this.latest.set(block.id, key);
      }
    }
    const answered = message.role === 'tool' ? answeredCalls(message) : [];
    // A result whose call an assistant message asked for is drawn in that call's card.
    const places = answered.map((id) => this.latestPlace(id));
    if (answered.length > 0 && places.every((place) => place !== undefined)) {
      for (const place of places) place.resultSeq = event.seq;
      return;
    }
    this.entries.push({ kind: 'message', seq: event.seq });
  }
}
