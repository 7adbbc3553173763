/**
 * What a session cost (issue 36): every call priced at the rates in effect when it was made,
 * totals per turn, model and session, and token rent checked against a naive reference that
 * rebuilds every request and attributes its tokens entry by entry.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_PRICES,
  defineTool,
  type PriceTable,
  priceAt,
  runTurn,
  type SessionCost,
  sessionCost,
} from '../../src/agent/index.js';
import { pruneToolResults } from '../../src/compaction/index.js';
import {
  applySurfaceOp,
  deriveEventMessage,
  forkSession,
  isEventOfType,
  type RequestHeaderData,
  Session,
} from '../../src/core/index.js';
import { messageTokens, priceUsage, requestHeaderTokens } from '../../src/model/index.js';
import { type ScriptedResponse, scriptedModel } from '../../src/testing/index.js';

const TABLE: PriceTable = {
  name: 'test-table',
  currency: 'USD',
  entries: [
    {
      provider: 'scripted',
      model: 'writer',
      effectiveFrom: '2020-01-01',
      rates: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
    },
  ],
};

const readFile = defineTool({
  name: 'read_file',
  description: 'Reads a file.',
  parameters: { type: 'object', properties: { path: { type: 'string' } } },
  execute: async ({ path }) => `contents of ${String(path)}: ${'x'.repeat(400)}`,
});

/** One turn per entry of `turns`: each reads `tools` files, then answers, reporting `usage`. */
async function recorded(
  turns: ReadonlyArray<{ tools: number; usage: NonNullable<ScriptedResponse['usage']>[] }>,
  options: { id?: string; modelId?: string; clock?: () => number; prune?: number[] } = {},
): Promise<Session> {
  const session = Session.create({
    id: options.id ?? 'cost',
    ...(options.clock ? { clock: options.clock } : {}),
  });
  for (const [index, turn] of turns.entries()) {
    const script: ScriptedResponse[] = [];
    for (let call = 0; call < turn.tools; call++) {
      script.push({
        toolCalls: [{ name: 'read_file', args: { path: `f${index}-${call}.ts` } }],
        usage: turn.usage[call] ?? {},
      });
    }
    script.push({ text: `Answer ${index}.`, usage: turn.usage[turn.tools] ?? {} });
    await runTurn({
      session,
      model: scriptedModel(script, { modelId: options.modelId ?? 'writer' }),
      tools: [readFile],
      system: 'Be brief.',
      input: `Question ${index}?`,
      prices: TABLE,
    });
    if (options.prune?.includes(index))
      pruneToolResults(session, { keepRecentTurns: 0, minChars: 10, headChars: 20, tailChars: 20 });
  }
  return session;
}

/** The naive rent: every billed request rebuilt from scratch, its tokens attributed entry by entry. */
function naiveRent(
  session: Session,
  cost: SessionCost,
): Map<number, { tokens: number; cost: number }> {
  const rent = new Map<number, { tokens: number; cost: number }>();
  const order: number[] = [];
  let header: RequestHeaderData | undefined;
  const calls = new Map(cost.calls.map((call) => [call.seq, call]));
  for (const event of session.events) {
    if (isEventOfType(event, 'request/header')) header = event.data;
    const call = calls.get(event.seq);
    if (call !== undefined && call.kind === 'step') {
      const input = call.tokens.input + call.tokens.cacheRead + call.tokens.cacheWrite;
      const sizes = order.map((seq) => {
        const event = session.event(seq);
        const message = event === undefined ? null : deriveEventMessage(event);
        return message === null ? 0 : messageTokens(message);
      });
      const head = requestHeaderTokens(header);
      const estimated = head + sizes.reduce((a, b) => a + b, 0);
      const scale = input / estimated;
      const rate = (money: number | undefined, tokens: number) =>
        money === undefined || tokens === 0 ? 0 : money / tokens;
      const bounds = [call.tokens.cacheRead, call.tokens.cacheRead + call.tokens.cacheWrite, input];
      const rates = [
        rate(call.cost?.cacheRead, call.tokens.cacheRead),
        rate(call.cost?.cacheWrite, call.tokens.cacheWrite),
        rate(call.cost?.input, call.tokens.input),
      ];
      let at = head * scale;
      order.forEach((seq, index) => {
        const start = at;
        const end = at + (sizes[index] as number) * scale;
        at = end;
        let money = 0;
        let from = 0;
        for (let kind = 0; kind < 3; kind++) {
          const to = bounds[kind] as number;
          money += Math.max(0, Math.min(end, to) - Math.max(start, from)) * (rates[kind] as number);
          from = to;
        }
        const entry = rent.get(seq) ?? { tokens: 0, cost: 0 };
        rent.set(seq, { tokens: entry.tokens + (end - start), cost: entry.cost + money });
      });
    }
    applySurfaceOp(order, event, () => {});
  }
  return rent;
}

