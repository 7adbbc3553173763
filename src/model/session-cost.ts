/**
 * What a session cost: every model call priced at the rates in effect when it was made (the
 * rates the session recorded, else the price table's of that day), totalled per turn, per
 * model and for the session, and what each surface entry cost across the requests it stayed in.
 */
import {
  deriveEventMessage,
  type RequestHeaderData,
  type Session,
  type SessionEvent,
} from '../core/index.js';
import { requestHeaderTokens, rewriteCause } from './cache-report.js';
import {
  type CallCost,
  CallPricer,
  type CostTotals,
  type SessionCostOptions,
  Totals,
} from './call-costs.js';
import { walkCalls } from './call-walk.js';
import { entryLabel } from './entry-label.js';
import { messageTokens, messageTokensOnce } from './message-tokens.js';
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
  const pricer = new CallPricer(options.prices, options.ignoreRecordedPrices === true);
  const calls: CallCost[] = [];
  const { rent, rewrites } = rentOf(session, (event) => {
    const call = pricer.take(event);
    if (call !== undefined) calls.push(call);
    return call;
  });
  const totals = new Totals();
  const compaction = new Totals();
  const inherited = new Totals();
  const byModel = new Map<string, Totals>();
  const turns = new Map<number, Totals>();
  const seedLength = session.header.seedLength ?? 0;
  // Calls come in runs of one model: its totals are found again without building its key.
  let last: { provider: string; model: string; totals: Totals } | undefined;
  for (const call of calls) {
    totals.add(call);
    if (call.kind === 'compaction') compaction.add(call);
    if (call.seq < seedLength) inherited.add(call);
    if (last === undefined || last.provider !== call.provider || last.model !== call.model) {
      const key = `${call.provider}:${call.model}`;
      let modelTotals = byModel.get(key);
      if (modelTotals === undefined) {
        modelTotals = new Totals();
        byModel.set(key, modelTotals);
      }
      last = { provider: call.provider, model: call.model, totals: modelTotals };
    }
    last.totals.add(call);
    if (call.turn !== undefined) {
      let turnTotals = turns.get(call.turn);
      if (turnTotals === undefined) {
        turnTotals = new Totals();
        turns.set(call.turn, turnTotals);
      }
      turnTotals.add(call);
    }
  }
  const unpricedModels = [...byModel].filter(([, t]) => t.unpriced > 0).map(([key]) => key);
  return {
    sessionId: session.header.id,
    currency: pricer.currency,
    calls,
    turns: [...turns].map(([turn, t]) => t.turnTotals(turn)),
    byModel: Object.fromEntries([...byModel].map(([key, t]) => [key, t.totals()])),
    total: totals.totals(),
    compaction: compaction.totals(),
    inherited: inherited.totals(),
    unpricedModels,
    rent,
    rewrites,
  };
}

/**
 * Token rent and rewrite savings over the agent's calls, in one walk of the log; `priced`
 * hears every event the walk builds and returns the call it records, priced.
 */
function rentOf(
  session: Session,
  priced: (event: SessionEvent) => CallCost | undefined,
): Pick<SessionCost, 'rent' | 'rewrites'> {
  const tokensOf = (seq: number): number => {
    const event = session.event(seq);
    const message = event === undefined ? null : deriveEventMessage(event);
    return message === null ? 0 : messageTokens(message);
  };
  // The ledger estimates each entry once and keeps the figure with the entry.
  const ledger = new RentLedger((seq) => {
    const event = session.event(seq);
    const message = event === undefined ? null : deriveEventMessage(event);
    return message === null ? 0 : messageTokensOnce(message);
  });
  const rewrites = new Rewrites(session, tokensOf);
  let header: RequestHeaderData | undefined;
  let changedFrom = 0;
  let order: readonly number[] = [];
  let lastCall: CallCost | undefined;
  const head = { cacheRead: 0, cacheWrite: 0, input: 0, cost: 0 };
  walkCalls(session, {
    event: (event) => {
      lastCall = priced(event) ?? lastCall;
    },
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
      // The walk handed the answer to `priced` just before: its call, if it reported usage.
      const call = lastCall?.seq === seq ? lastCall : undefined;
      if (call === undefined) return;
      const { tokens, cost } = call;
      const input = tokens.input + tokens.cacheRead + tokens.cacheWrite;
      if (input === 0) return;
      const headTokens = requestHeaderTokens(header);
      const estimated = headTokens + ledger.surfaceTokens();
      if (estimated <= 0) return;
      const rates = {
        scale: input / estimated,
        input: perToken(cost?.input, tokens.input),
        cacheRead: perToken(cost?.cacheRead, tokens.cacheRead),
        cacheWrite: perToken(cost?.cacheWrite, tokens.cacheWrite),
      };
      const billed = ledger.bill(headTokens, rates, tokens.cacheRead, tokens.cacheWrite);
      head.cacheRead += billed.cacheRead;
      head.cacheWrite += billed.cacheWrite;
      head.input += billed.input;
      head.cost += billed.cost;
      const inputCost = (cost?.input ?? 0) + (cost?.cacheRead ?? 0) + (cost?.cacheWrite ?? 0);
      rewrites.billed(rates.scale, (rates.scale * inputCost) / input);
    },
  });
  const onSurface = new Set(session.surface.seqs);
  const entries: EntryRent[] = [];
  ledger.forEach((seq, figures) => {
    const event = session.event(seq);
    if (event === undefined) return;
    entries.push({
      seq,
      type: event.type,
      label: entryLabel(session, event),
      onSurface: onSurface.has(seq),
      tokens: figures.tokens,
      calls: figures.calls,
      cacheRead: figures.cacheRead,
      cacheWrite: figures.cacheWrite,
      input: figures.input,
      cost: figures.cost,
    });
  });
  entries.sort(
    (a, b) =>
      b.cost - a.cost ||
      b.input + b.cacheRead + b.cacheWrite - (a.input + a.cacheRead + a.cacheWrite) ||
      a.seq - b.seq,
  );
  return { rent: { entries, header: head }, rewrites: rewrites.savings() };
}

function perToken(money: number | undefined, tokens: number): number {
  return money === undefined || tokens === 0 ? 0 : money / tokens;
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
