/**
 * Price tables: what a provider charged per token for a model from a given day, as data. A
 * table is never fetched; the one palimpsest ships is dated, and a caller passes its own (a
 * negotiated rate, a provider the table lacks, prices that changed since).
 */
import {
  InvalidArgumentError,
  type JsonObject,
  type JsonValue,
  type RequestHeaderData,
} from '../core/index.js';
import { DEFAULT_PRICES } from './default-prices.js';

/** Rates in the table's currency per million tokens. */
export interface TokenRates {
  /** Input tokens neither read from nor written to a prompt cache. */
  readonly input: number;
  /** Output tokens (reasoning included, unless `reasoning` prices it apart). */
  readonly output: number;
  /** Input tokens read from the prompt cache; `input` when absent. */
  readonly cacheRead?: number;
  /** Input tokens written to the prompt cache (the 5-minute tier where there are two); `input` when absent. */
  readonly cacheWrite?: number;
  /** Cache writes of the 1-hour tier (Anthropic); `cacheWrite` when absent. */
  readonly cacheWrite1h?: number;
  /** Reasoning tokens, where a provider bills them apart from other output; `output` when absent. */
  readonly reasoning?: number;
}

/** A model's rates, with the long-context tier where the provider has one. */
export interface ModelRates extends TokenRates {
  /**
   * The rates of a request whose input (cached or not) exceeds `aboveInputTokens`: the whole
   * call is billed at them (Anthropic's and Google's long-context pricing).
   */
  readonly longContext?: TokenRates & { readonly aboveInputTokens: number };
}

/** One model's rates from a day on. */
export interface PriceEntry {
  /** The provider family: `anthropic`, `openai`, `google`, `deepseek` (see {@link providerFamily}). */
  readonly provider: string;
  /** The model id; also matches its dated versions (`claude-sonnet-4-5-20250929`, `gpt-4o-2024-08-06`). */
  readonly model: string;
  /** The first UTC day the rates applied, `YYYY-MM-DD`. */
  readonly effectiveFrom: string;
  readonly rates: ModelRates;
}

/** A price table: entries of one currency, with where they were read. */
export interface PriceTable {
  /** A name that says which table priced a session (`palimpsest-2026-12`). */
  readonly name: string;
  /** ISO 4217 code of every rate in the table (`USD`). */
  readonly currency: string;
  /** Where the rates were read, for a reader who wants to check them. */
  readonly source?: string;
  readonly entries: readonly PriceEntry[];
}

/**
 * The rates that priced a call, as a session records them (`request/header.price`) so that an
 * old session prices as it was billed, whatever the table says later.
 */
export interface RecordedPrice {
  readonly table: string;
  readonly currency: string;
  readonly effectiveFrom: string;
  readonly rates: ModelRates;
}

/**
 * The provider family of a provider id as the AI SDK and the importers record it:
 * `anthropic.messages` → `anthropic`, `openai.responses` → `openai`, `google.generative-ai` →
 * `google`, `deepseek.chat` → `deepseek`.
 */
export function providerFamily(provider: string): string {
  const dot = provider.indexOf('.');
  return dot < 0 ? provider : provider.slice(0, dot);
}

const DAY = /^\d{4}-\d{2}-\d{2}$/;
/** What may follow a table's model id in a dated or aliased version of it. */
const VERSION_SUFFIX = /^-(\d{4}-\d{2}-\d{2}|\d{8}|latest|preview(-[\w.-]+)?|\d{2}-\d{2,4})$|^@/;

/**
 * The rates a table gives `provider`'s `model` at `time` (epoch ms): of the entries for the
 * model (its exact id, else the id its dated version extends), the one with the latest
 * `effectiveFrom` on or before that day. `undefined` when the table has none.
 *
 * @example
 * ```ts
 * import { DEFAULT_PRICES, priceAt } from 'palimpsest/agent';
 *
 * const price = priceAt(DEFAULT_PRICES, 'deepseek.chat', 'deepseek-chat', Date.parse('2025-10-01'));
 * console.log(price?.rates.input); // 0.28
 * ```
 */
export function priceAt(
  table: PriceTable,
  provider: string,
  model: string,
  time: number,
): RecordedPrice | undefined {
  const family = providerFamily(provider);
  const date = new Date(time);
  // A log's time past what a Date holds is read as the far future: the latest rates apply.
  const day = Number.isNaN(date.getTime()) ? '9999-12-31' : date.toISOString().slice(0, 10);
  let best: PriceEntry | undefined;
  let bestExact = false;
  for (const entry of table.entries) {
    if (entry.provider !== family || entry.effectiveFrom > day) continue;
    const exact = entry.model === model;
    if (
      !exact &&
      !(model.startsWith(entry.model) && VERSION_SUFFIX.test(model.slice(entry.model.length)))
    ) {
      continue;
    }
    if (
      best === undefined ||
      (exact && !bestExact) ||
      (exact === bestExact &&
        (entry.model.length > best.model.length ||
          (entry.model.length === best.model.length && entry.effectiveFrom > best.effectiveFrom)))
    ) {
      best = entry;
      bestExact = exact;
    }
  }
  return best === undefined
    ? undefined
    : {
        table: table.name,
        currency: table.currency,
        effectiveFrom: best.effectiveFrom,
        rates: best.rates,
      };
}

