/**
 * `sessionCost` prices its calls inside the rent walk, keeps the table's answer per model and
 * day, sums totals in place and cuts plain labels without a regular expression. On generated
 * sessions (several providers, days across price changes, recorded and foreign-currency rates,
 * texts full of odd whitespace) every figure it reports is the one a plain ledger computes: each
 * call priced on its own from `priceAt`, totals summed call by call, labels folded with `\s+`.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DEFAULT_PRICES, type SessionCost, sessionCost } from '../../src/agent/index.js';
import {
  deriveEventMessage,
  isEventOfType,
  type JsonObject,
  type RequestHeaderData,
  Session,
  type SessionEvent,
} from '../../src/core/index.js';
import { priceAt, priceUsage, recordedPrice, splitUsage } from '../../src/model/index.js';
import { toolResult, user } from '../core/builders.js';

const MODELS = [
  ['anthropic.messages', 'claude-sonnet-4-5'],
  ['deepseek.chat', 'deepseek-chat'],
  ['openai.responses', 'gpt-5-mini'],
  ['scripted', 'unpriced-model'],
] as const;

const RECORDED = { table: 'recorded', effectiveFrom: '2020-01-01' };
const RECORDED_RATES = { input: 1, output: 2, cacheRead: 0.1, cacheWrite: 1.5 };

/** Text whose whitespace is every kind a label folds, around words, arrows and accents. */
const oddText = fc
  .array(
    fc.constantFrom(
      'word ',
      'Ab7',
      ' ',
      '  ',
      '\n',
      '\t',
      '\u00a0',
      '\u2028',
      '\u3000',
      'é',
      '→',
      '.',
    ),
    { maxLength: 60, size: 'max' },
  )
  .map((parts) => parts.join(''));

/** Words with single spaces (the labels cut without folding), a space before them or not. */
const plainText = fc
  .tuple(
    fc.boolean(),
    fc.array(fc.constantFrom('word', 'Ab7', 'é→', 'x.', 'a'), {
      minLength: 8,
      maxLength: 40,
      size: 'max',
    }),
  )
  .map(([lead, words]) => (lead ? ' ' : '') + words.join(' '));

const text = fc.oneof(oddText, plainText);

const step = fc.record({
  header: fc.option(
    fc.record({
      model: fc.integer({ min: 0, max: MODELS.length - 1 }),
      price: fc.constantFrom('none', 'USD', 'EUR'),
    }),
  ),
  model: fc.integer({ min: 0, max: MODELS.length - 1 }),
  text,
  result: fc.option(text),
  usage: fc.record({
    inputTokens: fc.integer({ min: 0, max: 300_000 }),
    cachedInputTokens: fc.integer({ min: 0, max: 200_000 }),
    cacheWriteTokens: fc.integer({ min: 0, max: 50_000 }),
    outputTokens: fc.integer({ min: 0, max: 5_000 }),
    reasoningTokens: fc.integer({ min: 0, max: 5_000 }),
  }),
  daysLater: fc.integer({ min: 0, max: 12 }),
});

type Step = typeof step extends fc.Arbitrary<infer T> ? T : never;

const turns = fc.array(
  fc.record({ prompt: text, steps: fc.array(step, { minLength: 1, maxLength: 3 }) }),
  {
    minLength: 1,
    maxLength: 6,
  },
);

