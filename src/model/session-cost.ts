/**
 * What a session cost: every model call priced at the rates in effect when it was made (the
 * rates the session recorded, else the price table's of that day), totalled per turn, per
 * model and for the session, and what each surface entry cost across the requests it stayed in.
 */
import {
  deriveEventMessage,
  isEventOfType,
  type Message,
  type RequestHeaderData,
  type Session,
  type SessionEvent,
} from '../core/index.js';
import { requestHeaderTokens, rewriteCause } from './cache-report.js';
import {
  type CallCost,
  type CostTotals,
  callCosts,
  type SessionCostOptions,
  Totals,
} from './call-costs.js';
import { walkCalls } from './call-walk.js';
import { messageTokens } from './message-tokens.js';
import { type EntryRentFigures, type RentFigures, RentLedger } from './token-rent.js';

export {
  type CallCost,
  type CostTotals,
  callCosts,
  type SessionCostOptions,
} from './call-costs.js';

/** What one surface entry cost across the agent's requests it stayed in. */
export interface EntryRent extends EntryRentFigures {
  readonly seq: number;
  readonly type: string;
  /** Who wrote it and the start of its text (`tool read_file: …`). */
  readonly label: string;
  /** Whether it is on the surface at the end of the log (not pruned or compacted away). */
  readonly onSurface: boolean;
}

/** What a replace (a compaction summary, a pruned result) saved in the requests after it. */
export interface RewriteSaving {
  /** The replacing event. */
  readonly seq: number;
  readonly cause: 'compaction' | 'prune' | 'replace';
  readonly shadowedSeqs: readonly number[];
  /** Estimated tokens the replaced entries held, and the replacement holds. */
  readonly shadowedTokens: number;
  readonly replacementTokens: number;
  /** Billed calls made while the replacement stood. */
  readonly calls: number;
  /** Input tokens those calls did not send (the difference, scaled to reported usage). */
  readonly savedTokens: number;
  /** What those tokens would have cost at each call's average input rate. */
  readonly savedCost: number;
}

/** What {@link sessionCost} found. */
export interface SessionCost {
  readonly sessionId: string;
  /** The currency of every amount (the table's; a recorded price in another one is not used). */
  readonly currency: string;
  readonly calls: readonly CallCost[];
  readonly turns: ReadonlyArray<CostTotals & { readonly turn: number }>;
  /** By `provider:model`. */
  readonly byModel: Readonly<Record<string, CostTotals>>;
  readonly total: CostTotals;
  /** The summarizers' calls (compaction), inside `total`. */
  readonly compaction: CostTotals;
  /** The calls of the prefix a fork copied from its parent: subtract it when adding a fork to its parent. */
  readonly inherited: CostTotals;
  /** `provider:model` of the calls no rates were found for. */
  readonly unpricedModels: readonly string[];
  /** Token rent of the agent's requests (calls that reported input usage). */
  readonly rent: {
    /** Every entry that was in a billed request, dearest first. */
    readonly entries: readonly EntryRent[];
    /** The tools' schemas and system prompts sent with every request. */
    readonly header: RentFigures;
  };
  readonly rewrites: readonly RewriteSaving[];
}

/**
 * Prices every model call a session's log records and says where the money went.
 *
 * A call's input is billed by kind: uncached input, cache reads and cache writes (by tier where
 * the provider reports one), output, and reasoning where the rates bill it apart. Usage is read
 * as providers reported it; a call is priced at the rates its `request/header` recorded when it
 * was made, else at the table's for its model on the day it was made. Token rent spreads each
 * call's reported input over its request's parts in proportion to their estimated tokens.
 *
 * @example
 * ```ts
 * import { Session } from 'palimpsest';
 * import { sessionCost } from 'palimpsest/agent';
 *
 * const session = Session.create({ id: 'cost-example' });
 * session.append('turn/start', { turn: 1 });
 * session.append('step/start', { turn: 1, step: 1 });
 * session.append('request/header', { provider: 'deepseek.chat', model: 'deepseek-chat' });
 * session.append('assistant/message', {
 *   turn: 1,
 *   step: 1,
 *   finishReason: 'stop',
 *   usage: { inputTokens: 1_000_000, cachedInputTokens: 800_000, outputTokens: 10_000 },
 *   message: {
 *     id: 'a1',
 *     role: 'assistant',
 *     content: [{ type: 'text', text: 'Done.' }],
 *     source: { kind: 'model', provider: 'deepseek.chat', model: 'deepseek-chat' },
 *   },
 * }, { surfaceOp: 'append', sourceEventSeqs: [] });
 * const cost = sessionCost(session);
 * console.log(cost.total.tokens.cacheRead); // 800000
 * console.log(cost.calls[0]?.price?.table); // 'palimpsest-2026-12'
 * ```
 */
