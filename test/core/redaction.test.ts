/**
 * Redaction placeholders: the erased form keeps every field derivation and the linter read, and
 * passes admission wherever the original did; text becomes `[redacted]`, JSON text stays JSON.
 */
import { describe, expect, it } from 'vitest';
import {
  contentMatches,
  type JsonValue,
  REDACTED_TEXT,
  redactedData,
  Session,
} from '../../src/core/index.js';

const user = {
  id: 'u1',
  role: 'user',
  content: [
    { type: 'text', text: 'call me on +44 20 7946 0018' },
    { type: 'image', mediaType: 'image/png', data: 'iVBORw0KGgo=' },
  ],
  source: { kind: 'user' },
};
const assistant = {
  turn: 1,
  step: 1,
  message: {
    id: 'a1',
    role: 'assistant',
    content: [
      { type: 'reasoning', text: 'the user gave a phone number' },
      {
        type: 'tool-call',
        id: 'c1',
        name: 'dial',
        arguments: '{"number":"+44 20 7946 0018","id":"x"}',
      },
    ],
    source: { kind: 'model', provider: 'openai', model: 'gpt-5' },
  },
  finishReason: 'tool-calls',
  usage: { inputTokens: 12, outputTokens: 7 },
};
const result = {
  turn: 1,
  step: 1,
  message: {
    id: 't1',
    role: 'tool',
    content: [
      {
        type: 'tool-result',
        toolCallId: 'c1',
        isJson: true,
        content: [{ type: 'text', text: '{"dialled":"+44 20 7946 0018"}' }],
      },
    ],
  },
};

describe('redactedData', () => {
  it('erases every content string, keeps ids, roles, models, usage and call ids, and the events stay admissible', () => {
    const session = Session.create({ id: 'erased' });
    session.append('turn/start', { turn: 1 });
    session.append('step/start', { turn: 1, step: 1 });
    session.append('user/message', redactedData(user) as never, { surfaceOp: 'append' });
    session.append('assistant/message', redactedData(assistant) as never, { surfaceOp: 'append' });
    session.append('tool/result', redactedData(result) as never, { surfaceOp: 'append' });
    const [first, second, third] = session.deriveMessages();
    expect(first?.content).toEqual([
      { type: 'text', text: REDACTED_TEXT },
      { type: 'text', text: REDACTED_TEXT },
    ]);
    expect(second).toMatchObject({ id: 'a1', source: { provider: 'openai', model: 'gpt-5' } });
    expect(second?.content[1]).toEqual({
      type: 'tool-call',
      id: 'c1',
      name: 'dial',
      arguments: '{"number":"[redacted]","id":"[redacted]"}',
    });
    expect((redactedData(assistant) as typeof assistant).usage).toEqual(assistant.usage);
    expect(JSON.stringify(third)).toContain('"text":"{\\"dialled\\":\\"[redacted]\\"}"');
  });

  it('with a pattern, erases only its matches and keeps the rest of the text', () => {
    const phone = /\+44 20 \d{4} \d{4}/g;
    const erased = redactedData(user, phone) as typeof user;
    expect(erased.content[0]).toEqual({ type: 'text', text: `call me on ${REDACTED_TEXT}` });
    expect(erased.content[1]).toEqual(user.content[1]);
    expect(contentMatches(user, phone)).toBe(true);
    expect(contentMatches(erased, phone)).toBe(false);
  });

  it('never reads a structural field as content, and keeps a __proto__ key as data', () => {
    expect(contentMatches({ id: 'u1', role: 'user' }, /u1/g)).toBe(false);
    const data = JSON.parse('{"__proto__":{"text":"secret"}}') as JsonValue;
    const erased = redactedData(data) as Record<string, JsonValue>;
    expect(Object.getPrototypeOf(erased)).toBe(Object.prototype);
    expect(Object.hasOwn(erased, '__proto__')).toBe(true);
    expect(JSON.stringify(erased)).toBe('{"__proto__":{"text":"[redacted]"}}');
  });

  it('refuses a pattern without the g flag, which would erase only the first match', () => {
    expect(() => redactedData(user, /call/)).toThrow(
      /expected a pattern with the g flag, found \/call\//,
    );
  });
});