describe('sessionCost', () => {
  it('prices each call by token kind at the rates its header recorded', async () => {
    const session = await recorded([
      {
        tools: 1,
        usage: [
          { inputTokens: 1000, outputTokens: 50, cacheWriteTokens: 800 },
          { inputTokens: 1200, outputTokens: 20, cacheReadTokens: 800, cacheWriteTokens: 300 },
        ],
      },
    ]);
    const header = session.events.find((event) => event.type === 'request/header');
    expect(header?.data).toMatchObject({
      price: { table: 'test-table', currency: 'USD', effectiveFrom: '2020-01-01' },
    });
    const cost = sessionCost(session, { prices: DEFAULT_PRICES });
    expect(cost.calls.map((call) => call.price)).toEqual([
      { table: 'test-table', effectiveFrom: '2020-01-01', recorded: true },
      { table: 'test-table', effectiveFrom: '2020-01-01', recorded: true },
    ]);
    expect(cost.calls[1]?.tokens).toEqual({
      input: 100,
      cacheRead: 800,
      cacheWrite: 300,
      output: 20,
      reasoning: 0,
    });
    expect(cost.calls[1]?.cost?.total).toBeCloseTo(
      (100 * 3 + 800 * 0.3 + 300 * 3.75 + 20 * 15) / 1e6,
      12,
    );
    expect(cost.total.cost.total).toBeCloseTo(
      (200 * 3 + 800 * 3.75 + 50 * 15 + 100 * 3 + 800 * 0.3 + 300 * 3.75 + 20 * 15) / 1e6,
      12,
    );
    expect(cost.turns).toHaveLength(1);
    expect(cost.turns[0]?.cost.total).toBeCloseTo(cost.total.cost.total, 12);
    expect(cost.byModel['scripted:writer']?.calls).toBe(2);
  });

  it('prices from the table when told to ignore recorded rates, and names unpriced models', async () => {
    const session = await recorded([{ tools: 0, usage: [{ inputTokens: 100, outputTokens: 10 }] }]);
    const ignored = sessionCost(session, { prices: DEFAULT_PRICES, ignoreRecordedPrices: true });
    expect(ignored.calls[0]?.cost).toBeUndefined();
    expect(ignored.unpricedModels).toEqual(['scripted:writer']);
    expect(ignored.total).toMatchObject({ calls: 1, unpricedCalls: 1, cost: { total: 0 } });
    expect(ignored.total.tokens.input).toBe(100);
  });

  it('prices an old session at the rates of its own day', async () => {
    const at = (day: string) => () => Date.parse(`${day}T12:00:00Z`);
    const usage = [{ inputTokens: 1_000_000, outputTokens: 0 }];
    const before = await recorded([{ tools: 0, usage }], {
      modelId: 'deepseek-chat',
      clock: at('2025-09-10'),
    });
    const after = await recorded([{ tools: 0, usage }], {
      modelId: 'deepseek-chat',
      clock: at('2025-10-01'),
    });
    const price = (session: Session) =>
      sessionCost(session, {
        prices: {
          ...DEFAULT_PRICES,
          entries: DEFAULT_PRICES.entries.map((e) => ({
            ...e,
            provider: e.provider === 'deepseek' ? 'scripted' : e.provider,
          })),
        },
        ignoreRecordedPrices: true,
      });
    expect(price(before).total.cost.total).toBeCloseTo(0.56, 12);
    expect(price(after).total.cost.total).toBeCloseTo(0.28, 12);
  });

  it('bills a long request at the long-context tier and 1-hour cache writes at their own rate', () => {
    const sonnet = priceAt(
      DEFAULT_PRICES,
      'anthropic.messages',
      'claude-sonnet-4-5-20250929',
      Date.parse('2026-06-01'),
    );
    expect(sonnet?.effectiveFrom).toBe('2025-09-29');
    if (sonnet === undefined) throw new Error('no Sonnet 4.5 price');
    const rates = sonnet.rates;
    expect(priceUsage({ inputTokens: 200_000, outputTokens: 0 }, rates).total).toBeCloseTo(0.6, 12);
    expect(priceUsage({ inputTokens: 200_001, outputTokens: 0 }, rates).total).toBeCloseTo(
      (200_001 * 6) / 1e6,
      12,
    );
    const hour = priceUsage(
      {
        inputTokens: 1000,
        cacheWriteTokens: 1000,
        outputTokens: 0,
        raw: { cache_creation: { ephemeral_1h_input_tokens: 400, ephemeral_5m_input_tokens: 600 } },
      },
      rates,
    );
    expect(hour.cacheWrite).toBeCloseTo((600 * 3.75 + 400 * 6) / 1e6, 12);
  });

  it('matches dated model versions but not other models that share a prefix, at any time', () => {
    const day = Date.parse('2026-01-01');
    expect(priceAt(DEFAULT_PRICES, 'openai.responses', 'gpt-4o-2024-08-06', day)?.rates.input).toBe(
      2.5,
    );
    expect(priceAt(DEFAULT_PRICES, 'openai.chat', 'gpt-4o-mini', day)?.rates.input).toBe(0.15);
    expect(priceAt(DEFAULT_PRICES, 'openai.chat', 'gpt-5-pro', day)).toBeUndefined();
    expect(
      priceAt(DEFAULT_PRICES, 'openai.chat', 'gpt-5', Date.parse('2025-01-01')),
    ).toBeUndefined();
    // A time no Date can hold (a damaged log) reads as the far future, never a throw.
    expect(priceAt(DEFAULT_PRICES, 'deepseek', 'deepseek-chat', 9e15)?.effectiveFrom).toBe(
      '2025-09-29',
    );
  });

  it('prices the 2026 models at their own rates, not at a neighbour that shares a prefix', () => {
    const at = (provider: string, model: string, day: string) =>
      priceAt(DEFAULT_PRICES, provider, model, Date.parse(`${day}T12:00:00Z`))?.rates;
    expect(at('anthropic.messages', 'claude-opus-4-6', '2026-03-01')).toMatchObject({
      input: 5,
      cacheRead: 0.5,
      output: 25,
    });
    // Opus 5.5 reads the cache at a twentieth of its input rate; Opus 5 at a tenth.
    expect(at('anthropic.messages', 'claude-opus-5-5', '2026-11-01')).toMatchObject({
      input: 4,
      cacheRead: 0.2,
      cacheWrite1h: 8,
    });
    expect(at('anthropic.messages', 'claude-opus-5', '2026-11-01')?.cacheRead).toBe(0.5);
    // Sonnet 5.5's cache reads halved on 2026-10-07: a call is priced at its own day's rate.
    expect(at('anthropic.messages', 'claude-sonnet-5-5', '2026-10-06')?.cacheRead).toBe(0.2);
    expect(at('anthropic.messages', 'claude-sonnet-5-5', '2026-10-07')?.cacheRead).toBe(0.1);
    expect(at('openai.responses', 'gpt-5.4-mini', '2026-06-01')?.input).toBe(0.75);
    expect(at('openai.responses', 'gpt-5.1-codex-max', '2026-01-01')?.output).toBe(10);
    expect(at('google.generative-ai', 'gemini-3-pro-preview', '2026-01-01')?.input).toBe(2);
    expect(at('openai.responses', 'gpt-5.7', '2026-06-01')).toBeUndefined();
  });

  it('bills a Haiku 5.5 request whose prompt passes 100,000 tokens, cache reads included, at five times its rates', () => {
    const rates = priceAt(
      DEFAULT_PRICES,
      'anthropic.messages',
      'claude-haiku-5-5',
      Date.parse('2026-11-01'),
    )?.rates;
    if (rates === undefined) throw new Error('no Haiku 5.5 price');
    // inputTokens counts every input token, the cached ones included (the AI SDK's convention).
    const short = { inputTokens: 100_000, cachedInputTokens: 80_000, outputTokens: 1_000 };
    expect(priceUsage(short, rates).total).toBeCloseTo(
      (20_000 * 0.1 + 80_000 * 0.01 + 1_000 * 0.5) / 1e6,
      12,
    );
    const long = { ...short, inputTokens: 100_001 };
    expect(priceUsage(long, rates).total).toBeCloseTo(
      (20_001 * 0.5 + 80_000 * 0.05 + 1_000 * 2.5) / 1e6,
      12,
    );
  });

  it('refuses a malformed price table with a message naming the field', () => {
    const bad = { ...TABLE, entries: [{ ...TABLE.entries[0], rates: { input: -1, output: 1 } }] };
    expect(() => sessionCost(Session.create({ id: 'x' }), { prices: bad as PriceTable })).toThrow(
      /entries\[0\]\.rates\.input as a non-negative number, found -1/,
    );
  });

  it('keeps the calls a fork inherited apart', async () => {
    const parent = await recorded([
      { tools: 0, usage: [{ inputTokens: 100, outputTokens: 10 }] },
      { tools: 0, usage: [{ inputTokens: 300, outputTokens: 10 }] },
    ]);
    const fork = forkSession(parent, parent.seq - 1, { id: 'fork' });
    const cost = sessionCost(fork);
    expect(cost.inherited.calls).toBe(2);
    expect(cost.inherited.cost.total).toBeCloseTo(cost.total.cost.total, 12);
  });
});

