import { afterEach, describe, expect, it, vi } from 'vitest';
import { runTurn } from '../../src/agent/index.js';
import { Session } from '../../src/core/index.js';
import { classifyFailure, redactJson, redactSecrets } from '../../src/model/index.js';
import { partsModel } from '../agent/helpers.js';

afterEach(() => {
  vi.unstubAllEnvs();
});

describe('redactSecrets', () => {
  it.each([
    ['Authorization: Bearer abc.def-123456', 'Authorization: Bearer [redacted]'],
    ['{"x-api-key": "k-1234567890"}', '{"x-api-key": "[redacted]"}'],
    ['api_key=hunter2hunter2&x=1', 'api_key=[redacted]&x=1'],
    ['token sk-ant-api03-AAAAAAAAAAAAAAAAAAAA end', 'token [redacted] end'],
    ['got bearer 0123456789abcdef', 'got Bearer [redacted]'],
  ])('redacts %s', (input, expected) => {
    expect(redactSecrets(input, [])).toBe(expected);
  });

  it('redacts the values of the provider key variables wherever they appear', () => {
    vi.stubEnv('DEEPSEEK_API_KEY', 'plain-deepseek-value');
    expect(classifyFailure(new Error('key plain-deepseek-value refused')).failure.message).toBe(
      'key [redacted] refused',
    );
  });

  it('leaves ordinary text and short values alone', () => {
    expect(redactSecrets('rate limited, retry in 7 s', ['abc'])).toBe('rate limited, retry in 7 s');
    expect(redactJson({ keys: ['x', 'secret-value-1'] }, ['secret-value-1'])).toEqual({
      keys: ['x', '[redacted]'],
    });
  });
});

describe('an in-stream error that echoes a credential', () => {
  it('is redacted in the chunk, the failure and the turn end; header values count as secrets', async () => {
    const session = Session.create();
    const model = partsModel([
      [
        {
          type: 'error',
          error: {
            type: 'auth_error',
            message: 'bad key my-header-secret-99 for Bearer abcdefgh123',
          },
        },
      ],
    ]);
    const result = await runTurn({
      session,
      model,
      input: 'hi',
      headers: { 'x-custom-auth': 'my-header-secret-99' },
    });
    expect(result.reason.kind).toBe('error');
    const log = JSON.stringify(session.events);
    expect(log).not.toContain('my-header-secret-99');
    expect(log).not.toContain('abcdefgh123');
  });
});
