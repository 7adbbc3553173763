/**
 * palimpsest/otel — sessions as OpenTelemetry traces, following the GenAI semantic conventions:
 * an `invoke_agent` span per turn, a `chat {model}` span per model call, an
 * `execute_tool {name}` span per tool execution, a span per compaction; exported after the fact
 * or live, through the OpenTelemetry JS SDK's exporters. Message content leaves only when asked
 * for, and a redaction hook sees every span first. See docs/observability.md.
 *
 * @packageDocumentation
 */
export { GEN_AI, OPERATION, PALIMPSEST } from './attributes.js';
export { costBySeq } from './cost.js';
export { OtelExportError, type OtelExportErrorCode } from './errors.js';
export {
  exportLive,
  exportSession,
  type LiveOtelExport,
  locateSubagentCall,
  type OtelExportOptions,
  type OtelExportReport,
  type SessionSource,
} from './export.js';
export { type SpanAddress, spanIdOf, traceIdOf } from './ids.js';
export { endpointName, type OtlpHttpOptions, otlpHttpExporter, tracesUrl } from './otlp.js';
export type { RedactContext, RedactHook } from './sink.js';
export type { OtelAttributes, OtelAttributeValue, PalimpsestSpanKind } from './span-model.js';
export { exportStoredSessions, type StoredExportOptions } from './stored.js';
