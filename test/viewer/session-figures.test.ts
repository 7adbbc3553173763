/**
 * The Session view's figures: the same tokens and cost as `sessionCost` (what `palimpsest cost`
 * prints), whether read at once or batch by batch as a live session grows; and the context
 * window a session's model has.
 */
import { describe, expect, it } from 'vitest';
import { sessionCost } from '../../src/agent/index.js';
import { Session } from '../../src/core/index.js';
import { contextWindowOf, knownWindow } from '../../src/viewer/page/context-window.js';
import { durationText, SessionFigures } from '../../src/viewer/page/session-figures.js';
import { assistant, toolResult, user } from '../core/builders.js';

/** A turn of one tool call then an answer, both calls reporting usage, on Claude Sonnet 4.5. */
function pricedTurn(session: Session, turn: number, tool: string): void {
  session.append('turn/start', { turn });
  session.append('user/message', user(`u${turn}`, `question ${turn}`), { surfaceOp: 'append' });
  session.append('step/start', { turn, step: 1 });
  session.append('request/header', {
    provider: 'anthropic.messages',
    model: 'claude-sonnet-4-5-20250929',
  });
  const usage = { inputTokens: 12_000, cachedInputTokens: 10_000, outputTokens: 300 };
  const call = {
    ...assistant(`a${turn}`, '', [{ id: `c${turn}`, name: tool }], { turn, step: 1 }),
  };
  session.append(
    'assistant/message',
    {
      ...call,
      usage,
      message: {
        ...call.message,
        source: {
          kind: 'model',
          provider: 'anthropic.messages',
          model: 'claude-sonnet-4-5-20250929',
        },
      },
    },
    { surfaceOp: 'append', sourceEventSeqs: [] },
  );
  const started = session.append('tool/call', {
    turn,
    step: 1,
    callId: `c${turn}`,
    name: tool,
    arguments: '{}',
  });
  session.append(
    'tool/result',
    { ...toolResult(`r${turn}`, `c${turn}`, 'output'), turn, step: 1 },
    {
      surfaceOp: 'append',
      sourceEventSeqs: [started.seq],
    },
  );
  session.append('step/end', { turn, step: 1 });
  session.append('turn/end', { turn, reason: { kind: 'completed' } });
}

describe('SessionFigures', () => {
  it('totals tokens and cost as sessionCost does, and counts calls, tools and turns', () => {
    const session = Session.create({ id: 'figures' });
    pricedTurn(session, 1, 'read_file');
    pricedTurn(session, 2, 'read_file');
    pricedTurn(session, 3, 'grep');
    const figures = new SessionFigures();
    figures.update(session);
    const cost = sessionCost(session);
    expect(figures.tokens).toEqual(cost.total.tokens);
    expect(figures.cost).toEqual(cost.total.cost);
    expect(figures.currency).toBe('USD');
    expect(figures.cost.total).toBeGreaterThan(0);
    expect(figures.modelCalls).toBe(3);
    expect([...figures.tools]).toEqual([
      ['read_file', 2],
      ['grep', 1],
    ]);
    expect(figures.turns).toBe(3);
    const lastAnswer = session.events.filter((e) => e.type === 'assistant/message').at(-1);
    expect(figures.lastInput).toEqual({
      seq: lastAnswer?.seq,
      tokens: 12_000,
      model: 'claude-sonnet-4-5-20250929',
    });
  });

  it('reaches the same figures batch by batch as at once', () => {
    const session = Session.create({ id: 'live' });
    const live = new SessionFigures();
    for (const turn of [1, 2, 3]) {
      pricedTurn(session, turn, turn === 2 ? 'grep' : 'read_file');
      live.update(session);
    }
    const once = new SessionFigures();
    once.update(session);
    expect({ ...live, pricer: undefined }).toEqual({ ...once, pricer: undefined });
    expect(live.read).toBe(session.seq);
  });

  it('names the models it has no rates for and leaves their calls out of the cost', () => {
    const session = Session.create({ id: 'unpriced' });
    session.append('turn/start', { turn: 1 });
    session.append('step/start', { turn: 1, step: 1 });
    session.append(
      'assistant/message',
      { ...assistant('a1', 'hi'), usage: { inputTokens: 10, outputTokens: 2 } },
      {
        surfaceOp: 'append',
        sourceEventSeqs: [],
      },
    );
    const figures = new SessionFigures();
    figures.update(session);
    expect([...figures.unpriced]).toEqual(['test:scripted']);
    expect(figures.unpricedCalls).toBe(1);
    expect(figures.cost.total).toBe(0);
    expect(figures.tokens.input).toBe(10);
  });
});

describe('the context window', () => {
  it('takes the request header’s settings first, then the model’s known window', () => {
    const header = { provider: 'anthropic.messages', model: 'claude-opus-4-5' };
    expect(contextWindowOf({ ...header, settings: { contextWindow: 64_000 } })).toEqual({
      tokens: 64_000,
      source: 'settings',
      model: 'claude-opus-4-5',
    });
    expect(contextWindowOf(header)).toEqual({
      tokens: 200_000,
      source: 'known model',
      model: 'claude-opus-4-5',
    });
  });

  it('knows no window for a model outside its table rather than inventing one', () => {
    expect(contextWindowOf({ provider: 'scripted', model: 'scripted-model' })).toBeUndefined();
    expect(contextWindowOf(undefined)).toBeUndefined();
    expect(knownWindow('gpt-4o-mini')).toBe(128_000);
    expect(knownWindow('gpt-4.1-mini')).toBe(1_047_576);
  });

  it('knows the 1M-token Claude models apart from the 200,000-token ones, and no id past a prefix', () => {
    expect(knownWindow('claude-opus-4-6')).toBe(1_000_000);
    expect(knownWindow('claude-sonnet-5-5')).toBe(1_000_000);
    expect(knownWindow('claude-haiku-5-5')).toBe(1_000_000);
    expect(knownWindow('claude-sonnet-4-5-20250929')).toBe(200_000);
    expect(knownWindow('claude-haiku-4-5')).toBe(200_000);
    expect(knownWindow('gpt-5-chat-latest')).toBe(128_000);
    expect(knownWindow('gpt-5.1-codex-max')).toBe(400_000);
    // gpt-5 is not gpt-5.4: a window the table does not know is none, not a neighbour's.
    expect(knownWindow('gpt-5.4')).toBeUndefined();
  });
});

describe('durationText', () => {
  it('says a duration in the largest units that fit', () => {
    expect(durationText(45_000)).toBe('45 s');
    expect(durationText(725_000)).toBe('12 min 5 s');
    expect(durationText(3 * 3_600_000 + 4 * 60_000)).toBe('3 h 4 min');
    expect(durationText(53 * 3_600_000)).toBe('2 d 5 h');
  });
});