/** A session of `turns`, its days starting before DeepSeek's two September 2025 price changes. */
function generated(spec: ReadonlyArray<{ prompt: string; steps: readonly Step[] }>): Session {
  let now = Date.parse('2025-08-20T12:00:00Z');
  const session = Session.create({ id: 'generated', clock: () => now });
  let callId = 0;
  for (const [index, turn] of spec.entries()) {
    const number = index + 1;
    session.append('turn/start', { turn: number });
    session.append('user/message', user(`u${number}`, turn.prompt), { surfaceOp: 'append' });
    for (const [at, spec] of turn.steps.entries()) {
      now += spec.daysLater * 86_400_000;
      const where = { turn: number, step: at + 1 };
      session.append('step/start', where);
      if (spec.header !== null) session.append('request/header', headerOf(spec.header));
      const [provider, model] = MODELS[spec.model] as (typeof MODELS)[number];
      const id = `call_${callId++}`;
      const content: JsonObject[] = [];
      if (spec.text !== '') content.push({ type: 'text', text: spec.text });
      if (spec.result !== null)
        content.push({ type: 'tool-call', id, name: 'lookup', arguments: '{}' });
      session.append(
        'assistant/message',
        {
          ...where,
          finishReason: spec.result === null ? 'stop' : 'tool-calls',
          usage: spec.usage,
          message: {
            id: `a${id}`,
            role: 'assistant',
            content,
            source: { kind: 'model', provider, model },
          },
        } as never,
        { surfaceOp: 'append' },
      );
      if (spec.result !== null) {
        const call = session.append('tool/call', {
          ...where,
          callId: id,
          name: 'lookup',
          arguments: '{}',
        });
        session.append('tool/result', toolResult(`r${id}`, id, spec.result, where), {
          surfaceOp: 'append',
          sourceEventSeqs: [call.seq],
        });
      }
      session.append('step/end', where);
    }
    session.append('turn/end', { turn: number, reason: { kind: 'completed' } });
  }
  return session;
}

function headerOf(spec: NonNullable<Step['header']>): RequestHeaderData {
  const [provider, model] = MODELS[spec.model] as (typeof MODELS)[number];
  if (spec.price === 'none') return { provider, model };
  return { provider, model, price: { ...RECORDED, currency: spec.price, rates: RECORDED_RATES } };
}

/** Every call priced on its own, as the rules in docs/cost.md read. */
function plainCalls(session: Session, ignoreRecorded: boolean): SessionCost['calls'] {
  let header: RequestHeaderData | undefined;
  let turn: number | undefined;
  const calls: SessionCost['calls'][number][] = [];
  for (const event of session.events) {
    if (isEventOfType(event, 'request/header')) header = event.data;
    if (isEventOfType(event, 'turn/start')) turn = event.data.turn;
    if (!isEventOfType(event, 'assistant/message') || event.data.usage === undefined) continue;
    const { provider = 'unknown', model = 'unknown' } = event.data.message.source as {
      provider?: string;
      model?: string;
    };
    const recorded =
      !ignoreRecorded && header?.provider === provider && header.model === model
        ? recordedPrice(header)
        : undefined;
    const usable = recorded?.currency === 'USD' ? recorded : undefined;
    const rates = usable ?? priceAt(DEFAULT_PRICES, provider, model, event.time);
    calls.push({
      seq: event.seq,
      kind: 'step',
      ...(turn === undefined ? {} : { turn }),
      step: event.data.step,
      time: event.time,
      provider,
      model,
      tokens: splitUsage(event.data.usage),
      ...(rates === undefined
        ? {}
        : {
            cost: priceUsage(event.data.usage, rates.rates),
            price: {
              table: rates.table,
              effectiveFrom: rates.effectiveFrom,
              recorded: usable !== undefined,
            },
          }),
    });
  }
  return calls;
}

/** Calls summed one by one into fresh objects. */
function plainTotals(calls: SessionCost['calls']): SessionCost['total'] {
  const zero = { input: 0, cacheRead: 0, cacheWrite: 0, output: 0, reasoning: 0 };
  return calls.reduce<SessionCost['total']>(
    (sum, call) => ({
      calls: sum.calls + 1,
      unpricedCalls: sum.unpricedCalls + (call.cost === undefined ? 1 : 0),
      tokens: {
        input: sum.tokens.input + call.tokens.input,
        cacheRead: sum.tokens.cacheRead + call.tokens.cacheRead,
        cacheWrite: sum.tokens.cacheWrite + call.tokens.cacheWrite,
        output: sum.tokens.output + call.tokens.output,
        reasoning: sum.tokens.reasoning + call.tokens.reasoning,
      },
      cost:
        call.cost === undefined
          ? sum.cost
          : {
              input: sum.cost.input + call.cost.input,
              cacheRead: sum.cost.cacheRead + call.cost.cacheRead,
              cacheWrite: sum.cost.cacheWrite + call.cost.cacheWrite,
              output: sum.cost.output + call.cost.output,
              reasoning: sum.cost.reasoning + call.cost.reasoning,
              total: sum.cost.total + call.cost.total,
            },
    }),
    { calls: 0, unpricedCalls: 0, tokens: zero, cost: { ...zero, total: 0 } },
  );
}

