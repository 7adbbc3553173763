/**
 * The span model in process: sessions recorded by the loop exported through the SDK's
 * InMemorySpanExporter, and read back as spans.
 */
import { SpanStatusCode } from '@opentelemetry/api';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import {
  costBySeq,
  exportLive,
  exportSession,
  locateSubagentCall,
  OtelExportError,
  spanIdOf,
  traceIdOf,
} from '../../../src/adapters/otel/index.js';
import { runTurn, sessionCost } from '../../../src/agent/index.js';
import { compact } from '../../../src/compaction/index.js';
import { forkSession, Session } from '../../../src/core/index.js';
import { scriptedModel } from '../../../src/testing/index.js';
import { CountingExporter, exportedText, loopSession, readNote, SECRETS } from './helpers.js';

async function spansOf(
  session: Session,
  options: Omit<Parameters<typeof exportSession>[1], 'exporter'> = {},
): Promise<ReadableSpan[]> {
  const exporter = new InMemorySpanExporter();
  await exportSession(session, { ...options, exporter });
  return exporter.getFinishedSpans();
}

function named(spans: readonly ReadableSpan[], name: string): ReadableSpan[] {
  return spans.filter((span) => span.name === name);
}

function ms(time: readonly [number, number]): number {
  return time[0] * 1000 + time[1] / 1e6;
}

