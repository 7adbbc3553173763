/**
 * Exporting sessions as OpenTelemetry traces: after the fact (a session read once, its spans
 * leaving batch by batch) and live (a subscriber that exports each turn when it ends).
 */
import { resourceFromAttributes } from '@opentelemetry/resources';
import type { SpanExporter } from '@opentelemetry/sdk-trace-base';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import type { Session, SessionEvent, SessionHeader } from '../../core/index.js';
import { OtelExportError } from './errors.js';
import { type SpanAddress, spanIdOf, traceIdOf } from './ids.js';
import { type RedactHook, SpanSink } from './sink.js';
import { SpanModel } from './span-model.js';

/** Options of {@link exportSession} and {@link exportLive}. */
export interface OtelExportOptions {
  /** Where spans go: an `OTLPTraceExporter`, an `InMemorySpanExporter`, any SDK exporter. */
  readonly exporter: SpanExporter;
  /**
   * Add message content: `gen_ai.input.messages`, `gen_ai.output.messages`,
   * `gen_ai.system_instructions`, tool arguments and results, compaction summaries. Off by
   * default: without it no text a user, a model or a tool wrote leaves the process.
   */
  readonly content?: boolean;
  /** Rewrites or drops any span's attributes before it leaves (see {@link RedactHook}). */
  readonly redact?: RedactHook;
  /** `gen_ai.agent.name`, and the `invoke_agent {name}` span name. */
  readonly agentName?: string;
  /** `service.name` of the resource. Default `palimpsest`. */
  readonly serviceName?: string;
  /** The instrumentation scope's name. Default `palimpsest`. */
  readonly scopeName?: string;
  /**
   * The cost in US dollars of the model call recorded at `seq` (its `assistant/message` or
   * `compaction/end`), written as `palimpsest.cost.usd` on its span and summed on its turn's.
   */
  readonly cost?: (seq: number) => number | undefined;
  /**
   * For a subagent's session: the parent's `execute_tool` span its turns hang under (see
   * {@link locateSubagentCall}). Without it a subagent's turns are traces of their own that
   * name the parent in attributes.
   */
  readonly parentCall?: SpanAddress;
  /** Spans per exported batch. Default 512. */
  readonly batchSize?: number;
  /** The endpoint, for error messages only (printed without credentials). */
  readonly endpoint?: string;
}

/** A session as {@link exportSession} reads it: a `Session`, or what a store's `load` returns. */
export interface SessionSource {
  readonly header: SessionHeader;
  readonly events: Iterable<SessionEvent>;
}

/** What an export sent. */
export interface OtelExportReport {
  readonly session: string;
  /** Spans handed to the exporter. */
  readonly spans: number;
  /** Turns exported (each one trace, or part of the parent's for a subagent). */
  readonly turns: number;
  /** Turns begun but not ended when the events ran out: not exported. */
  readonly openTurnsSkipped: number;
  /** Spans the redaction hook dropped. */
  readonly droppedSpans: number;
  /** The most spans held at once: bounded by the batch size and the largest turn. */
  readonly peakRetainedSpans: number;
}

/**
 * Exports a session as OpenTelemetry traces following the GenAI semantic conventions: one
 * `invoke_agent` span per turn, under it a `chat {model}` span per model call, an
 * `execute_tool {name}` span per tool execution and a span per compaction. Ids derive from the
 * session id and the events' seqs, so exporting again sends the same traces. The events are
 * read once, and a turn's spans leave in batches when it ends: memory stays bounded by one
 * batch and one turn. Resolves once every batch was delivered and the exporter flushed; rejects
 * with an {@link OtelExportError}.
 *
 * @example
 * ```ts
 * import { Session } from 'palimpsest';
 * import { exportSession } from 'palimpsest/otel';
 * import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
 *
 * const session = Session.create({ id: 'otel-example' });
 * session.append('turn/start', { turn: 1 });
 * session.append('step/start', { turn: 1, step: 1 });
 * session.append(
 *   'assistant/message',
 *   {
 *     turn: 1,
 *     step: 1,
 *     finishReason: 'stop',
 *     usage: { inputTokens: 12, outputTokens: 3 },
 *     message: {
 *       id: 'a1',
 *       role: 'assistant',
 *       content: [{ type: 'text', text: 'Hello.' }],
 *       source: { kind: 'model', provider: 'deepseek.chat', model: 'deepseek-chat' },
 *     },
 *   },
 *   { surfaceOp: 'append', sourceEventSeqs: [] },
 * );
 * session.append('step/end', { turn: 1, step: 1 });
 * session.append('turn/end', { turn: 1, reason: { kind: 'completed' } });
 *
 * const exporter = new InMemorySpanExporter();
 * const report = await exportSession(session, { exporter });
 * console.log(report.spans); // 2
 * const chat = exporter.getFinishedSpans().find((span) => span.name === 'chat deepseek-chat');
 * console.log(chat?.attributes['gen_ai.usage.input_tokens']); // 12
 * console.log(chat?.attributes['gen_ai.output.messages']); // undefined
 * ```
 */
