import { describe, expect, it } from 'vitest';
import {
  AgentError,
  detectProvider,
  type EnvModel,
  modelFor,
  modelFromEnv,
  runTurn,
} from '../../src/agent/index.js';
import { Session } from '../../src/core/index.js';
import { scriptedModel } from '../../src/testing/index.js';

describe('detectProvider', () => {
  it('prefers DeepSeek, then OpenAI (compatible with a base URL), then Anthropic; none is undefined', () => {
    expect(detectProvider({ DEEPSEEK_API_KEY: 'd', OPENAI_API_KEY: 'o' })).toBe('deepseek');
    expect(detectProvider({ OPENAI_API_KEY: 'o', ANTHROPIC_API_KEY: 'a' })).toBe('openai');
    expect(detectProvider({ OPENAI_API_KEY: 'o', OPENAI_BASE_URL: 'http://x/v1' })).toBe(
      'openai-compatible',
    );
    expect(detectProvider({ ANTHROPIC_API_KEY: 'a' })).toBe('anthropic');
    expect(detectProvider({ OPENAI_API_KEY: '  ' })).toBeUndefined();
  });
});

describe('modelFor', () => {
  it('builds the named provider whatever else is configured, with the model of the spec', async () => {
    const env = { DEEPSEEK_API_KEY: 'd', OPENAI_API_KEY: 'o', OPENAI_BASE_URL: 'http://x/v1' };
    const picked = await modelFor('openai:gpt-4o', { env });
    expect(picked).toMatchObject({ provider: 'openai', description: 'openai:gpt-4o' });
    expect(picked.model.modelId).toBe('gpt-4o');
    expect((await modelFor('deepseek', { env })).description).toBe('deepseek:deepseek-chat');
  });

  it('builds openai for OpenAI itself, reading no OPENAI_BASE_URL from the process environment', async () => {
    const before = process.env.OPENAI_BASE_URL;
    process.env.OPENAI_BASE_URL = 'http://127.0.0.1:9/v1';
    try {
      const { model } = await modelFor('openai:gpt-4o', { env: { OPENAI_API_KEY: 'k' } });
      // The provider's request URL, as its client builds it.
      const config = (model as unknown as { config: { url(o: { path: string }): string } }).config;
      expect(config.url({ path: '/responses' })).toBe('https://api.openai.com/v1/responses');
    } finally {
      if (before === undefined) delete process.env.OPENAI_BASE_URL;
      else process.env.OPENAI_BASE_URL = before;
    }
  });

  it('refuses a provider whose variables are missing, and an unknown one, with NO_PROVIDER', async () => {
    await expect(modelFor('anthropic', { env: { OPENAI_API_KEY: 'o' } })).rejects.toMatchObject({
      code: 'NO_PROVIDER',
      message: expect.stringContaining('ANTHROPIC_API_KEY'),
    });
    await expect(
      modelFor('openai-compatible', { env: { OPENAI_API_KEY: 'o' } }),
    ).rejects.toMatchObject({ code: 'NO_PROVIDER', message: expect.stringContaining('BASE_URL') });
    await expect(modelFor('nope' as 'openai', { env: {} })).rejects.toBeInstanceOf(AgentError);
  });
});

describe('modelFromEnv', () => {
  it('prefers DeepSeek, then OpenAI, then Anthropic, by the keys present', async () => {
    const all = { DEEPSEEK_API_KEY: 'd', OPENAI_API_KEY: 'o', ANTHROPIC_API_KEY: 'a' };
    expect(await modelFromEnv({ env: all })).toMatchObject({
      provider: 'deepseek',
      description: 'deepseek:deepseek-chat',
    });
    const { DEEPSEEK_API_KEY: _d, ...rest } = all;
    expect((await modelFromEnv({ env: rest })).provider).toBe('openai');
    expect((await modelFromEnv({ env: { ANTHROPIC_API_KEY: 'a' } })).model.provider).toContain(
      'anthropic',
    );
  });

  it('uses an OpenAI-compatible server when OPENAI_BASE_URL is set, and PALIMPSEST_MODEL names the model', async () => {
    const picked = await modelFromEnv({
      env: {
        OPENAI_API_KEY: 'o',
        OPENAI_BASE_URL: 'http://127.0.0.1:11434/v1',
        PALIMPSEST_MODEL: 'qwen3',
      },
    });
    expect(picked).toMatchObject({ provider: 'openai-compatible' });
    expect(picked.model.modelId).toBe('qwen3');
  });

  it('throws NO_PROVIDER when no key is set and no fallback is given', async () => {
    const attempt = modelFromEnv({ env: { OPENAI_API_KEY: '  ' } });
    await expect(attempt).rejects.toBeInstanceOf(AgentError);
    await expect(attempt).rejects.toMatchObject({
      code: 'NO_PROVIDER',
      message: expect.stringContaining('DEEPSEEK_API_KEY'),
    });
  });

  it('uses the caller’s fallback model with a notice when no key is set', async () => {
    const fallback = scriptedModel([{ text: 'offline answer' }], { loop: true });
    const picked: EnvModel = await modelFromEnv({ env: {}, fallback });
    expect(picked.model).toBe(fallback);
    expect(picked.provider).toBeUndefined();
    expect(picked.description).toBe('scripted:scripted-model');
    expect(picked.notice).toContain('No provider key found');
    const session = Session.create();
    for (const input of ['one', 'two']) {
      const result = await runTurn({ session, model: picked.model, input });
      expect(result.reason).toEqual({ kind: 'completed' });
      expect(result.text).toBe('offline answer');
    }
  });
});
