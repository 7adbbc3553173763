/**
 * What went wrong with a model call, in the terms the log records (`ProviderFailure`), and
 * whether trying again can help. Errors arrive three ways: thrown by `doStream` (HTTP errors as
 * `APICallError`), thrown while reading the stream (a connection reset), or as an `error`
 * stream part (a provider's in-stream error event, or a chunk the client could not parse).
 */
import { APICallError } from '@ai-sdk/provider';
import type { ProviderFailure } from '../core/index.js';
import { knownSecrets, redactSecrets } from './redact.js';

/** A classified failure of one attempt. */
export interface AttemptFailure {
  readonly failure: ProviderFailure;
  readonly retryable: boolean;
  /** The wait the provider asked for (`retry-after-ms` / `retry-after`), if any. */
  readonly retryAfterMs?: number;
}

const REQUEST_ID_HEADERS = ['x-request-id', 'request-id', 'x-amzn-requestid', 'cf-ray'];
const RETRYABLE_TYPES = new Set([
  'overloaded_error',
  'rate_limit_error',
  'api_error',
  'server_error',
  'internal_server_error',
  'timeout_error',
  'service_unavailable',
]);
const NETWORK_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'EPIPE',
  'ETIMEDOUT',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
]);
const MAX_MESSAGE = 2000;

/**
 * Classifies an error thrown by or streamed from a model call. The message is redacted
 * ({@link redactSecrets}: the provider key variables, `secrets`, and credential shapes), since
 * error bodies can echo the request's credentials and the failure is stored in the log.
 */
export function classifyFailure(
  error: unknown,
  secrets: readonly string[] = knownSecrets(),
): AttemptFailure {
  const classified = classify(error);
  const { failure } = classified;
  const message = redactSecrets(failure.message, secrets);
  return message === failure.message
    ? classified
    : { ...classified, failure: { ...failure, message } };
}

function classify(error: unknown): AttemptFailure {
  if (APICallError.isInstance(error)) {
    const headers = error.responseHeaders ?? {};
    const requestId = REQUEST_ID_HEADERS.map((name) => headers[name]).find(
      (value) => typeof value === 'string' && value !== '',
    );
    const code = errorType(error.data);
    const providerCode = specificCode(error.data, code);
    const retryAfterMs = retryAfter(headers);
    return {
      failure: {
        message: clip(error.message),
        ...(error.statusCode === undefined ? {} : { status: error.statusCode }),
        ...(code === undefined ? {} : { code }),
        ...(providerCode === undefined ? {} : { providerCode }),
        ...(requestId === undefined ? {} : { requestId }),
      },
      retryable: error.isRetryable,
      ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
    };
  }
  if (isNetworkError(error)) {
    return {
      failure: { message: clip(`network error: ${describe(error)}`), code: 'NETWORK' },
      retryable: true,
    };
  }
  if (error instanceof Error) {
    // Parse and validation failures of a streamed chunk: a malformed stream, worth one more try.
    const malformed = error.name.includes('JSONParse') || error.name.includes('TypeValidation');
    return {
      failure: {
        message: clip(error.message || error.name),
        code: malformed ? 'MALFORMED_STREAM' : error.name,
      },
      retryable: malformed,
    };
  }
  // An in-stream error event, usually the provider's JSON error object.
  const type = errorType(error);
  const providerCode = specificCode(error, type);
  return {
    failure: {
      message: clip(describe(error)),
      ...(type === undefined ? {} : { code: type }),
      ...(providerCode === undefined ? {} : { providerCode }),
    },
    retryable: type !== undefined && RETRYABLE_TYPES.has(type),
  };
}

/**
 * The delay before retry number `attempt` (1-based): exponential from `initialDelayMs`,
 * jittered ±20%, at least what the provider asked for (`retry-after`), at most `maxDelayMs`.
 */
export function backoffMs(
  attempt: number,
  initialDelayMs: number,
  maxDelayMs: number,
  failure: AttemptFailure,
  random: () => number = Math.random,
): number {
  const exponential = initialDelayMs * 2 ** (attempt - 1);
  const jittered = Math.round(exponential * (0.8 + 0.4 * random()));
  return Math.min(Math.max(failure.retryAfterMs ?? 0, jittered), maxDelayMs);
}

function isNetworkError(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const codes = [codeOf(error), codeOf(error.cause)];
  if (codes.some((code) => code !== undefined && NETWORK_CODES.has(code))) return true;
  // undici reports a body cut mid-stream as TypeError('terminated') and refused fetches as
  // TypeError('fetch failed').
  return error.name === 'TypeError' && /^(terminated|fetch failed)$/.test(error.message);
}

function codeOf(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const code = (value as { code?: unknown }).code;
  return typeof code === 'string' ? code : undefined;
}

/** The provider's error type: `{error: {type|code}}` (OpenAI, Anthropic bodies) or `{type}`. */
function errorType(data: unknown): string | undefined {
  if (typeof data !== 'object' || data === null) return undefined;
  const record = data as { error?: unknown; type?: unknown; code?: unknown };
  if (typeof record.error === 'object' && record.error !== null) {
    const inner = record.error as { type?: unknown; code?: unknown };
    if (typeof inner.type === 'string') return inner.type;
    if (typeof inner.code === 'string') return inner.code;
  }
  if (typeof record.type === 'string' && record.type !== 'error') return record.type;
  if (typeof record.code === 'string') return record.code;
  return undefined;
}

/**
 * The provider's specific code beside its type (`{error: {type, code}}`, OpenAI's
 * `context_length_exceeded`), when it differs from the code already kept.
 */
function specificCode(data: unknown, kept: string | undefined): string | undefined {
  if (typeof data !== 'object' || data === null) return undefined;
  const record = data as { error?: unknown; code?: unknown };
  const inner =
    typeof record.error === 'object' && record.error !== null
      ? (record.error as { code?: unknown }).code
      : record.code;
  const code = typeof inner === 'number' ? String(inner) : inner;
  return typeof code === 'string' && code !== '' && code !== kept ? code : undefined;
}

function retryAfter(headers: Record<string, string | undefined>): number | undefined {
  const ms = Number(headers['retry-after-ms']);
  if (Number.isFinite(ms) && ms >= 0 && headers['retry-after-ms'] !== undefined) return ms;
  const value = headers['retry-after'];
  if (value === undefined) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

function describe(error: unknown): string {
  if (error instanceof Error) {
    const cause = error.cause instanceof Error ? ` (${error.cause.message})` : '';
    return `${error.message || error.name}${cause}`;
  }
  if (typeof error === 'object' && error !== null) {
    const record = error as { message?: unknown; error?: { message?: unknown } };
    if (typeof record.message === 'string') return record.message;
    if (typeof record.error?.message === 'string') return record.error.message;
    try {
      return JSON.stringify(error);
    } catch {
      return String(error);
    }
  }
  return String(error);
}

function clip(message: string): string {
  return message.length > MAX_MESSAGE ? `${message.slice(0, MAX_MESSAGE)}…` : message;
}