/** The label rule read plainly: the first 200 characters of text, whitespace folded, cut at 60. */
function plainLabel(session: Session, event: SessionEvent): string {
  const message = deriveEventMessage(event);
  const parts: string[] = [];
  for (const block of message?.content ?? []) {
    if (block.type === 'text') parts.push(block.text);
    if (block.type === 'tool-call') parts.push(`→ ${block.name}`);
    if (block.type === 'tool-result')
      for (const inner of block.content) if (inner.type === 'text') parts.push(inner.text);
  }
  let raw = '';
  for (const part of parts) {
    if (raw.length >= 200) break;
    raw += (raw === '' ? '' : ' ') + part.slice(0, 200 - raw.length);
  }
  const line = raw.replace(/\s+/g, ' ').trim();
  const excerpt = line.length > 60 ? `${line.slice(0, 59)}…` : line;
  const who =
    event.type === 'tool/result'
      ? `tool ${(session.event(event.sourceEventSeqs?.[0] ?? -1)?.data as { name?: string } | undefined)?.name}`
      : (message?.role ?? event.type);
  return excerpt === '' ? who : `${who}: ${excerpt}`;
}

describe('sessionCost against a plain ledger', () => {
  it('reports the calls, totals, labels and order a plain ledger computes, on generated sessions', () => {
    fc.assert(
      fc.property(turns, fc.boolean(), (spec, ignoreRecordedPrices) => {
        const session = generated(spec);
        const cost = sessionCost(session, { ignoreRecordedPrices });
        const calls = plainCalls(session, ignoreRecordedPrices);
        // Serialized, so that field order and absent fields count too.
        expect(JSON.stringify(cost.calls)).toBe(JSON.stringify(calls));
        expect(cost.total).toEqual(plainTotals(calls));
        for (const { turn, ...totals } of cost.turns) {
          expect(totals).toEqual(plainTotals(calls.filter((call) => call.turn === turn)));
        }
        for (const [key, totals] of Object.entries(cost.byModel)) {
          const of = calls.filter((call) => `${call.provider}:${call.model}` === key);
          expect(totals).toEqual(plainTotals(of));
        }
        // Models in the order of their first call, those with a call no rates were found for.
        const models = [...new Set(calls.map((call) => `${call.provider}:${call.model}`))];
        expect(cost.unpricedModels).toEqual(
          models.filter((key) => cost.byModel[key]?.unpricedCalls !== 0),
        );
        const surface = new Set(session.surface.seqs);
        for (const entry of cost.rent.entries) {
          const event = session.event(entry.seq) as SessionEvent;
          expect(entry.label).toBe(plainLabel(session, event));
          expect(entry.type).toBe(event.type);
          expect(entry.onSurface).toBe(surface.has(entry.seq));
        }
        const dearest = cost.rent.entries.map((e) => [
          e.cost,
          e.input + e.cacheRead + e.cacheWrite,
          -e.seq,
        ]);
        const sorted = [...dearest].sort(
          (a, b) =>
            (b[0] as number) - (a[0] as number) ||
            (b[1] as number) - (a[1] as number) ||
            (b[2] as number) - (a[2] as number),
        );
        expect(dearest).toEqual(sorted);
      }),
      { numRuns: 150 },
    );
  });
});