describe('exporting a session as OpenTelemetry spans', () => {
  it('a turn is an invoke_agent span with its model calls and tool executions under it', async () => {
    const session = await loopSession();
    const spans = await spansOf(session, { agentName: 'helper' });
    const turns = named(spans, 'invoke_agent helper');
    expect(turns).toHaveLength(2);
    const [first] = turns;
    if (first === undefined) throw new Error('no turn');
    const children = spans.filter(
      (span) => span.parentSpanContext?.spanId === first.spanContext().spanId,
    );
    expect(children.map((span) => span.name).sort()).toEqual([
      'chat deepseek-chat',
      'chat deepseek-chat',
      'execute_tool explode',
      'execute_tool read_note',
    ]);
    for (const child of children) {
      expect(child.spanContext().traceId).toBe(first.spanContext().traceId);
    }
    expect(first.attributes).toMatchObject({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.conversation.id': 'otel-loop',
      'gen_ai.agent.name': 'helper',
      'gen_ai.provider.name': 'deepseek',
      'gen_ai.usage.input_tokens': 320,
      'palimpsest.turn': 1,
      'palimpsest.turn.end_reason': 'completed',
    });
    expect(first.parentSpanContext).toBeUndefined();
  });

  it('a chat span carries the model, finish reasons and every kind of token the call used', async () => {
    const session = await loopSession();
    const spans = await spansOf(session);
    const [call] = named(spans, 'chat deepseek-chat');
    expect(call?.kind).toBe(2); // CLIENT
    expect(call?.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'deepseek',
      'gen_ai.request.model': 'deepseek-chat',
      'gen_ai.response.model': 'deepseek-chat',
      'gen_ai.response.finish_reasons': ['tool_call'],
      'gen_ai.usage.input_tokens': 120,
      'gen_ai.usage.output_tokens': 30,
      'gen_ai.usage.cache_read.input_tokens': 100,
      'gen_ai.usage.cache_creation.input_tokens': 10,
    });
  });

  it("spans start and end at their events' times", async () => {
    const session = await loopSession();
    const spans = await spansOf(session);
    const events = session.events;
    const [turn] = named(spans, 'invoke_agent');
    const start = events.find((event) => event.type === 'turn/start');
    const end = events.find((event) => event.type === 'turn/end');
    expect(ms(turn?.startTime ?? [0, 0])).toBe(start?.time);
    expect(ms(turn?.endTime ?? [0, 0])).toBe(end?.time);
    const call = events.find((event) => event.type === 'tool/call');
    const [tool] = named(spans, 'execute_tool read_note');
    expect(ms(tool?.startTime ?? [0, 0])).toBe(call?.time);
  });

  it('a failed tool is an error span naming its error code, not its message', async () => {
    const session = await loopSession();
    const [tool] = named(await spansOf(session), 'execute_tool explode');
    expect(tool?.status.code).toBe(SpanStatusCode.ERROR);
    expect(tool?.attributes['error.type']).toBe('TOOL_FAILED');
    expect(tool?.attributes['gen_ai.tool.call.id']).toBeTypeOf('string');
    expect(JSON.stringify(tool?.status)).not.toContain(SECRETS.output);
  });

  it('a turn that ended in a provider error is an error span', async () => {
    const session = Session.create({ id: 'otel-error' });
    await runTurn({
      session,
      model: scriptedModel([{ error: { message: 'overloaded', status: 400 } }]),
      input: 'hi',
    });
    const [turn] = named(await spansOf(session), 'invoke_agent');
    expect(turn?.status.code).toBe(SpanStatusCode.ERROR);
    expect(turn?.attributes['palimpsest.turn.end_reason']).toBe('error');
  });

  it('no text a user, model or tool wrote leaves without content: true', async () => {
    const session = await loopSession();
    const text = exportedText(await spansOf(session));
    for (const secret of Object.values(SECRETS)) expect(text).not.toContain(secret);
    expect(text).not.toContain('gen_ai.input.messages');
  });

  it('with content: true, the messages, system instructions, tool arguments and results', async () => {
    const session = await loopSession();
    const spans = await spansOf(session, { content: true });
    const [call] = named(spans, 'chat deepseek-chat');
    const input = JSON.parse(String(call?.attributes['gen_ai.input.messages']));
    expect(input).toEqual([{ role: 'user', parts: [{ type: 'text', content: SECRETS.input }] }]);
    expect(String(call?.attributes['gen_ai.system_instructions'])).toContain(SECRETS.system);
    const output = JSON.parse(String(call?.attributes['gen_ai.output.messages']));
    expect(output[0].finish_reason).toBe('tool_call');
    expect(output[0].parts[0]).toEqual({ type: 'reasoning', content: SECRETS.reasoning });
    const [tool] = named(spans, 'execute_tool read_note');
    expect(String(tool?.attributes['gen_ai.tool.call.arguments'])).toContain(SECRETS.argument);
    expect(tool?.attributes['gen_ai.tool.call.result']).toBe(
      `${SECRETS.output} for ${SECRETS.argument}`,
    );
  });

  it('exporting the same session twice sends the same trace and span ids', async () => {
    const session = await loopSession();
    const ids = (spans: ReadableSpan[]) =>
      spans.map((span) => `${span.spanContext().traceId}/${span.spanContext().spanId}`);
    expect(ids(await spansOf(session))).toEqual(ids(await spansOf(session)));
    const [turn] = named(await spansOf(session), 'invoke_agent');
    expect(turn?.spanContext().traceId).toBe(traceIdOf('otel-loop', 0));
    expect(turn?.spanContext().spanId).toBe(spanIdOf('otel-loop', 0));
  });

  it('the redaction hook rewrites attributes and drops whole spans before they leave', async () => {
    const session = await loopSession();
    const seen: string[] = [];
    const exporter = new InMemorySpanExporter();
    const report = await exportSession(session, {
      exporter,
      content: true,
      redact: (attributes, context) => {
        seen.push(context.kind);
        if (context.kind === 'execute_tool') return null;
        const { 'gen_ai.input.messages': _dropped, ...rest } = attributes;
        return { ...rest, 'gen_ai.output.messages': '[redacted]' };
      },
    });
    const spans = exporter.getFinishedSpans();
    expect(new Set(seen)).toEqual(new Set(['chat', 'execute_tool', 'invoke_agent']));
    expect(spans.some((span) => span.name.startsWith('execute_tool'))).toBe(false);
    expect(report.droppedSpans).toBe(2);
    const text = exportedText(spans);
    for (const secret of Object.values(SECRETS)) {
      if (secret !== SECRETS.system) expect(text).not.toContain(secret);
    }
  });

  it('a redaction hook that throws stops the export and nothing of its span leaves', async () => {
    const session = await loopSession();
    const exporter = new InMemorySpanExporter();
    const failure = await exportSession(session, {
      exporter,
      content: true,
      redact: () => {
        throw new Error('no');
      },
    }).catch((error: unknown) => error);
    expect(OtelExportError.isInstance(failure) && failure.code).toBe('REDACT_FAILED');
    expect(exporter.getFinishedSpans()).toEqual([]);
  });

  it("a fork's first own turn links to the parent's turn it was forked after; inherited turns are not sent again", async () => {
    const parent = await loopSession('otel-parent');
    const firstEnd = parent.events.find((event) => event.type === 'turn/end')?.seq ?? -1;
    const fork = forkSession(parent, firstEnd, { id: 'otel-fork' });
    await runTurn({ session: fork, model: scriptedModel([{ text: 'forked' }]), input: 'again' });
    const spans = await spansOf(fork);
    const turns = named(spans, 'invoke_agent');
    expect(turns).toHaveLength(1);
    expect(
      turns[0]?.links.map(({ context }) => ({ traceId: context.traceId, spanId: context.spanId })),
    ).toEqual([{ traceId: traceIdOf('otel-parent', 0), spanId: spanIdOf('otel-parent', 0) }]);
    expect(turns[0]?.attributes['palimpsest.fork.parent_session']).toBe('otel-parent');
  });

  it("a subagent's turns hang under the parent's execute_tool span, in the parent's trace", async () => {
    const parent = Session.create({ id: 'otel-lead' });
    await runTurn({
      session: parent,
      model: scriptedModel([
        { toolCalls: [{ name: 'read_note', args: { name: 'x' } }] },
        { text: 'ok' },
      ]),
      tools: [readNote],
      input: 'delegate',
    });
    const call = parent.events.find((event) => event.type === 'tool/call');
    const callId = call?.type === 'tool/call' ? call.data.callId : '';
    const child = Session.create({
      header: {
        version: 1,
        id: 'otel-child',
        createdAt: 0,
        metadata: { subagentOf: { session: 'otel-lead', toolCallId: callId } },
      },
    });
    await runTurn({ session: child, model: scriptedModel([{ text: 'done' }]), input: 'sub task' });
    const parentCall = locateSubagentCall(parent, callId);
    const [turn] = named(
      await spansOf(child, { ...(parentCall ? { parentCall } : {}) }),
      'invoke_agent',
    );
    const [tool] = named(await spansOf(parent), 'execute_tool read_note');
    expect(turn?.parentSpanContext?.spanId).toBe(tool?.spanContext().spanId);
    expect(turn?.spanContext().traceId).toBe(tool?.spanContext().traceId);
    expect(turn?.attributes['palimpsest.subagent.parent_session']).toBe('otel-lead');
  });

  it('the cost of each call is written on its chat span and summed on its turn', async () => {
    const session = await loopSession();
    const messages = session.events.filter((event) => event.type === 'assistant/message');
    const spans = await spansOf(session, {
      cost: (seq) => (seq === messages[0]?.seq ? 0.25 : seq === messages[1]?.seq ? 0.5 : undefined),
    });
    const [turn] = named(spans, 'invoke_agent');
    expect(turn?.attributes['palimpsest.cost.usd']).toBe(0.75);
  });

  it("sessionCost's price of each call is the chat span's palimpsest.cost.usd", async () => {
    const session = await loopSession();
    const cost = sessionCost(session);
    const priced = cost.calls.filter((call) => call.cost !== undefined);
    expect(priced.length).toBe(3);
    const spans = await spansOf(session, { cost: costBySeq(cost) });
    for (const call of priced) {
      const span = spans.find((s) => s.attributes['palimpsest.seq'] === call.seq);
      expect(span?.attributes['palimpsest.cost.usd']).toBe(call.cost?.total);
    }
    const [turn] = named(spans, 'invoke_agent');
    const turnCost = cost.turns.find((t) => t.turn === 1)?.cost.total ?? -1;
    expect(turn?.attributes['palimpsest.cost.usd']).toBeCloseTo(turnCost, 12);
  });

  it('live: each turn is exported when its turn/end commits, with the ids of an export after the fact', async () => {
    const session = Session.create({ id: 'otel-live' });
    const exporter = new InMemorySpanExporter();
    const live = exportLive(session, { exporter });
    await runTurn({
      session,
      model: scriptedModel([
        { toolCalls: [{ name: 'read_note', args: { name: 'a' } }] },
        { text: 'ok' },
      ]),
      tools: [readNote],
      input: 'hello',
    });
    await live.flush();
    const first = exporter.getFinishedSpans().map((span) => span.spanContext().spanId);
    expect(first).toHaveLength(4);
    session.append('turn/start', { turn: 2 });
    await live.flush();
    expect(exporter.getFinishedSpans()).toHaveLength(4);
    session.append('turn/end', { turn: 2, reason: { kind: 'aborted' } });
    const report = await live.close();
    expect(report.turns).toBe(2);
    const after = (await spansOf(session)).map((span) => span.spanContext().spanId);
    expect(exporter.getFinishedSpans().map((span) => span.spanContext().spanId)).toEqual(after);
  });

  it('a 5,000-turn session exports with a bounded number of spans held at once', async () => {
    const session = Session.create({ id: 'otel-long' });
    for (let turn = 1; turn <= 5000; turn++) {
      session.append('turn/start', { turn });
      session.append('step/start', { turn, step: 1 });
      session.append(
        'assistant/message',
        {
          turn,
          step: 1,
          finishReason: 'stop',
          usage: { inputTokens: 10, outputTokens: 2 },
          message: {
            id: `a${turn}`,
            role: 'assistant',
            content: [{ type: 'text', text: 'ok' }],
            source: { kind: 'model', provider: 'scripted', model: 'm' },
          },
        },
        { surfaceOp: 'append', sourceEventSeqs: [] },
      );
      session.append('step/end', { turn, step: 1 });
      session.append('turn/end', { turn, reason: { kind: 'completed' } });
    }
    const exporter = new CountingExporter(true);
    const report = await exportSession(session, { exporter, batchSize: 100 });
    expect(report.spans).toBe(10_000);
    expect(exporter.spans).toBe(10_000);
    expect(exporter.ids.size).toBe(10_000);
    expect(exporter.largestBatch).toBe(100);
    // One batch plus the one turn being added: never the whole session.
    expect(report.peakRetainedSpans).toBeLessThanOrEqual(100 + 2);
  });

  it('a compaction between turns is a span of its own trace, with its summarizer and usage; its summary only with content', async () => {
    const answer = 'The log shows 180 modules compiled and a type error in src/config.ts. '.repeat(
      20,
    );
    const session = Session.create({ id: 'otel-compact' });
    const model = scriptedModel([{ text: answer }], { loop: true });
    for (const input of ['Why did the build fail?', 'Where exactly?', 'How do I fix it?']) {
      await runTurn({ session, model, input });
    }
    const writer = scriptedModel([
      { text: 'SUMMARY-TEXT-8e1: a type error.', usage: { inputTokens: 900, outputTokens: 20 } },
    ]);
    const result = await compact(session, { model: writer, keepRecentTokens: 0 });
    expect(result.replaced).toBe(true);
    const spans = await spansOf(session);
    const [span] = named(spans, 'compaction summary');
    expect(span?.parentSpanContext).toBeUndefined();
    expect(span?.spanContext().traceId).toBe(traceIdOf('otel-compact', result.startSeq ?? -1));
    expect(span?.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.request.model': 'scripted-model',
      'gen_ai.usage.input_tokens': 900,
      'palimpsest.compaction.replaced': true,
    });
    expect(exportedText(spans)).not.toContain('SUMMARY-TEXT-8e1');
    const [withContent] = named(await spansOf(session, { content: true }), 'compaction summary');
    expect(String(withContent?.attributes['palimpsest.compaction.summary'])).toContain(
      'SUMMARY-TEXT-8e1',
    );
  });

  it('a turn still open when the events run out is not exported, and is counted', async () => {
    const session = Session.create({ id: 'otel-open' });
    session.append('turn/start', { turn: 1 });
    const report = await exportSession(session, { exporter: new InMemorySpanExporter() });
    expect(report).toMatchObject({ spans: 0, turns: 0, openTurnsSkipped: 1 });
  });
});