export function sessionCost(session: Session, options: SessionCostOptions = {}): SessionCost {
  const { currency, calls } = callCosts(session, options);
  const totals = new Totals();
  const compaction = new Totals();
  const inherited = new Totals();
  const byModel = new Map<string, Totals>();
  const turns = new Map<number, Totals>();
  const seedLength = session.header.seedLength ?? 0;
  for (const call of calls) {
    totals.add(call);
    if (call.kind === 'compaction') compaction.add(call);
    if (call.seq < seedLength) inherited.add(call);
    const key = `${call.provider}:${call.model}`;
    byModel.set(key, (byModel.get(key) ?? new Totals()).add(call));
    if (call.turn !== undefined)
      turns.set(call.turn, (turns.get(call.turn) ?? new Totals()).add(call));
  }
  const unpricedModels = [...byModel].filter(([, t]) => t.unpriced > 0).map(([key]) => key);
  return {
    sessionId: session.header.id,
    currency,
    calls,
    turns: [...turns].map(([turn, t]) => ({ turn, ...t.totals() })),
    byModel: Object.fromEntries([...byModel].map(([key, t]) => [key, t.totals()])),
    total: totals.totals(),
    compaction: compaction.totals(),
    inherited: inherited.totals(),
    unpricedModels,
    ...rentOf(session, calls),
  };
}

/** Token rent and rewrite savings over the agent's calls, in one walk. */
function rentOf(
  session: Session,
  calls: readonly CallCost[],
): Pick<SessionCost, 'rent' | 'rewrites'> {
  const bySeq = new Map(calls.map((call) => [call.seq, call]));
  const tokensOf = (seq: number): number => {
    const event = session.event(seq);
    const message = event === undefined ? null : deriveEventMessage(event);
    return message === null ? 0 : messageTokens(message);
  };
  const ledger = new RentLedger(tokensOf);
  const rewrites = new Rewrites(session, tokensOf);
  let header: RequestHeaderData | undefined;
  let changedFrom = 0;
  let order: readonly number[] = [];
  let headRent: RentFigures = { cacheRead: 0, cacheWrite: 0, input: 0, cost: 0 };
  walkCalls(session, {
    replace: (replacement, surface) => {
      changedFrom = Math.min(changedFrom, Math.max(0, surface.indexOf(replacement.seq)));
      ledger.leave(replacement.shadowedSeqs);
      rewrites.replaced(replacement.seq, replacement.shadowedSeqs);
    },
    begin: (call) => {
      header = call.header;
      order = call.order;
    },
    answer: (seq) => {
      ledger.admit(order, changedFrom);
      changedFrom = Number.POSITIVE_INFINITY;
      const call = bySeq.get(seq);
      const input =
        call === undefined ? 0 : call.tokens.input + call.tokens.cacheRead + call.tokens.cacheWrite;
      if (call === undefined || input === 0) return;
      const head = requestHeaderTokens(header);
      const estimated = head + ledger.surfaceTokens();
      if (estimated <= 0) return;
      const perToken = (money: number | undefined, tokens: number) =>
        money === undefined || tokens === 0 ? 0 : money / tokens;
      const rates = {
        scale: input / estimated,
        input: perToken(call.cost?.input, call.tokens.input),
        cacheRead: perToken(call.cost?.cacheRead, call.tokens.cacheRead),
        cacheWrite: perToken(call.cost?.cacheWrite, call.tokens.cacheWrite),
      };
      const billedHead = ledger.bill(head, rates, call.tokens.cacheRead, call.tokens.cacheWrite);
      headRent = sumRent(headRent, billedHead);
      const inputCost =
        (call.cost?.input ?? 0) + (call.cost?.cacheRead ?? 0) + (call.cost?.cacheWrite ?? 0);
      rewrites.billed(rates.scale, (rates.scale * inputCost) / input);
    },
  });
  const onSurface = new Set(session.surface.seqs);
  const entries: EntryRent[] = [];
  for (const seq of ledger.seqs()) {
    const figures = ledger.rent(seq);
    const event = session.event(seq);
    if (figures === undefined || event === undefined) continue;
    entries.push({
      seq,
      type: event.type,
      label: labelOf(session, event),
      onSurface: onSurface.has(seq),
      ...figures,
    });
  }
  entries.sort(
    (a, b) =>
      b.cost - a.cost ||
      b.input + b.cacheRead + b.cacheWrite - (a.input + a.cacheRead + a.cacheWrite) ||
      a.seq - b.seq,
  );
  return { rent: { entries, header: headRent }, rewrites: rewrites.savings() };
}

