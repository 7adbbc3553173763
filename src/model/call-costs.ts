/**
 * Every model call a session's log records, priced at the rates in effect when it was made (the
 * rates the session recorded, else the price table's of that day), and their sums. Pure: the
 * viewer's page runs it in the browser, so it imports core and the price modules alone.
 */
import {
  isEventOfType,
  type RequestHeaderData,
  type Session,
  type SessionEvent,
  type TokenUsage,
} from '../core/index.js';
import {
  addFields,
  type CostBreakdown,
  NO_COST,
  NO_TOKENS,
  priceUsage,
  splitUsage,
  type TokenSplit,
} from './call-cost.js';
import { DEFAULT_PRICES } from './default-prices.js';
import {
  checkPriceTable,
  type PriceTable,
  priceAt,
  type RecordedPrice,
  recordedPrice,
} from './price-table.js';
/** Options of `sessionCost` and {@link callCosts}. */
export interface SessionCostOptions {
  /** The table for calls whose header recorded no price (default {@link DEFAULT_PRICES}). */
  readonly prices?: PriceTable;
  /** Price every call from `prices`, ignoring the rates the session recorded (default `false`). */
  readonly ignoreRecordedPrices?: boolean;
}

/** One model call, priced. */
export interface CallCost {
  /** The `assistant/message` (a step's call) or `compaction/end` (a summarizer's) carrying the usage. */
  readonly seq: number;
  readonly kind: 'step' | 'compaction';
  /** The turn it was made in (absent for a compaction outside any turn). */
  readonly turn?: number;
  readonly step?: number;
  readonly time: number;
  readonly provider: string;
  readonly model: string;
  readonly tokens: TokenSplit;
  /** Absent when no rates were found for the model. */
  readonly cost?: CostBreakdown;
  /** The rates that priced it, and whether the session recorded them or the table gave them. */
  readonly price?: {
    readonly table: string;
    readonly effectiveFrom: string;
    readonly recorded: boolean;
  };
}

/** Calls summed. `cost` counts the priced calls only. */
export interface CostTotals {
  readonly calls: number;
  /** Calls no rates were found for: their tokens are in `tokens`, not in `cost`. */
  readonly unpricedCalls: number;
  readonly tokens: TokenSplit;
  readonly cost: CostBreakdown;
}

/**
 * Every call that reported usage, priced as `sessionCost` prices it, in log order, and the
 * currency of the amounts: for a reader that needs each call's cost and not the totals or the
 * token rent (whose walk over the surface costs about as much as a load).
 *
 * @example
 * ```ts
 * import { Session } from 'palimpsest';
 * import { callCosts } from 'palimpsest/agent';
 *
 * const { currency, calls } = callCosts(Session.create({ id: 'no-calls' }));
 * console.log(currency, calls.length); // 'USD' 0
 * ```
 */
export function callCosts(
  session: Session,
  options: SessionCostOptions = {},
): { readonly currency: string; readonly calls: CallCost[] } {
  const pricer = new CallPricer(options.prices, options.ignoreRecordedPrices === true);
  const calls: CallCost[] = [];
  pricer.read(session, 0, (call) => calls.push(call));
  return { currency: pricer.currency, calls };
}

/**
 * Prices calls as a log grows: it keeps the request header and the turn in force, so a reader
 * that follows a live session prices each batch's calls alone (the viewer's session panel).
 */
export class CallPricer {
  private header: RequestHeaderData | undefined;
  private turn: number | undefined;
  private readonly table: PriceTable;

  constructor(
    table: PriceTable = DEFAULT_PRICES,
    private readonly ignoreRecorded = false,
  ) {
    this.table = table === DEFAULT_PRICES ? table : checkPriceTable(table);
  }

  /** The currency of every amount. */
  get currency(): string {
    return this.table.currency;
  }

