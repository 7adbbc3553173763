/**
 * The OTLP over HTTP exporter of the OpenTelemetry SDK, set up from an endpoint and headers as
 * a user gives them on a command line.
 */
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import type { SpanExporter } from '@opentelemetry/sdk-trace-base';
import { OtelExportError, printableEndpoint } from './errors.js';

/** Options of {@link otlpHttpExporter}. */
export interface OtlpHttpOptions {
  /**
   * The collector or backend: its base URL (`http://127.0.0.1:4318`, to which `/v1/traces` is
   * added) or the full traces URL (ending in `/v1/traces`, used as it is).
   */
  readonly endpoint: string;
  /** Request headers (an API key, a tenant). Never printed. */
  readonly headers?: Readonly<Record<string, string>>;
  /** How long one batch may take, in ms. Default 10,000. */
  readonly timeoutMillis?: number;
}

/**
 * The URL spans are posted to for an endpoint as {@link OtlpHttpOptions.endpoint} takes it.
 * Throws `OtelExportError` `INVALID_OPTIONS` for text that is not an http(s) URL, without
 * quoting it (it may hold a password).
 *
 * @example
 * ```ts
 * import { tracesUrl } from 'palimpsest/otel';
 *
 * const base = tracesUrl('https://collector.example/otlp');
 * console.log(base); // 'https://collector.example/otlp/v1/traces'
 * const full = tracesUrl('http://127.0.0.1:4318/v1/traces');
 * console.log(full); // 'http://127.0.0.1:4318/v1/traces'
 * ```
 */
export function tracesUrl(endpoint: string): string {
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    throw new OtelExportError(
      'INVALID_OPTIONS',
      'expected the endpoint as an http(s) URL, found text that is not a URL',
    );
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new OtelExportError(
      'INVALID_OPTIONS',
      `expected the endpoint as an http(s) URL, found the scheme '${url.protocol.slice(0, -1)}'`,
    );
  }
  if (!url.pathname.endsWith('/v1/traces'))
    url.pathname = `${url.pathname.replace(/\/+$/, '')}/v1/traces`;
  return url.toString();
}

/**
 * An OTLP/HTTP (JSON) trace exporter for `endpoint`. Credentials in the URL's user part become
 * a basic `Authorization` header, since the SDK would send them nowhere.
 *
 * @example
 * ```ts
 * import { otlpHttpExporter, tracesUrl } from 'palimpsest/otel';
 *
 * const url = tracesUrl('http://127.0.0.1:4318');
 * console.log(url); // 'http://127.0.0.1:4318/v1/traces'
 * const exporter = otlpHttpExporter({ endpoint: 'http://127.0.0.1:4318', headers: { 'x-tenant': 'a' } });
 * await exporter.shutdown();
 * ```
 */
export function otlpHttpExporter(options: OtlpHttpOptions): SpanExporter {
  const url = new URL(tracesUrl(options.endpoint));
  const headers: Record<string, string> = { ...options.headers };
  if (url.username !== '' || url.password !== '') {
    const user = decodeURIComponent(url.username);
    const password = decodeURIComponent(url.password);
    headers.authorization ??= `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
    url.username = '';
    url.password = '';
  }
  return new OTLPTraceExporter({
    url: url.toString(),
    headers,
    timeoutMillis: options.timeoutMillis ?? 10_000,
  });
}

/**
 * The traces URL of an endpoint as messages may print it: no user, password or query.
 *
 * @example
 * ```ts
 * import { endpointName } from 'palimpsest/otel';
 *
 * const printed = endpointName('https://user:secret@collector.example/?key=k');
 * console.log(printed); // 'https://collector.example/v1/traces'
 * ```
 */
export function endpointName(endpoint: string): string {
  return printableEndpoint(tracesUrlOrSelf(endpoint));
}

function tracesUrlOrSelf(endpoint: string): string {
  try {
    return tracesUrl(endpoint);
  } catch {
    return endpoint;
  }
}
