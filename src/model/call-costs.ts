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
import { type CostBreakdown, priceSplit, splitUsage, type TokenSplit } from './call-cost.js';
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
  private readonly finder: RatesFinder;

  constructor(table: PriceTable = DEFAULT_PRICES, ignoreRecorded = false) {
    this.finder = new RatesFinder(
      table === DEFAULT_PRICES ? table : checkPriceTable(table),
      ignoreRecorded,
    );
  }

  /** The currency of every amount. */
  get currency(): string {
    return this.finder.table.currency;
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
      const call = this.take(event);
      if (call !== undefined) found(call);
    }
  }

  /**
   * Takes the next event of the log (a reader walking it already hands each one over): keeps
   * the header and turn it sets, and returns the call it records, priced.
   */
  take(event: SessionEvent): CallCost | undefined {
    if (isEventOfType(event, 'request/header')) this.header = event.data;
    else if (isEventOfType(event, 'turn/start')) this.turn = event.data.turn;
    else if (event.type === 'assistant/message' || event.type === 'compaction/end') {
      return priceCall(event, this.header, this.turn, this.finder);
    }
    return undefined;
  }
}

/**
 * Which rates price a call: the ones its header recorded, else the table's for its model on
 * its day. A session's calls are mostly of one model on a few days, so the table's answer is
 * kept per model and day, and each answer's `price` note is built once.
 */
class RatesFinder {
  private readonly byModel = new Map<string, Map<string, { day: number; found: Found }>>();
  private readonly notes = new WeakMap<RecordedPrice, NonNullable<CallCost['price']>>();

  constructor(
    readonly table: PriceTable,
    private readonly ignoreRecorded: boolean,
  ) {}

  find(
    header: RequestHeaderData | undefined,
    provider: string,
    model: string,
    time: number,
  ): Found {
    // A recorded price is the header's model's: a summarizer of another model is priced by the table.
    const recorded =
      !this.ignoreRecorded && header?.provider === provider && header.model === model
        ? recordedPrice(header)
        : undefined;
    if (recorded !== undefined && recorded.currency === this.table.currency) {
      return { rates: recorded, note: this.note(recorded, true) };
    }
    // Days a Date cannot hold are not remembered: `priceAt` reads them all as the far future.
    const day = Math.abs(time) < MAX_DATE_MS ? Math.floor(time / DAY_MS) : Number.NaN;
    let models = this.byModel.get(provider);
    if (models === undefined) {
      models = new Map();
      this.byModel.set(provider, models);
    }
    const known = models.get(model);
    // Within one UTC day (a finite day number) the table's answer cannot change.
    if (known !== undefined && known.day === day) return known.found;
    const rates = priceAt(this.table, provider, model, time);
    const found: Found = rates === undefined ? undefined : { rates, note: this.note(rates, false) };
    models.set(model, { day, found });
    return found;
  }

  private note(rates: RecordedPrice, recorded: boolean): NonNullable<CallCost['price']> {
    let note = this.notes.get(rates);
    if (note === undefined) {
      note = { table: rates.table, effectiveFrom: rates.effectiveFrom, recorded };
      this.notes.set(rates, note);
    }
    return note;
  }
}

type Found =
  | { readonly rates: RecordedPrice; readonly note: NonNullable<CallCost['price']> }
  | undefined;

const DAY_MS = 86_400_000;
const MAX_DATE_MS = 8.64e15;

