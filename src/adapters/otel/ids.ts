/**
 * Trace and span ids derived from a session id and an event seq, so exporting the same session
 * twice (or live and then after the fact) names every span the same way and a backend sees one
 * trace, not two.
 */
import { createHash } from 'node:crypto';

/** A trace and a span, as OpenTelemetry names them (lowercase hex). */
export interface SpanAddress {
  /** 32 hex digits. */
  readonly traceId: string;
  /** 16 hex digits. */
  readonly spanId: string;
}

/**
 * The trace id of the turn (or stand-alone compaction) that began at `seq`. Hashing, not
 * concatenating, keeps ids fixed-length for any session id and spreads them the way backends
 * that sample or shard by trace id expect.
 *
 * @example
 * ```ts
 * import { spanIdOf, traceIdOf } from 'palimpsest/otel';
 *
 * // The trace of the turn whose turn/start is event #0 of session 'demo', found in a backend
 * // without exporting anything.
 * console.log(traceIdOf('demo', 0).length); // 32
 * console.log(spanIdOf('demo', 0) === spanIdOf('demo', 0)); // true
 * console.log(spanIdOf('demo', 0) === spanIdOf('demo', 1)); // false
 * ```
 */
export function traceIdOf(session: string, seq: number): string {
  return nonZero(digest('trace', session, seq).slice(0, 32));
}

/**
 * The span id of the span keyed by event `seq` of `session`: the turn's `turn/start`, a call's
 * `assistant/message`, a tool's `tool/call`, a compaction's `compaction/start` (see
 * {@link traceIdOf} for an example).
 */
export function spanIdOf(session: string, seq: number): string {
  return nonZero(digest('span', session, seq).slice(0, 16));
}

function digest(kind: string, session: string, seq: number): string {
  // NUL cannot occur in a seq and separates fields so `a`+`b1` and `ab`+`1` differ.
  return createHash('sha256').update(`${kind}\0${session}\0${seq}`).digest('hex');
}

/** An all-zero id is invalid in OpenTelemetry; one digit flipped keeps it derived. */
function nonZero(hex: string): string {
  return /^0+$/.test(hex) ? `${hex.slice(0, -1)}1` : hex;
}
