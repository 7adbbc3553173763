/**
 * The figures of one span of the trace as short text: tokens by kind, cost, latency, finish
 * reason. Each call is priced as the CLI prices it (the trace's `CallPricer`: the rates its
 * header recorded, else the price table's of that day).
 */
import type { CallCost } from '../../model/call-costs.js';
import { DEFAULT_PRICES } from '../../model/default-prices.js';
import { count } from './text.js';
import { formatDuration } from './trace-layout.js';
import type { TraceCall, TraceCompaction, TraceSpan } from './trace-model.js';

/** The currency of every amount the trace shows. */
export const CURRENCY = DEFAULT_PRICES.currency;

/** The priced call of a span (`Trace.costs`): its answer's (or a compaction's) usage at its rates. */
export function costOf(
  span: TraceCall | TraceCompaction,
  costs: ReadonlyMap<number, CallCost>,
): CallCost | undefined {
  const seq = span.kind === 'call' ? span.answerSeq : span.endSeq;
  return seq === undefined ? undefined : costs.get(seq);
}

/** An amount of money: `$0.0123`, with more digits for the small amounts one call costs. */
export function money(amount: number): string {
  const symbol = CURRENCY === 'USD' ? '$' : `${CURRENCY} `;
  const digits = amount === 0 ? 2 : amount < 0.01 ? 5 : amount < 1 ? 4 : 2;
  return `${symbol}${amount.toFixed(digits)}`;
}

/** `in 1,200 (cached 1,000, written 50) · out 80 (reasoning 20)`, the kinds that were reported. */
export function tokensText(cost: CallCost): string {
  const { input, cacheRead, cacheWrite, output, reasoning } = cost.tokens;
  const inputParts = [
    cacheRead > 0 ? `cached ${count(cacheRead)}` : '',
    cacheWrite > 0 ? `written ${count(cacheWrite)}` : '',
  ].filter((part) => part !== '');
  const inputText = `in ${count(input + cacheRead + cacheWrite)}${inputParts.length > 0 ? ` (${inputParts.join(', ')})` : ''}`;
  return `${inputText} · out ${count(output)}${reasoning > 0 ? ` (reasoning ${count(reasoning)})` : ''}`;
}

/** The one-line figures a waterfall row shows after its bar. */
export function spanFigures(span: TraceSpan, cost: CallCost | undefined): string {
  const parts = [formatDuration(span.end - span.start)];
  if (span.kind === 'call') {
    if (cost !== undefined) parts.push(tokensText(cost));
    if (cost?.cost !== undefined) parts.push(money(cost.cost.total));
    if (span.finishReason !== undefined) parts.push(span.finishReason);
    if (span.retries.length > 0) {
      parts.push(span.retries.length === 1 ? '1 retry' : `${span.retries.length} retries`);
    }
  } else if (span.kind === 'compaction' && cost !== undefined) {
    parts.push(tokensText(cost));
    if (cost.cost !== undefined) parts.push(money(cost.cost.total));
  }
  return parts.join(' · ');
}

/** What went wrong in a span, if anything did. */
export function spanError(span: TraceSpan): string | undefined {
  if (span.kind === 'compaction') return undefined;
  return span.error;
}
