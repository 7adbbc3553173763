/**
 * The OpenTelemetry export benchmark (issue 36): spans per second of `exportSession` beside the
 * SDK's own floor, the same spans (names, kinds, attributes, times, parents, links) created
 * through the SDK's tracer and exported the same way, in batches of 512, each awaited.
 *
 * 1. To an OTLP/HTTP receiver on loopback (the SDK's `OTLPTraceExporter`, JSON): what a user's
 *    export costs end to end.
 * 2. To an exporter that discards: what building the spans costs, with nothing after it.
 *
 *   npm run bench:otel
 *
 * Prints the tables and rewrites the otel section of docs/benchmarks.md. Not a test.
 */
import { createServer } from 'node:http';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Context, context, type SpanContext, trace } from '@opentelemetry/api';
import type { ExportResult } from '@opentelemetry/core';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  type Span,
  type SpanExporter,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { exportSession, otlpHttpExporter } from '../src/adapters/otel/index.js';
import { defineTool, runTurn } from '../src/agent/index.js';
import { Session } from '../src/core/index.js';
import { scriptedModel } from '../src/testing/index.js';
import { progressLog } from './agent-workload.js';
import { pairedRounds, timeNsAsync } from './measure.js';
import {
  formatCount,
  formatRatio,
  machineInfo,
  type Report,
  renderMarkdown,
  renderText,
  type SummaryRow,
  writeSection,
} from './report.js';

const startedNs = process.hrtime.bigint();
const log = progressLog();
const smoke = process.argv.includes('--smoke');
const TURNS = smoke ? 100 : 2000;
const REPS = smoke ? 2 : 9;
const BATCH = 512;

const lookup = defineTool({
  name: 'lookup',
  description: 'Looks a key up.',
  parameters: { type: 'object', properties: { key: { type: 'string' } } },
  execute: async ({ key }) => `value of ${String(key)}`,
});

/** Each turn: a call asking for a tool, the tool, a call answering; usage on both calls. */
async function recordSession(turns: number): Promise<Session> {
  const session = Session.create({ id: 'bench-otel' });
  const model = scriptedModel(
    [
      {
        toolCalls: [{ name: 'lookup', args: { key: 'k' } }],
        usage: { inputTokens: 1200, outputTokens: 40, cacheReadTokens: 1000 },
      },
      { text: 'The value is v.', usage: { inputTokens: 1300, outputTokens: 12 } },
    ],
    { loop: true, provider: 'deepseek.chat', modelId: 'deepseek-chat' },
  );
  for (let turn = 0; turn < turns; turn++) {
    await runTurn({ session, model, tools: [lookup], system: 'Be exact.', input: `Q${turn}` });
  }
  return session;
}

/** An exporter that discards, asynchronously like a network one. */
class DiscardingExporter implements SpanExporter {
  export(_spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    setImmediate(() => done({ code: 0 }));
  }
  async shutdown(): Promise<void> {}
}

/** Collects ended spans; the floor's loop exports each full batch and waits, as ours does. */
class BatchCollector implements SpanProcessor {
  pending: ReadableSpan[] = [];
  onStart(): void {}
  onEnd(span: ReadableSpan): void {
    this.pending.push(span);
  }
  async forceFlush(): Promise<void> {}
  async shutdown(): Promise<void> {}
}

function exportBatch(exporter: SpanExporter, batch: ReadableSpan[]): Promise<void> {
  return new Promise((resolve, reject) => {
    exporter.export(batch, (result) => (result.code === 0 ? resolve() : reject(result.error)));
  });
}

/**
 * The floor: the spans our export built, made again through the SDK's tracer from their
 * recorded fields (so their attributes cost it nothing to compute), in the same order.
 */
async function floorExport(spans: readonly ReadableSpan[], exporter: SpanExporter): Promise<void> {
  const collector = new BatchCollector();
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'palimpsest' }),
    spanProcessors: [collector],
  });
  const tracer = provider.getTracer('palimpsest');
  for (const recorded of spans) {
    const parent: SpanContext | undefined = recorded.parentSpanContext;
    const ctx: Context =
      parent === undefined ? context.active() : trace.setSpanContext(context.active(), parent);
    const span: Span = tracer.startSpan(
      recorded.name,
      {
        kind: recorded.kind,
        attributes: recorded.attributes,
        startTime: recorded.startTime,
        links: recorded.links,
      },
      ctx,
    ) as Span;
    span.setStatus(recorded.status);
    span.end(recorded.endTime);
    if (collector.pending.length >= BATCH) {
      const batch = collector.pending;
      collector.pending = [];
      await exportBatch(exporter, batch);
    }
  }
  if (collector.pending.length > 0) await exportBatch(exporter, collector.pending);
  await provider.shutdown();
}

