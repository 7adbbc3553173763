/**
 * What a turn sends: request headers logged when they change, settings without HTTP headers, and
 * every step's request rebuilt from the log.
 */
import type { LanguageModelV3CallOptions } from '@ai-sdk/provider';
import { describe, expect, it } from 'vitest';
import { rebuildRequest, runTurn } from '../../src/agent/index.js';
import { Session } from '../../src/core/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { dataOf, echo } from './helpers.js';

describe('request headers', () => {
  it('logs the header once while it does not change, and again when it does', async () => {
    const session = Session.create();
    const model = scriptedModel([
      { toolCalls: [{ name: 'echo', args: { text: 'a' } }] },
      { text: 'b' },
      { text: 'c' },
      { text: 'd' },
    ]);
    await runTurn({ session, model, tools: [echo], system: 'one', input: 'x' });
    await runTurn({ session, model, tools: [echo], system: 'one', input: 'y' });
    await runTurn({ session, model, tools: [echo], system: 'two', input: 'z' });
    const headers = dataOf<{ system?: string }>(session, 'request/header');
    expect(headers.map((header) => header.system)).toEqual(['one', 'two']);
  });

  it('records settings but never HTTP headers', async () => {
    const session = Session.create();
    const model = scriptedModel([{ text: 'x' }]);
    await runTurn({
      session,
      model,
      input: 'x',
      settings: {
        temperature: 0.2,
        maxOutputTokens: 100,
        providerOptions: { acme: { mode: 'fast' } },
      },
      headers: { authorization: 'Bearer secret' },
    });
    const [header] = dataOf<Record<string, unknown>>(session, 'request/header');
    expect(header?.settings).toEqual({
      temperature: 0.2,
      maxOutputTokens: 100,
      providerOptions: { acme: { mode: 'fast' } },
    });
    expect(JSON.stringify(session.events)).not.toContain('secret');
    expect(model.calls[0]).toMatchObject({
      temperature: 0.2,
      maxOutputTokens: 100,
      providerOptions: { acme: { mode: 'fast' } },
      headers: { authorization: 'Bearer secret' },
    });
  });
});

describe('request reconstruction', () => {
  it('rebuilds every step’s request from the log prefix, equal to what the model received', async () => {
    const session = Session.create();
    const model = scriptedModel([
      {
        reasoning: 'plan',
        toolCalls: [
          { name: 'echo', args: { text: 'a' } },
          { name: 'echo', args: { text: 'b' } },
        ],
      },
      { text: 'first answer' },
      { text: 'second answer' },
      { toolCalls: [{ name: 'missing', args: {} }] },
      { text: 'third answer' },
    ]);
    await runTurn({ session, model, tools: [echo], system: 'be brief', input: 'one' });
    await runTurn({
      session,
      model,
      tools: [echo],
      system: 'be brief',
      input: 'two',
      settings: { temperature: 0 },
    });
    await runTurn({ session, model, tools: [echo], system: 'changed', input: 'three' });

    const steps = dataOf<{ turn: number; step: number }>(session, 'step/start');
    expect(steps).toHaveLength(5);
    for (const [index, { turn, step }] of steps.entries()) {
      const {
        abortSignal: _signal,
        headers: _headers,
        ...sent
      } = model.calls[index] as LanguageModelV3CallOptions;
      expect(rebuildRequest(session, turn, step).callOptions).toEqual(sent);
    }
  });

  it('rebuilds the same request after the session is reloaded from its events', async () => {
    const session = Session.create();
    const model = scriptedModel([
      { toolCalls: [{ name: 'echo', args: { text: 'a' } }] },
      { text: 'done' },
    ]);
    await runTurn({ session, model, tools: [echo], input: 'x' });
    const reloaded = Session.create({ header: session.header, seed: session.events });
    const { abortSignal: _signal, ...sent } = model.calls[1] as LanguageModelV3CallOptions;
    expect(rebuildRequest(reloaded, 1, 2).callOptions).toEqual(sent);
  });

  it('refuses a step the log does not hold', () => {
    expect(() => rebuildRequest(Session.create(), 1, 1)).toThrow('no step 1 of turn 1');
  });
});
