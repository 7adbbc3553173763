/**
 * What the log keeps from the wire (issue 12): every usage field and the raw finish reason the
 * real provider clients report, the provider's specific error code, and never a credential an
 * error body echoes.
 */
import { createAnthropic } from '@ai-sdk/anthropic';
import { createDeepSeek } from '@ai-sdk/deepseek';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import type { LanguageModelV3 } from '@ai-sdk/provider';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { runTurn } from '../../src/agent/index.js';
import { type AssistantMessageData, type RequestRetryData, Session } from '../../src/core/index.js';
import { dataOf, expectValidLog } from './helpers.js';
import { useWireServer } from './wire-server.js';

const server = useWireServer();

afterEach(() => {
  vi.unstubAllEnvs();
});

const asModel = (model: unknown): LanguageModelV3 => model as LanguageModelV3;
const compatible = (apiKey = 'test-key') =>
  asModel(
    createOpenAICompatible({ name: 'local', baseURL: server.baseURL, apiKey, includeUsage: true })(
      'qwen3-coder',
    ),
  );

describe('usage and finish reasons are whole', () => {
  it('keeps DeepSeek’s cache, no-cache, text and reasoning counts, the raw usage and finish reason', async () => {
    const session = Session.create();
    server.enqueue('deepseek/reasoning-then-text.http');
    const model = asModel(
      createDeepSeek({ baseURL: server.baseURL, apiKey: 'test-key' })('deepseek-reasoner'),
    );
    const result = await runTurn({ session, model, input: 'count?' });
    const [data] = dataOf<AssistantMessageData>(session, 'assistant/message');
    expect(data?.rawFinishReason).toBe('stop');
    expect(data?.usage).toMatchObject({
      inputTokens: 64,
      outputTokens: 29,
      totalTokens: 93,
      reasoningTokens: 21,
      textTokens: 8,
      cachedInputTokens: 0,
      noCacheTokens: 64,
    });
    expect(data?.usage?.raw).toMatchObject({
      prompt_cache_hit_tokens: 0,
      prompt_cache_miss_tokens: 64,
    });
    expect(result.usage).toMatchObject({ textTokens: 8, noCacheTokens: 64 });
    expectValidLog(session);
  });

  it('keeps Anthropic’s cache writes and reads and its raw stop reason', async () => {
    const session = Session.create();
    server.enqueue('anthropic/text.http');
    const model = asModel(
      createAnthropic({ baseURL: server.baseURL, apiKey: 'test-key' })('claude-sonnet-4-5'),
    );
    await runTurn({ session, model, input: 'hi' });
    const [data] = dataOf<AssistantMessageData>(session, 'assistant/message');
    expect(data?.rawFinishReason).toBe('end_turn');
    expect(data?.usage).toMatchObject({ cachedInputTokens: 12, cacheWriteTokens: 0 });
    expect(data?.usage?.raw).toMatchObject({ cache_read_input_tokens: 12 });
  });

  it('keeps the provider’s specific error code beside its type', async () => {
    const session = Session.create();
    server.enqueue('openai-compatible/context-length-400.http');
    const result = await runTurn({ session, model: compatible(), input: 'a very long prompt' });
    // Without an onContextOverflow handler the turn ends as an overflow nothing could fix.
    expect(result.reason).toMatchObject({
      kind: 'context-overflow',
      compacted: false,
      error: {
        status: 400,
        code: 'invalid_request_error',
        providerCode: 'context_length_exceeded',
      },
    });
    expectValidLog(session);
  });
});

describe('retries on the wire', () => {
  it('records the wait the provider asked for beside the wait the loop chose', async () => {
    const session = Session.create();
    server.enqueue('openai-compatible/rate-limited-429.http', 'openai-compatible/text.http');
    await runTurn({
      session,
      model: compatible(),
      input: 'hi',
      retryDelayMs: 1,
      maxRetryDelayMs: 40,
    });
    const [retry] = dataOf<RequestRetryData>(session, 'request/retry');
    expect(retry).toMatchObject({ attempt: 1, delayMs: 40, retryAfterMs: 7000 });
  });
});

describe('secrets never reach the log', () => {
  it('redacts a key, bearer token and x-api-key header an error body echoes', async () => {
    const key = 'wire-secret-key-7f3a9c2e';
    vi.stubEnv('OPENAI_API_KEY', key);
    const session = Session.create();
    server.enqueue('openai-compatible/unauthorized-echo-401.http');
    const result = await runTurn({ session, model: compatible(key), input: 'hi' });
    expect(result.reason.kind).toBe('error');
    const log = JSON.stringify(session.events);
    expect(log).not.toContain(key);
    expect(log).not.toContain('sk-proj-abcdefghijklmnop0123456789');
    expect(log).toContain('[redacted]');
    expect(result.reason).toMatchObject({
      error: { status: 401, providerCode: 'invalid_api_key' },
    });
    expectValidLog(session);
  });
});