describe('token rent', () => {
  it('charges each entry what a naive rebuild of every request charges it, and adds up to the input billed', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            tools: fc.integer({ min: 0, max: 3 }),
            usage: fc.array(
              fc
                .record({
                  input: fc.integer({ min: 1, max: 50_000 }),
                  read: fc.double({ min: 0, max: 1, noNaN: true }),
                  write: fc.double({ min: 0, max: 1, noNaN: true }),
                })
                .map(({ input, read, write }) => {
                  const cacheReadTokens = Math.floor(input * read);
                  return {
                    inputTokens: input,
                    outputTokens: 7,
                    cacheReadTokens,
                    cacheWriteTokens: Math.floor((input - cacheReadTokens) * write),
                  };
                }),
              { minLength: 4, maxLength: 4 },
            ),
          }),
          { minLength: 1, maxLength: 7 },
        ),
        fc.array(fc.integer({ min: 0, max: 4 }), { maxLength: 2 }),
        async (turns, prune) => {
          const session = await recorded(turns, { prune });
          const cost = sessionCost(session);
          const naive = naiveRent(session, cost);
          for (const entry of cost.rent.entries) {
            const expected = naive.get(entry.seq);
            expect(entry.input + entry.cacheRead + entry.cacheWrite).toBeCloseTo(
              expected?.tokens ?? 0,
              6,
            );
            expect(entry.cost).toBeCloseTo(expected?.cost ?? 0, 9);
          }
          const rented = cost.rent.entries.reduce(
            (sum, e) => sum + e.input + e.cacheRead + e.cacheWrite,
            0,
          );
          const head = cost.rent.header;
          const billed =
            cost.total.tokens.input + cost.total.tokens.cacheRead + cost.total.tokens.cacheWrite;
          expect(rented + head.input + head.cacheRead + head.cacheWrite).toBeCloseTo(billed, 4);
          const inputCost =
            cost.total.cost.input + cost.total.cost.cacheRead + cost.total.cost.cacheWrite;
          expect(cost.rent.entries.reduce((sum, e) => sum + e.cost, 0) + head.cost).toBeCloseTo(
            inputCost,
            9,
          );
        },
      ),
      { numRuns: 100 },
    );
  });

  it('names the entries that cost most first, and what a prune saved afterwards', async () => {
    const usage = [
      { inputTokens: 2000, outputTokens: 5 },
      { inputTokens: 2000, outputTokens: 5 },
    ];
    const session = await recorded(
      [
        { tools: 1, usage },
        { tools: 0, usage },
        { tools: 0, usage },
      ],
      { prune: [0] },
    );
    const cost = sessionCost(session);
    const costs = cost.rent.entries.map((entry) => entry.cost);
    expect(costs).toEqual([...costs].sort((a, b) => b - a));
    const original = cost.rent.entries.find((entry) => !entry.onSurface);
    expect(original?.label).toMatch(/^tool read_file: contents of f0-0\.ts: x{20}/);
    const pruned = cost.rent.entries.find((entry) => entry.seq === cost.rewrites[0]?.seq);
    expect(pruned?.label).toMatch(
      /^tool read_file: contents of f0-0\.ts: \[… 381 of 421 characters pruned/,
    );
    expect(pruned?.tokens).toBeLessThan(original?.tokens ?? 0);
    const [prune] = cost.rewrites;
    expect(prune).toMatchObject({ cause: 'prune', calls: 2 });
    expect(prune?.savedTokens).toBeGreaterThan(0);
    expect(prune?.savedCost).toBeCloseTo(((prune?.savedTokens ?? 0) * 3) / 1e6, 12);
  });
});
