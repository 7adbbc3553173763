/**
 * Cost on spans: what `sessionCost` priced each call at, looked up by the seq of the event that
 * carries the call's usage.
 */
import type { SessionCost } from '../../model/index.js';

/**
 * The `cost` option of an export from a {@link SessionCost} (or `callCosts`, which skips the
 * totals and the token rent): each priced call's total, by the
 * seq of its `assistant/message` or `compaction/end`. Only US dollars are written (the attribute
 * is `palimpsest.cost.usd`): a table in another currency gives no cost at all.
 *
 * @example
 * ```ts
 * import { Session } from 'palimpsest';
 * import { sessionCost } from 'palimpsest/agent';
 * import { costBySeq, exportSession } from 'palimpsest/otel';
 * import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
 *
 * const session = Session.create({ id: 'cost-on-spans' });
 * session.append('turn/start', { turn: 1 });
 * session.append(
 *   'assistant/message',
 *   {
 *     turn: 1,
 *     step: 1,
 *     finishReason: 'stop',
 *     usage: { inputTokens: 1_000_000, outputTokens: 0 },
 *     message: {
 *       id: 'a1',
 *       role: 'assistant',
 *       content: [{ type: 'text', text: 'Hi.' }],
 *       source: { kind: 'model', provider: 'openai.responses', model: 'gpt-5-mini' },
 *     },
 *   },
 *   { surfaceOp: 'append', sourceEventSeqs: [] },
 * );
 * session.append('turn/end', { turn: 1, reason: { kind: 'completed' } });
 * const exporter = new InMemorySpanExporter();
 * await exportSession(session, { exporter, cost: costBySeq(sessionCost(session)) });
 * const turn = exporter.getFinishedSpans().find((span) => span.name === 'invoke_agent');
 * console.log(typeof turn?.attributes['palimpsest.cost.usd']); // 'number'
 * ```
 */
export function costBySeq(
  cost: Pick<SessionCost, 'currency' | 'calls'>,
): (seq: number) => number | undefined {
  if (cost.currency !== 'USD') return () => undefined;
  const bySeq = new Map<number, number>();
  for (const call of cost.calls) {
    if (call.cost !== undefined) bySeq.set(call.seq, call.cost.total);
  }
  return (seq) => bySeq.get(seq);
}