/** A loopback OTLP/HTTP receiver that reads each request whole and answers 200. */
async function receiver(): Promise<{
  endpoint: string;
  requests: () => number;
  close(): Promise<void>;
}> {
  let requests = 0;
  const server = createServer((request, response) => {
    request.on('data', () => {});
    request.on('end', () => {
      requests++;
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    requests: () => requests,
    close: () => new Promise((done) => server.close(() => done())),
  };
}

function rate(spans: number, ns: number): string {
  return `${formatCount(Math.round(spans / (ns / 1e9)))} spans/s`;
}

async function main(): Promise<void> {
  log(`recording a ${TURNS}-turn session with the loop`);
  const session = await recordSession(TURNS);
  const built = new InMemorySpanExporter();
  await exportSession(session, { exporter: built, batchSize: BATCH });
  const spans = built.getFinishedSpans();
  log(`${spans.length} spans per export`);

  const http = await receiver();
  try {
    log('1. to an OTLP/HTTP receiver on loopback');
    const exporter = otlpHttpExporter({ endpoint: http.endpoint });
    const overHttp = await pairedRounds(
      REPS,
      () =>
        timeNsAsync(
          async () => void (await exportSession(session, { exporter, batchSize: BATCH })),
        ),
      () => timeNsAsync(() => floorExport(spans, exporter)),
    );
    await exporter.shutdown();
    log('2. to an exporter that discards');
    const discard = new DiscardingExporter();
    const building = await pairedRounds(
      REPS,
      () =>
        timeNsAsync(
          async () => void (await exportSession(session, { exporter: discard, batchSize: BATCH })),
        ),
      () => timeNsAsync(() => floorExport(spans, discard)),
    );
    const n = spans.length;
    const summary: SummaryRow[] = [
      {
        id: '1',
        what: `export of a ${formatCount(TURNS)}-turn session (${formatCount(n)} spans) over OTLP/HTTP JSON to a loopback receiver vs the same spans made through the SDK tracer and exported the same way`,
        ours: rate(n, overHttp.ours),
        floor: rate(n, overHttp.floor),
        ratio: formatRatio(overHttp.ratio),
        goal: 'info',
        verdict: 'info',
      },
      {
        id: '2',
        what: 'the same to an exporter that discards: the cost of building the spans from the log',
        ours: rate(n, building.ours),
        floor: rate(n, building.floor),
        ratio: formatRatio(building.ratio),
        goal: 'info',
        verdict: 'info',
      },
    ];
    const report: Report = {
      section: 'otel',
      intro: [
        'Exporting a recorded session as OpenTelemetry spans (`exportSession`), in spans per',
        "second, beside the SDK's own floor measured in the same run: the same spans created",
        "through the SDK's tracer, with the same attributes, exported the same way.",
      ],
      runtime: 'about 2 minutes',
      reproduce: ['Ratios move by some percent between runs on a shared VM.'],
      machine: machineInfo(),
      summary,
      details: [],
      method: [
        `The session is recorded by palimpsest's loop on the scripted model: ${formatCount(TURNS)} turns, each a model call asking for a tool, the tool, and an answering call, with usage on both calls, so ${formatCount(n)} spans (an invoke_agent, two chat and an execute_tool span per turn). Ours: \`exportSession(session, {exporter, batchSize: ${BATCH}})\`, which reads the log once, builds each turn's spans when it ends, and exports each full batch before going on.`,
        `Floor: the spans ours built (taken once, untimed, from an \`InMemorySpanExporter\`) made again with \`BasicTracerProvider\`'s tracer, \`startSpan\` with the recorded name, kind, attributes, start time, links and parent context, \`setStatus\`, \`end\` at the recorded end time, collected by a span processor and exported in batches of ${BATCH}, each awaited, through the same exporter. It computes no attribute and reads no log, so it is a floor for what any export through the SDK costs.`,
        `Row 1 posts OTLP/HTTP JSON with the SDK's \`OTLPTraceExporter\` to a receiver in the same process that reads each request and answers 200 (${formatCount(http.requests())} requests in this run). Row 2 uses an exporter that calls back on the next turn of the event loop and keeps nothing. One warm-up round, then ${REPS} rounds alternating which side runs first, each after a forced GC; the ratio is the median of the rounds' ours / floor (time, so lower is better).`,
        'Source: `bench/otel.ts`.',
      ],
      notes: [],
      durationSeconds: Number(process.hrtime.bigint() - startedNs) / 1e9,
    };
    process.stdout.write(`\n${renderText(report)}\n`);
    if (!smoke) {
      writeSection(
        resolve(dirname(fileURLToPath(import.meta.url)), '../docs/benchmarks.md'),
        'otel',
        renderMarkdown(report),
      );
    }
  } finally {
    await http.close();
  }
}

await main();