/**
 * Checks a price table a caller passes: a name, a currency, and for every entry a provider, a
 * model, a `YYYY-MM-DD` day and non-negative finite rates. Throws `InvalidArgumentError`
 * (`INVALID_ARGUMENT`) naming the first field that is not.
 */
export function checkPriceTable(table: unknown): PriceTable {
  const fail = (what: string, found: unknown): never => {
    throw new InvalidArgumentError(
      `invalid price table: expected ${what}, found ${found === undefined ? 'nothing' : JSON.stringify(found)?.slice(0, 80)}`,
    );
  };
  if (typeof table !== 'object' || table === null) fail('a price table object', table);
  const { name, currency, entries } = table as Partial<PriceTable>;
  if (typeof name !== 'string' || name === '') fail('a price table name', name);
  if (typeof currency !== 'string' || !/^[A-Z]{3}$/.test(currency)) {
    fail('a three-letter currency code', currency);
  }
  if (!Array.isArray(entries)) fail('entries as an array', entries);
  (entries as unknown[]).forEach((entry, index) => {
    const where = `entries[${index}]`;
    const { provider, model, effectiveFrom, rates } = (entry ?? {}) as Partial<PriceEntry>;
    if (typeof provider !== 'string' || provider === '') fail(`${where}.provider`, provider);
    if (typeof model !== 'string' || model === '') fail(`${where}.model`, model);
    if (typeof effectiveFrom !== 'string' || !DAY.test(effectiveFrom)) {
      fail(`${where}.effectiveFrom as YYYY-MM-DD`, effectiveFrom);
    }
    checkRates(rates, `${where}.rates`, fail);
    if (rates?.longContext !== undefined) {
      checkRates(rates.longContext, `${where}.rates.longContext`, fail);
      const above = rates.longContext.aboveInputTokens;
      if (!Number.isInteger(above) || above <= 0) {
        fail(`${where}.rates.longContext.aboveInputTokens as a positive integer`, above);
      }
    }
  });
  return table as PriceTable;
}

const RATE_KEYS = [
  'input',
  'output',
  'cacheRead',
  'cacheWrite',
  'cacheWrite1h',
  'reasoning',
] as const;

function checkRates(
  rates: TokenRates | undefined,
  where: string,
  fail: (what: string, found: unknown) => never,
): void {
  if (typeof rates !== 'object' || rates === null) fail(`${where} as an object`, rates);
  for (const key of RATE_KEYS) {
    const value = (rates as TokenRates)[key];
    const required = key === 'input' || key === 'output';
    if (value === undefined && !required) continue;
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
      fail(`${where}.${key} as a non-negative number`, value);
    }
  }
}

/**
 * `header` with the rates `prices` gives its model at `time` recorded in `price` (the header as
 * it is when the table has none, or `prices` is `false`).
 */
export function withPrice(
  header: RequestHeaderData,
  prices: PriceTable | false | undefined,
  time: number,
): RequestHeaderData {
  if (prices === false) return header;
  const price = priceAt(prices ?? DEFAULT_PRICES, header.provider, header.model, time);
  return price === undefined ? header : { ...header, price: priceJson(price) };
}

/** A recorded price as the JSON a header holds. */
export function priceJson(price: RecordedPrice): JsonObject {
  const rates = (from: TokenRates): JsonObject =>
    Object.fromEntries(
      RATE_KEYS.flatMap((key) => (from[key] === undefined ? [] : [[key, from[key]]])),
    );
  const { longContext } = price.rates;
  return {
    table: price.table,
    currency: price.currency,
    effectiveFrom: price.effectiveFrom,
    rates: {
      ...rates(price.rates),
      ...(longContext === undefined
        ? {}
        : {
            longContext: { ...rates(longContext), aboveInputTokens: longContext.aboveInputTokens },
          }),
    },
  };
}

/**
 * The price a header recorded, when it recorded a well-formed one: a log is untrusted input, so
 * a damaged record is ignored (the table prices the call instead), never trusted half.
 */
export function recordedPrice(header: RequestHeaderData | undefined): RecordedPrice | undefined {
  if (header === undefined) return undefined;
  // A header is frozen, and every call made under it asks again: check its record once.
  if (recordedPrices.has(header)) return recordedPrices.get(header);
  const price = readRecordedPrice(header);
  recordedPrices.set(header, price);
  return price;
}

const recordedPrices = new WeakMap<RequestHeaderData, RecordedPrice | undefined>();

function readRecordedPrice(header: RequestHeaderData): RecordedPrice | undefined {
  const price: JsonValue | undefined = header.price;
  if (typeof price !== 'object' || price === null || Array.isArray(price)) return undefined;
  try {
    const { table, currency, effectiveFrom, rates } = price as Partial<Record<string, JsonValue>>;
    const checked = checkPriceTable({
      name: table,
      currency,
      entries: [{ provider: 'recorded', model: 'recorded', effectiveFrom, rates }],
    });
    const [entry] = checked.entries;
    return entry === undefined
      ? undefined
      : {
          table: checked.name,
          currency: checked.currency,
          effectiveFrom: entry.effectiveFrom,
          rates: entry.rates,
        };
  } catch {
    return undefined;
  }
}