/** The call `event` records, priced; `undefined` when it reported no usage. */
function priceCall(
  event: SessionEvent,
  header: RequestHeaderData | undefined,
  turn: number | undefined,
  finder: RatesFinder,
): CallCost | undefined {
  const data = event.data as {
    usage?: TokenUsage;
    step?: number;
    message?: { source?: { provider?: unknown; model?: unknown } };
    model?: { provider?: unknown; model?: unknown };
  } | null;
  const usage = data?.usage;
  if (typeof usage !== 'object' || usage === null) return undefined;
  const isStep = event.type === 'assistant/message';
  const named = isStep ? data?.message?.source : data?.model;
  const provider =
    typeof named?.provider === 'string' ? named.provider : (header?.provider ?? 'unknown');
  const model = typeof named?.model === 'string' ? named.model : (header?.model ?? 'unknown');
  const step = isStep && typeof data?.step === 'number' ? data.step : undefined;
  const tokens = splitUsage(usage);
  const found = finder.find(header, provider, model, event.time);
  const kind = isStep ? 'step' : 'compaction';
  const time = event.time;
  // A priced step of a turn, most calls, is built as one literal; others field by field, in
  // the same order, leaving absent fields out rather than undefined.
  if (turn !== undefined && step !== undefined && found !== undefined) {
    const cost = priceSplit(usage, tokens, found.rates.rates);
    return {
      seq: event.seq,
      kind,
      turn,
      step,
      time,
      provider,
      model,
      tokens,
      cost,
      price: found.note,
    };
  }
  const call: {
    seq: number;
    kind: CallCost['kind'];
    turn?: number;
    step?: number;
    time?: number;
    provider?: string;
    model?: string;
    tokens?: TokenSplit;
    cost?: CostBreakdown;
    price?: CallCost['price'];
  } = { seq: event.seq, kind };
  if (turn !== undefined) call.turn = turn;
  if (step !== undefined) call.step = step;
  call.time = time;
  call.provider = provider;
  call.model = model;
  call.tokens = tokens;
  if (found !== undefined) {
    call.cost = priceSplit(usage, tokens, found.rates.rates);
    call.price = found.note;
  }
  return call as CallCost;
}

/**
 * Calls added one by one into {@link CostTotals}: plain number fields summed in place, since a
 * ledger adds every call to several totals (session, turn, model).
 */
export class Totals {
  calls = 0;
  unpriced = 0;
  private input = 0;
  private cacheRead = 0;
  private cacheWrite = 0;
  private output = 0;
  private reasoning = 0;
  private costInput = 0;
  private costCacheRead = 0;
  private costCacheWrite = 0;
  private costOutput = 0;
  private costReasoning = 0;
  private costTotal = 0;

  add(call: CallCost): this {
    this.calls += 1;
    const { tokens, cost } = call;
    this.input += tokens.input;
    this.cacheRead += tokens.cacheRead;
    this.cacheWrite += tokens.cacheWrite;
    this.output += tokens.output;
    this.reasoning += tokens.reasoning;
    if (cost === undefined) {
      this.unpriced += 1;
      return this;
    }
    this.costInput += cost.input;
    this.costCacheRead += cost.cacheRead;
    this.costCacheWrite += cost.cacheWrite;
    this.costOutput += cost.output;
    this.costReasoning += cost.reasoning;
    this.costTotal += cost.total;
    return this;
  }

  totals(): CostTotals {
    return {
      calls: this.calls,
      unpricedCalls: this.unpriced,
      tokens: this.tokenSplit(),
      cost: this.costBreakdown(),
    };
  }

  /** {@link totals} of turn `turn`, the turn first. */
  turnTotals(turn: number): CostTotals & { readonly turn: number } {
    return {
      turn,
      calls: this.calls,
      unpricedCalls: this.unpriced,
      tokens: this.tokenSplit(),
      cost: this.costBreakdown(),
    };
  }

  private tokenSplit(): TokenSplit {
    return {
      input: this.input,
      cacheRead: this.cacheRead,
      cacheWrite: this.cacheWrite,
      output: this.output,
      reasoning: this.reasoning,
    };
  }

  private costBreakdown(): CostBreakdown {
    return {
      input: this.costInput,
      cacheRead: this.costCacheRead,
      cacheWrite: this.costCacheWrite,
      output: this.costOutput,
      reasoning: this.costReasoning,
      total: this.costTotal,
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
  return priceCall(event, header, turn, new RatesFinder(table, ignoreRecorded));
}
