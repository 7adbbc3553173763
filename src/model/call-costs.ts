/**
 * Every model call of a log priced at the rates in effect when it was made: the part of the cost
 * that needs no request digest or surface walk, so the viewer's page can price calls in the
 * browser as the CLI does (it imports only pure modules: core and the price tables).
 */
import {
  isEventOfType,
  type RequestHeaderData,
  type Session,
  type SessionEvent,
  type TokenUsage,
} from '../core/index.js';
import { type CostBreakdown, priceUsage, splitUsage, type TokenSplit } from './call-cost.js';
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
  const table = options.prices === undefined ? DEFAULT_PRICES : checkPriceTable(options.prices);
  return {
    currency: table.currency,
    calls: priceCalls(session, table, options.ignoreRecordedPrices === true),
  };
}

/** Every call that reported usage, priced, in log order. */
function priceCalls(session: Session, table: PriceTable, ignoreRecorded: boolean): CallCost[] {
  const calls: CallCost[] = [];
  let header: RequestHeaderData | undefined;
  let turn: number | undefined;
  for (let seq = 0; seq < session.seq; seq++) {
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
    if (isEventOfType(event, 'request/header')) header = event.data;
    else if (isEventOfType(event, 'turn/start')) turn = event.data.turn;
    else {
      const call = callCostOf(event, header, turn, table, ignoreRecorded);
      if (call !== undefined) calls.push(call);
    }
  }
  return calls;
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
