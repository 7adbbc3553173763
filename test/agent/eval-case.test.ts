/**
 * Eval cases from the log (issue 35 §4): each call's exact request as OpenAI chat messages with
 * the recorded answer last, and where it came from.
 */
import { describe, expect, it } from 'vitest';
import { requestAt, toEvalCase, turnEndAnswers } from '../../src/agent/index.js';
import { InvalidArgumentError } from '../../src/core/index.js';
import { lookupSession } from './lookup-session.js';

const recorded = () => lookupSession('evals', { followUp: ['And doubled?', 'Eighty-four.'] });

describe('toEvalCase', () => {
  it('gives the request of a call as chat messages with its recorded answer last, and its provenance', async () => {
    const session = await recorded();
    const [first, second] = turnEndAnswers(session);
    const evalCase = toEvalCase(session, first as number);
    expect(evalCase.messages).toEqual([
      { role: 'system', content: 'Be exact.' },
      { role: 'user', content: [{ type: 'text', text: 'What is the answer?' }] },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: expect.any(String),
            type: 'function',
            function: { name: 'lookup', arguments: '{"key":"answer"}' },
          },
        ],
      },
      { role: 'tool', tool_call_id: expect.any(String), content: 'forty-two' },
      { role: 'assistant', content: 'It is forty-two.' },
    ]);
    expect(evalCase.tools).toEqual([
      {
        type: 'function',
        function: {
          name: 'lookup',
          description: 'Looks a key up.',
          parameters: { type: 'object', properties: { key: { type: 'string' } } },
        },
      },
    ]);
    expect(evalCase.metadata).toEqual({
      session: 'evals',
      seq: first,
      turn: 1,
      step: 2,
      provider: 'scripted',
      model: expect.any(String),
      requestDigest: requestAt(session, first as number).digest,
    });
    expect(toEvalCase(session, second as number).messages.at(-1)).toEqual({
      role: 'assistant',
      content: 'Eighty-four.',
    });
  });

  it('lists the answer that ended each turn, one per turn', async () => {
    const session = await recorded();
    const answers = turnEndAnswers(session);
    expect(answers).toHaveLength(2);
    for (const seq of answers) expect(session.event(seq)?.type).toBe('assistant/message');
  });

  it('refuses a seq outside every step with InvalidArgumentError', async () => {
    const session = await recorded();
    expect(() => toEvalCase(session, 0)).toThrow(InvalidArgumentError);
  });
});