  /** Reads the events of `session` from seq `from` on, handing each priced call to `found`. */
  read(session: Session, from: number, found: (call: CallCost) => void): void {
    for (let seq = from; seq < session.seq; seq++) {
      const type = session.eventType(seq);
      if (
        type !== 'assistant/message' &&
        type !== 'compaction/end' &&
        type !== 'request/header' &&
        type !== 'turn/start'
      ) {
        continue;
      }
      const event = session.event(seq);
      if (event === undefined) continue;
      if (isEventOfType(event, 'request/header')) this.header = event.data;
      else if (isEventOfType(event, 'turn/start')) this.turn = event.data.turn;
      else {
        const call = callOf(event, this.header, this.turn);
        if (call !== undefined) found(price(call, this.header, this.table, this.ignoreRecorded));
      }
    }
  }
}

type UnpricedCall = Omit<CallCost, 'cost' | 'price'> & { readonly usage: TokenUsage };

function callOf(
  event: SessionEvent,
  header: RequestHeaderData | undefined,
  turn: number | undefined,
): UnpricedCall | undefined {
  const data = event.data as {
    usage?: TokenUsage;
    step?: number;
    message?: { source?: { provider?: unknown; model?: unknown } };
    model?: { provider?: unknown; model?: unknown };
  } | null;
  const usage = data?.usage;
  if (typeof usage !== 'object' || usage === null) return undefined;
  const step = event.type === 'assistant/message';
  const named = step ? data?.message?.source : data?.model;
  const provider =
    typeof named?.provider === 'string' ? named.provider : (header?.provider ?? 'unknown');
  const model = typeof named?.model === 'string' ? named.model : (header?.model ?? 'unknown');
  return {
    seq: event.seq,
    kind: step ? 'step' : 'compaction',
    ...(turn === undefined ? {} : { turn }),
    ...(step && typeof data?.step === 'number' ? { step: data.step } : {}),
    time: event.time,
    provider,
    model,
    tokens: splitUsage(usage),
    usage,
  };
}

function price(
  call: UnpricedCall,
  header: RequestHeaderData | undefined,
  table: PriceTable,
  ignoreRecorded: boolean,
): CallCost {
  const { usage, ...rest } = call;
  // A recorded price is the header's model's: a summarizer of another model is priced by the table.
  const recorded =
    !ignoreRecorded && header?.provider === call.provider && header.model === call.model
      ? recordedPrice(header)
      : undefined;
  const usable: RecordedPrice | undefined =
    recorded !== undefined && recorded.currency === table.currency ? recorded : undefined;
  const rates = usable ?? priceAt(table, call.provider, call.model, call.time);
  if (rates === undefined) return rest;
  return {
    ...rest,
    cost: priceUsage(usage, rates.rates),
    price: {
      table: rates.table,
      effectiveFrom: rates.effectiveFrom,
      recorded: usable !== undefined,
    },
  };
}

/** Calls added one by one into {@link CostTotals}. */
export class Totals {
  calls = 0;
  unpriced = 0;
  tokens: TokenSplit = NO_TOKENS;
  cost: CostBreakdown = NO_COST;

  add(call: CallCost): this {
    this.calls += 1;
    this.tokens = addFields(this.tokens, call.tokens);
    if (call.cost === undefined) this.unpriced += 1;
    else this.cost = addFields(this.cost, call.cost);
    return this;
  }

  totals(): CostTotals {
    return {
      calls: this.calls,
      unpricedCalls: this.unpriced,
      tokens: this.tokens,
      cost: this.cost,
    };
  }
}

/**
 * One call priced: `event` is its `assistant/message` or `compaction/end`, `header` the request
 * header in force and `turn` the turn it was made in. `undefined` when the event reported no
 * usage. What {@link callCosts} does for each call, for a reader (the viewer's trace) that prices
 * the calls it draws rather than the whole log.
 */
export function callCostOf(
  event: SessionEvent,
  header: RequestHeaderData | undefined,
  turn: number | undefined,
  table: PriceTable = DEFAULT_PRICES,
  ignoreRecorded = false,
): CallCost | undefined {
  const call = callOf(event, header, turn);
  return call === undefined ? undefined : price(call, header, table, ignoreRecorded);
}