export async function exportSession(
  source: SessionSource,
  options: OtelExportOptions,
): Promise<OtelExportReport> {
  const { model, sink } = pipeline(source.header, options);
  const id = source.header.id;
  let turns = 0;
  for (const event of source.events) {
    const spans = model.push(event);
    if (spans.length === 0) continue;
    if (event.type === 'turn/end') turns++;
    await sink.add(spans, id);
  }
  model.finish();
  await sink.flush();
  await options.exporter.forceFlush?.();
  return {
    session: id,
    spans: sink.exported,
    turns,
    openTurnsSkipped: model.openTurnsSkipped,
    droppedSpans: sink.dropped,
    peakRetainedSpans: sink.peakRetained,
  };
}

/** A live export started by {@link exportLive}. */
export interface LiveOtelExport {
  /**
   * Waits until every turn that ended so far was delivered; rejects with the first export
   * failure since the previous call.
   */
  flush(): Promise<OtelExportReport>;
  /** Stops listening, then flushes. */
  close(): Promise<OtelExportReport>;
}

/**
 * Exports a live session's turns as they end: a subscriber that emits a turn's spans when its
 * `turn/end` commits (the same spans, with the same ids, an after-the-fact export of the
 * session sends). Events already in the session when it starts are read for their state; their
 * turns are not exported again, except one still open, which is exported when it ends.
 * Failures never reach the session's appends: they are reported by `flush`, and to `onError`.
 *
 * @example
 * ```ts
 * import { Session } from 'palimpsest';
 * import { exportLive } from 'palimpsest/otel';
 * import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
 *
 * const session = Session.create({ id: 'otel-live-example' });
 * const exporter = new InMemorySpanExporter();
 * const live = exportLive(session, { exporter, agentName: 'helper' });
 * session.append('turn/start', { turn: 1 });
 * session.append('turn/end', { turn: 1, reason: { kind: 'completed' } });
 * const report = await live.close();
 * console.log(report.turns); // 1
 * console.log(exporter.getFinishedSpans()[0]?.name); // 'invoke_agent helper'
 * ```
 */
export function exportLive(
  session: Session,
  options: OtelExportOptions & { readonly onError?: (error: unknown) => void },
): LiveOtelExport {
  const { model, sink } = pipeline(session.header, options);
  const id = session.id;
  for (const event of session.events) model.push(event);
  let turns = 0;
  let chain: Promise<void> = Promise.resolve();
  let failure: unknown;
  const unsubscribe = session.subscribe((event) => {
    const spans = model.push(event);
    if (spans.length === 0) return;
    if (event.type === 'turn/end') turns++;
    chain = chain
      .then(async () => {
        await sink.add(spans, id);
        await sink.flush();
      })
      .catch((error: unknown) => {
        failure ??= error;
        options.onError?.(error);
      });
  });
  const flush = async (): Promise<OtelExportReport> => {
    await chain;
    await options.exporter.forceFlush?.();
    if (failure !== undefined) {
      const error = failure;
      failure = undefined;
      throw error;
    }
    return {
      session: id,
      spans: sink.exported,
      turns,
      openTurnsSkipped: 0,
      droppedSpans: sink.dropped,
      peakRetainedSpans: sink.peakRetained,
    };
  };
  return {
    flush,
    close: () => {
      unsubscribe();
      return flush();
    },
  };
}

/**
 * Where a subagent's turns hang in its parent's trace: the parent's `execute_tool` span for the
 * call that ran it (`toolCallId`, from the child's `metadata.subagentOf`). Give the parent's
 * own `parentCall` when the parent is a subagent too. `undefined` when the parent holds no such
 * call.
 *
 * @example
 * ```ts
 * import { Session } from 'palimpsest';
 * import { locateSubagentCall } from 'palimpsest/otel';
 *
 * const parent = Session.create({ id: 'parent' });
 * parent.append('turn/start', { turn: 1 });
 * parent.append('step/start', { turn: 1, step: 1 });
 * parent.append('tool/call', { turn: 1, step: 1, callId: 'c1', name: 'task', arguments: '{}' });
 * const call = locateSubagentCall(parent, 'c1');
 * console.log(call?.spanId.length); // 16
 * console.log(locateSubagentCall(parent, 'c2')); // undefined
 * ```
 */
export function locateSubagentCall(
  parent: SessionSource,
  toolCallId: string,
  parentCall?: SpanAddress,
): SpanAddress | undefined {
  const id = parent.header.id;
  let turnSeq: number | undefined;
  for (const event of parent.events) {
    if (event.type === 'turn/start') turnSeq = event.seq;
    else if (event.type === 'tool/call' && event.data.callId === toolCallId) {
      if (turnSeq === undefined) return undefined;
      return {
        traceId: parentCall?.traceId ?? traceIdOf(id, turnSeq),
        spanId: spanIdOf(id, event.seq),
      };
    }
  }
  return undefined;
}

function pipeline(
  header: SessionHeader,
  options: OtelExportOptions,
): { model: SpanModel; sink: SpanSink } {
  const batchSize = options.batchSize ?? 512;
  if (!Number.isSafeInteger(batchSize) || batchSize < 1) {
    throw new OtelExportError(
      'INVALID_OPTIONS',
      `expected batchSize as a positive integer, found ${String(batchSize)}`,
    );
  }
  const model = new SpanModel({
    header,
    content: options.content === true,
    agentName: options.agentName,
    cost: options.cost,
    parentCall: options.parentCall,
  });
  const sink = new SpanSink({
    exporter: options.exporter,
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: options.serviceName ?? 'palimpsest' }),
    scope: { name: options.scopeName ?? 'palimpsest' },
    redact: options.redact,
    batchSize,
    endpoint: options.endpoint,
  });
  return { model, sink };
}
