/**
 * The exact request of a recorded call sent to another model (issue 35 §2, `palimpsest replay
 * --model`): the answer lands in a fork that ends where the call's step began.
 */
import { describe, expect, it } from 'vitest';
import { askAgain, checkRequestDigests, requestAt } from '../../src/agent/index.js';
import { checkInvariants, InvalidArgumentError } from '../../src/core/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { lookupSession } from './lookup-session.js';

const recorded = () => lookupSession('recorded', { usage: { inputTokens: 50, outputTokens: 5 } });

const other = (script: Parameters<typeof scriptedModel>[0]) =>
  scriptedModel(script, { provider: 'other', modelId: 'other-model' });

describe('askAgain', () => {
  it('sends the recorded request to another model and records its answer in a fork of the session', async () => {
    const session = await recorded();
    const answerSeq = session.events.findLast((event) => event.type === 'assistant/message')?.seq;
    const model = other([
      { text: 'Forty-two, exactly.', usage: { inputTokens: 48, outputTokens: 4 } },
    ]);
    const result = await askAgain(session, answerSeq, { model, id: 'asked' });

    expect(result.recorded).toMatchObject({ text: 'It is forty-two.', usage: { inputTokens: 50 } });
    expect(result.answer).toMatchObject({
      text: 'Forty-two, exactly.',
      provider: 'other',
      model: 'other-model',
      usage: { inputTokens: 48, outputTokens: 4 },
    });
    expect(result.reason).toEqual({ kind: 'completed' });
    const { fork } = result;
    expect(fork.id).toBe('asked');
    expect(fork.header.parentSession).toBe('recorded');
    expect(fork.header.seedLength).toBe(result.stepStartSeq);
    expect(checkInvariants(fork.events)).toEqual([]);
    expect(checkRequestDigests(fork)).toEqual([]);
    // The other model received the recorded call's messages exactly.
    const sent = requestAt(fork, result.answer.seq);
    const original = requestAt(session, answerSeq);
    expect(sent.messages).toEqual(original.messages);
    expect(sent.header).toEqual({ ...original.header, provider: 'other', model: 'other-model' });
    expect(model.calls[0]?.prompt).toEqual(original.request.options.prompt);
  });

  it('answers the tool calls the other model asks for with results saying no tool runs in the fork', async () => {
    const session = await recorded();
    const model = other([{ toolCalls: [{ name: 'lookup', args: { key: 'again' } }] }]);
    const { fork, answer } = await askAgain(session, undefined, { model });
    expect(answer.finishReason).toBe('tool-calls');
    const result = fork.events.findLast((event) => event.type === 'tool/result');
    expect(JSON.stringify(result?.data)).toContain('was not run');
    expect(checkInvariants(fork.events)).toEqual([]);
  });

  it('ends the fork’s turn with a provider failure instead of throwing', async () => {
    const session = await recorded();
    const model = other([{ error: { message: 'invalid model', status: 400 } }]);
    const { fork, reason } = await askAgain(session, undefined, { model });
    expect(reason).toMatchObject({
      kind: 'error',
      error: { message: expect.stringContaining('invalid model') },
    });
    expect(checkInvariants(fork.events)).toEqual([]);
  });

  it('refuses a seq outside every step', async () => {
    const session = await recorded();
    await expect(askAgain(session, 0, { model: other([]) })).rejects.toBeInstanceOf(
      InvalidArgumentError,
    );
  });
});
