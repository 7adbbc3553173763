/**
 * The session's figures as the session panel shows them: tokens by how they are billed, cost at
 * the rates in effect when each call was made (model's `CallPricer`, the same pricing as
 * `palimpsest cost`), model calls, tool calls by tool name, turns, duration, and the last
 * call's recorded input. Read once, then grown by each live batch (O(batch), not O(log)).
 */
import { isEventOfType, type Session } from '../../core/index.js';
import {
  addFields,
  type CostBreakdown,
  NO_COST,
  NO_TOKENS,
  type TokenSplit,
} from '../../model/call-cost.js';
import { CallPricer } from '../../model/call-costs.js';

/** The last model call that reported its input: what the model was sent, exactly. */
export interface LastInput {
  readonly seq: number;
  /** Input tokens as the provider reported them (uncached, cache reads and writes). */
  readonly tokens: number;
  readonly model: string;
}

/** Figures over a growing log. */
export class SessionFigures {
  tokens: TokenSplit = NO_TOKENS;
  cost: CostBreakdown = NO_COST;
  /** Model calls that reported usage; `unpriced` of them had no rates in the table. */
  pricedCalls = 0;
  unpriced = new Set<string>();
  unpricedCalls = 0;
  /** `assistant/message` events: the agent's model calls, whether they reported usage or not. */
  modelCalls = 0;
  /** Summarizer calls (compaction), counted apart from the agent's. */
  compactionCalls = 0;
  readonly tools = new Map<string, number>();
  turns = 0;
  firstTime: number | undefined;
  lastTime: number | undefined;
  lastInput: LastInput | undefined;
  /** What the calls of the prefix a fork copied from its parent cost (inside {@link cost}). */
  inheritedCost = 0;
  /** How many events have been read. */
  read = 0;
  private readonly pricer = new CallPricer();

  /** The currency of {@link cost}. */
  get currency(): string {
    return this.pricer.currency;
  }

  /** Reads the events `session` holds past those already read. */
  update(session: Session): void {
    const from = this.read;
    for (let seq = from; seq < session.seq; seq++) {
      const type = session.eventType(seq);
      if (type === 'tool/call' || type === 'turn/start' || type === 'assistant/message') {
        const event = session.event(seq);
        if (event === undefined) continue;
        if (isEventOfType(event, 'tool/call'))
          this.tools.set(event.data.name, (this.tools.get(event.data.name) ?? 0) + 1);
        else if (isEventOfType(event, 'turn/start'))
          this.turns = Math.max(this.turns, event.data.turn);
        else this.modelCalls++;
      }
    }
    this.pricer.read(session, from, (call) => {
      this.pricedCalls++;
      if (call.kind === 'compaction') this.compactionCalls++;
      this.tokens = addFields(this.tokens, call.tokens);
      if (call.cost === undefined) {
        this.unpriced.add(`${call.provider}:${call.model}`);
        this.unpricedCalls++;
      } else this.cost = addFields(this.cost, call.cost);
      if (call.seq < (session.header.seedLength ?? 0)) this.inheritedCost += call.cost?.total ?? 0;
      const input = call.tokens.input + call.tokens.cacheRead + call.tokens.cacheWrite;
      if (call.kind === 'step' && input > 0)
        this.lastInput = { seq: call.seq, tokens: input, model: call.model };
    });
    if (session.seq > 0) {
      this.firstTime ??= session.event(0)?.time;
      this.lastTime = session.event(session.seq - 1)?.time;
    }
    this.read = session.seq;
  }
}

/** A duration in words: `45 s`, `12 min 5 s`, `3 h 4 min`, `2 d 5 h`. */
export function durationText(ms: number): string {
  const seconds = Math.max(0, Math.round(ms / 1000));
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min ${seconds % 60} s`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours} h ${minutes % 60} min`;
  return `${Math.floor(hours / 24)} d ${hours % 24} h`;
}

/** An amount of money: cents for amounts of a cent and more, else four decimals. */
export function moneyText(amount: number, currency: string): string {
  const digits = amount === 0 || amount >= 0.01 ? 2 : 4;
  return `${amount.toFixed(digits)} ${currency}`;
}
