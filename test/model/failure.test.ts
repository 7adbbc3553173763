import { APICallError } from '@ai-sdk/provider';
import { describe, expect, it } from 'vitest';
import { backoffMs, classifyFailure } from '../../src/model/failure.js';

function apiError(
  status: number,
  headers: Record<string, string> = {},
  data?: unknown,
): APICallError {
  return new APICallError({
    message: `HTTP ${status}`,
    url: 'http://x',
    requestBodyValues: {},
    statusCode: status,
    responseHeaders: headers,
    isRetryable: status === 429 || status >= 500,
    data,
  });
}

describe('classifying a failed model call', () => {
  it('takes status, request id, error type and retry-after from an HTTP error', () => {
    const failure = classifyFailure(
      apiError(
        429,
        { 'x-request-id': 'req_1', 'retry-after': '3' },
        { error: { type: 'rate_limit_error' } },
      ),
    );
    expect(failure).toEqual({
      failure: { message: 'HTTP 429', status: 429, requestId: 'req_1', code: 'rate_limit_error' },
      retryable: true,
      retryAfterMs: 3000,
    });
  });

  it('prefers retry-after-ms and reads Anthropic’s request-id header', () => {
    const failure = classifyFailure(
      apiError(529, { 'request-id': 'req_a', 'retry-after-ms': '250' }),
    );
    expect(failure).toMatchObject({ failure: { requestId: 'req_a' }, retryAfterMs: 250 });
  });

  it('does not retry a 400', () => {
    expect(classifyFailure(apiError(400)).retryable).toBe(false);
  });

  it('retries network errors and malformed chunks, not programming errors', () => {
    const reset = Object.assign(new TypeError('terminated'), { cause: { code: 'ECONNRESET' } });
    expect(classifyFailure(reset)).toMatchObject({ retryable: true, failure: { code: 'NETWORK' } });
    const parse = Object.assign(new Error('bad json'), { name: 'AI_JSONParseError' });
    expect(classifyFailure(parse)).toMatchObject({
      retryable: true,
      failure: { code: 'MALFORMED_STREAM' },
    });
    expect(classifyFailure(new RangeError('oops')).retryable).toBe(false);
  });

  it('reads an in-stream error object and retries only the transient types', () => {
    expect(classifyFailure({ type: 'overloaded_error', message: 'Overloaded' })).toEqual({
      failure: { message: 'Overloaded', code: 'overloaded_error' },
      retryable: true,
    });
    expect(classifyFailure({ error: { message: 'nope', type: 'invalid_request_error' } })).toEqual({
      failure: { message: 'nope', code: 'invalid_request_error' },
      retryable: false,
    });
  });

  it('clips a huge provider message', () => {
    const failure = classifyFailure(new Error('x'.repeat(10_000)));
    expect(failure.failure.message.length).toBeLessThanOrEqual(2001);
  });
});

describe('the delay before a retry', () => {
  const plain = { failure: { message: 'x' }, retryable: true };
  const mid = (): number => 0.5;

  it('doubles from the initial delay', () => {
    expect([1, 2, 3].map((attempt) => backoffMs(attempt, 100, 60_000, plain, mid))).toEqual([
      100, 200, 400,
    ]);
  });

  it('waits at least what retry-after asks, and never more than the cap', () => {
    expect(backoffMs(1, 100, 60_000, { ...plain, retryAfterMs: 5000 }, mid)).toBe(5000);
    expect(backoffMs(1, 100, 2000, { ...plain, retryAfterMs: 5000 }, mid)).toBe(2000);
    expect(backoffMs(20, 100, 30_000, plain, mid)).toBe(30_000);
  });

  it('jitters within ±20%', () => {
    expect(backoffMs(1, 1000, 60_000, plain, () => 0)).toBe(800);
    expect(backoffMs(1, 1000, 60_000, plain, () => 1)).toBe(1200);
  });
});
