import { describe, expect, it } from 'vitest';
import { modelFromEnv, runTurn } from '../../src/agent/index.js';
import { Session } from '../../src/core/index.js';

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

  it('falls back to the scripted model with a notice, and that model keeps answering', async () => {
    const picked = await modelFromEnv({ env: { OPENAI_API_KEY: '  ' } });
    expect(picked.provider).toBe('scripted');
    expect(picked.notice).toContain('No provider key found');
    const session = Session.create();
    for (const input of ['one', 'two']) {
      const result = await runTurn({ session, model: picked.model, input });
      expect(result.reason).toEqual({ kind: 'completed' });
      expect(result.text).toContain('scripted model');
    }
  });
});
