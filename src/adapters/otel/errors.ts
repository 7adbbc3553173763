/**
 * Typed errors of the OpenTelemetry export.
 */
import { PalimpsestError } from '../../core/index.js';

/**
 * Stable codes of {@link OtelExportError}:
 * - `EXPORT_FAILED`: the exporter refused or could not deliver a batch (an unreachable endpoint,
 *   an HTTP error status). The message names the endpoint, never its credentials.
 * - `INVALID_OPTIONS`: an option the export cannot use (a batch size that is not a positive
 *   integer, an endpoint that is not an http(s) URL, a header that is not `name=value`).
 * - `REDACT_FAILED`: the redaction hook threw or returned something that is not attributes; the
 *   span was not exported (failing closed: nothing unredacted leaves).
 */
export type OtelExportErrorCode = 'EXPORT_FAILED' | 'INVALID_OPTIONS' | 'REDACT_FAILED';

/** An export that could not be done as asked, with a stable `code`. */
export class OtelExportError extends PalimpsestError {
  static override readonly kind: string = 'OtelExportError';
  declare readonly code: OtelExportErrorCode;

  constructor(code: OtelExportErrorCode, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
  }
}

/**
 * An endpoint as it may be printed: scheme, host, port and path, never the user, password or
 * query (which may hold an API key).
 */
export function printableEndpoint(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}${parsed.pathname}`;
  } catch {
    return '(an endpoint that is not a URL)';
  }
}

/** Removes `user:password@` from any URL a lower layer's message may quote. */
export function scrubCredentials(text: string): string {
  return text.replace(/\/\/[^/\s@]*@/g, '//');
}
