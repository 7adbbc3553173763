/**
 * Where span records become the SDK's `ReadableSpan`s and leave through a `SpanExporter`: the
 * redaction hook runs on each one first, and batches are exported one at a time, so at most one
 * batch and one turn's spans are held however long the session is. The SDK's own batch
 * processor drops spans when its queue is full; an after-the-fact export waits instead.
 */
import {
  type Attributes,
  type HrTime,
  type Link,
  SpanKind,
  SpanStatusCode,
} from '@opentelemetry/api';
import { ExportResultCode, TraceState } from '@opentelemetry/core';
import type { Resource } from '@opentelemetry/resources';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';
import { PALIMPSEST } from './attributes.js';
import { OtelExportError, scrubCredentials } from './errors.js';
import type { OtelAttributes, PalimpsestSpanKind, SpanRecord } from './span-model.js';

/** What a redaction hook is told about the span whose attributes it is given. */
export interface RedactContext {
  /** The kind of span: `invoke_agent`, `chat`, `execute_tool` or `compaction`. */
  readonly kind: PalimpsestSpanKind;
  /** The span's name (`chat deepseek-chat`, `execute_tool read_file`...). */
  readonly name: string;
  readonly sessionId: string;
  /** The seq of the event the span's ids derive from. */
  readonly seq: number;
}

/**
 * Called on every span before it leaves the process: returns the attributes to export (the same
 * object, a rewritten copy, one with keys dropped), or `null` to drop the whole span. A hook
 * that throws stops the export with `REDACT_FAILED`: nothing it did not see leaves.
 */
export type RedactHook = (
  attributes: OtelAttributes,
  context: RedactContext,
) => OtelAttributes | null;

/** The SDK objects every span shares. */
export interface SinkTarget {
  readonly exporter: SpanExporter;
  readonly resource: Resource;
  readonly scope: { readonly name: string; readonly version?: string };
  readonly redact: RedactHook | undefined;
  readonly batchSize: number;
  /** Named in `EXPORT_FAILED` messages (never with credentials). */
  readonly endpoint: string | undefined;
}

/** Collects spans into batches and exports each batch before accepting more. */
export class SpanSink {
  private pending: ReadableSpan[] = [];
  /** Spans handed to the exporter. */
  exported = 0;
  /** Spans the redaction hook dropped. */
  dropped = 0;
  /** The most span records held at once, here and in the turn that produced them. */
  peakRetained = 0;

  constructor(private readonly target: SinkTarget) {}

  /** Adds one turn's spans; exports a batch whenever one is full. */
  async add(records: readonly SpanRecord[], sessionId: string): Promise<void> {
    this.peakRetained = Math.max(this.peakRetained, this.pending.length + records.length);
    for (const record of records) {
      const span = this.readable(record, sessionId);
      if (span === undefined) continue;
      this.pending.push(span);
      if (this.pending.length >= this.target.batchSize) await this.flush();
    }
  }

  /** Exports what is pending. */
  async flush(): Promise<void> {
    if (this.pending.length === 0) return;
    const batch = this.pending;
    this.pending = [];
    await exportBatch(this.target, batch);
    this.exported += batch.length;
  }

  private readable(record: SpanRecord, sessionId: string): ReadableSpan | undefined {
    const attributes = this.redacted(record, sessionId);
    if (attributes === null) {
      this.dropped++;
      return undefined;
    }
    return toReadable(record, attributes, this.target);
  }

  private redacted(record: SpanRecord, sessionId: string): OtelAttributes | null {
    const hook = this.target.redact;
    if (hook === undefined) return record.attributes;
    let out: unknown;
    try {
      out = hook(record.attributes, {
        kind: record.kind,
        name: record.name,
        sessionId,
        seq: record.seq,
      });
    } catch (error) {
      throw new OtelExportError(
        'REDACT_FAILED',
        `the redaction hook threw on the ${record.kind} span of event #${record.seq}; nothing of that span was exported`,
        { cause: error },
      );
    }
    if (out === null) return null;
    if (typeof out !== 'object' || out === undefined || Array.isArray(out)) {
      throw new OtelExportError(
        'REDACT_FAILED',
        `expected the redaction hook to return attributes or null for the ${record.kind} span of event #${record.seq}, found ${out === undefined ? 'undefined' : Array.isArray(out) ? 'an array' : typeof out}`,
      );
    }
    return out as OtelAttributes;
  }
}

function toReadable(
  record: SpanRecord,
  attributes: OtelAttributes,
  target: SinkTarget,
): ReadableSpan {
  const context = { traceId: record.traceId, spanId: record.spanId, traceFlags: 1 };
  const startTime = hrTime(record.startMs);
  const endTime = hrTime(Math.max(record.endMs, record.startMs));
  const links: Link[] = record.links.map((link) => ({
    // An empty trace state is sent as "" rather than left out: some receivers require the field.
    context: { traceId: link.traceId, spanId: link.spanId, traceFlags: 1, traceState: EMPTY_STATE },
    attributes: { [PALIMPSEST.linkType]: link.type },
  }));
  return {
    name: record.name,
    kind: record.client ? SpanKind.CLIENT : SpanKind.INTERNAL,
    spanContext: () => context,
    ...(record.parentSpanId === undefined
      ? {}
      : {
          parentSpanContext: {
            traceId: record.traceId,
            spanId: record.parentSpanId,
            traceFlags: 1,
          },
        }),
    startTime,
    endTime,
    status:
      record.error === undefined
        ? { code: SpanStatusCode.UNSET }
        : { code: SpanStatusCode.ERROR, message: record.error },
    // The SDK's attribute type is mutable; the record's is frozen by convention only.
    attributes: { ...attributes } as Attributes,
    links,
    events: [],
    duration: hrTime(Math.max(record.endMs - record.startMs, 0)),
    ended: true,
    resource: target.resource,
    instrumentationScope: target.scope,
    droppedAttributesCount: 0,
    droppedEventsCount: 0,
    droppedLinksCount: 0,
  };
}

const EMPTY_STATE = new TraceState();

/** Epoch ms as OpenTelemetry's `[seconds, nanoseconds]`. */
function hrTime(ms: number): HrTime {
  const seconds = Math.floor(ms / 1000);
  return [seconds, Math.round((ms - seconds * 1000) * 1e6)];
}

function exportBatch(target: SinkTarget, batch: ReadableSpan[]): Promise<void> {
  return new Promise((resolve, reject) => {
    target.exporter.export(batch, (result) => {
      if (result.code === ExportResultCode.SUCCESS) {
        resolve();
        return;
      }
      const where = target.endpoint === undefined ? '' : ` to ${target.endpoint}`;
      const cause =
        result.error === undefined
          ? 'the exporter reported a failure'
          : scrubCredentials(result.error.message);
      reject(
        new OtelExportError(
          'EXPORT_FAILED',
          `expected the exporter to deliver ${batch.length} span(s)${where}, found a failure: ${cause}`,
          { cause: result.error },
        ),
      );
    });
  });
}