function sumRent(a: RentFigures, b: RentFigures): RentFigures {
  return {
    cacheRead: a.cacheRead + b.cacheRead,
    cacheWrite: a.cacheWrite + b.cacheWrite,
    input: a.input + b.input,
    cost: a.cost + b.cost,
  };
}

interface OpenRewrite {
  readonly seq: number;
  readonly cause: RewriteSaving['cause'];
  readonly shadowedSeqs: readonly number[];
  readonly shadowedTokens: number;
  readonly replacementTokens: number;
  readonly since: { calls: number; scale: number; money: number };
  until?: { calls: number; scale: number; money: number };
}

/** Replaces as they stand, and the running sums of the calls made since each. */
class Rewrites {
  private readonly sums = { calls: 0, scale: 0, money: 0 };
  private readonly open = new Map<number, OpenRewrite>();
  private readonly all: OpenRewrite[] = [];

  constructor(
    private readonly session: Session,
    private readonly tokensOf: (seq: number) => number,
  ) {}

  replaced(seq: number, shadowedSeqs: readonly number[]): void {
    for (const old of shadowedSeqs) {
      const ended = this.open.get(old);
      if (ended !== undefined) {
        ended.until = { ...this.sums };
        this.open.delete(old);
      }
    }
    const rewrite: OpenRewrite = {
      seq,
      cause: rewriteCause(this.session, seq),
      shadowedSeqs,
      shadowedTokens: shadowedSeqs.reduce((sum, old) => sum + this.tokensOf(old), 0),
      replacementTokens: this.tokensOf(seq),
      since: { ...this.sums },
    };
    this.open.set(seq, rewrite);
    this.all.push(rewrite);
  }

  /** A call was billed: `scale` reported tokens per estimated token, `money` per estimated token. */
  billed(scale: number, money: number): void {
    this.sums.calls += 1;
    this.sums.scale += scale;
    this.sums.money += money;
  }

  savings(): RewriteSaving[] {
    return this.all.map((rewrite) => {
      const until = rewrite.until ?? this.sums;
      const saved = rewrite.shadowedTokens - rewrite.replacementTokens;
      return {
        seq: rewrite.seq,
        cause: rewrite.cause,
        shadowedSeqs: rewrite.shadowedSeqs,
        shadowedTokens: rewrite.shadowedTokens,
        replacementTokens: rewrite.replacementTokens,
        calls: until.calls - rewrite.since.calls,
        savedTokens: saved * (until.scale - rewrite.since.scale),
        savedCost: saved * (until.money - rewrite.since.money),
      };
    });
  }
}

/** Who wrote an entry and the start of its text, on one line. */
function labelOf(session: Session, event: SessionEvent): string {
  const message = deriveEventMessage(event);
  const text = message === null ? '' : leadingText(message).replace(/\s+/g, ' ').trim();
  const excerpt = text.length > 60 ? `${text.slice(0, 59)}…` : text;
  let who: string = event.type;
  if (event.type === 'tool/result') {
    const name = toolNameOf(session, event.sourceEventSeqs ?? [], 0);
    who = name === undefined ? 'tool' : `tool ${name}`;
  } else if (message?.role === 'assistant') who = 'assistant';
  else if (message?.role === 'user') who = event.type === 'context/message' ? 'context' : 'user';
  return excerpt === '' ? who : `${who}: ${excerpt}`;
}

/**
 * The tool a result answered: the `tool/call` it cites, found through the results a pruned or
 * replaced result cites in turn.
 */
function toolNameOf(session: Session, cited: readonly number[], depth: number): string | undefined {
  if (depth > 8) return undefined;
  for (const seq of cited) {
    const event = session.event(seq);
    if (event === undefined) continue;
    if (isEventOfType(event, 'tool/call')) return event.data.name;
    if (event.type === 'tool/result') {
      const name = toolNameOf(session, event.sourceEventSeqs ?? [], depth + 1);
      if (name !== undefined) return name;
    }
  }
  return undefined;
}

/** The first couple of hundred characters of a message's text: a label needs no more. */
function leadingText(message: Message): string {
  let text = '';
  const take = (part: string) => {
    text += (text === '' ? '' : ' ') + part.slice(0, 200 - text.length);
  };
  for (const block of message.content) {
    if (text.length >= 200) break;
    if (block.type === 'text') take(block.text);
    else if (block.type === 'tool-call') take(`→ ${block.name}`);
    else if (block.type === 'tool-result') {
      for (const inner of block.content)
        if (inner.type === 'text' && text.length < 200) take(inner.text);
    }
  }
  return text;
}
