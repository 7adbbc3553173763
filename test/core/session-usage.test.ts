import { describe, expect, it } from 'vitest';
import { forkSession, Session, sessionUsage, type TokenUsage } from '../../src/core/index.js';

function answer(
  session: Session,
  turn: number,
  usage: TokenUsage | undefined,
  model = 'deepseek-chat',
) {
  session.append('turn/start', { turn });
  session.append(
    'assistant/message',
    {
      turn,
      step: 1,
      finishReason: 'stop',
      ...(usage === undefined ? {} : { usage }),
      message: {
        id: `a${turn}`,
        role: 'assistant',
        content: [{ type: 'text', text: `answer ${turn}` }],
        source: { kind: 'model', provider: 'deepseek', model },
      },
    },
    { surfaceOp: 'append', sourceEventSeqs: [] },
  );
  session.append('turn/end', { turn, reason: { kind: 'completed' } });
}

describe('sessionUsage', () => {
  it('totals every numeric usage field per model, steps and compaction apart', () => {
    const session = Session.create({ id: 'usage' });
    answer(session, 1, { inputTokens: 100, outputTokens: 10, cachedInputTokens: 40 });
    answer(session, 2, { inputTokens: 200, outputTokens: 20 }, 'deepseek-reasoner');
    answer(session, 3, undefined);
    session.append('compaction/start', { id: 'c1', kind: 'summary' });
    session.append('compaction/end', {
      id: 'c1',
      replaced: true,
      usage: { inputTokens: 300, outputTokens: 30, cacheWriteTokens: 7 },
    });
    const usage = sessionUsage(session);
    expect(usage.total).toEqual({
      calls: 3,
      tokens: { inputTokens: 600, outputTokens: 60, cachedInputTokens: 40, cacheWriteTokens: 7 },
    });
    expect(usage.steps.calls).toBe(2);
    expect(usage.compaction.tokens).toEqual({
      inputTokens: 300,
      outputTokens: 30,
      cacheWriteTokens: 7,
    });
    expect(Object.keys(usage.byModel).sort()).toEqual([
      'compaction',
      'deepseek:deepseek-chat',
      'deepseek:deepseek-reasoner',
    ]);
    expect(usage.inherited).toEqual({ calls: 0, tokens: {} });
  });

  it('keeps apart what a fork inherited from its parent', () => {
    const parent = Session.create({ id: 'parent' });
    answer(parent, 1, { inputTokens: 100, outputTokens: 10 });
    answer(parent, 2, { inputTokens: 200, outputTokens: 20 });
    const child = forkSession(parent, 2, { id: 'child' });
    answer(child, 2, { inputTokens: 50, outputTokens: 5 });
    const usage = sessionUsage(child);
    expect(usage.total.tokens).toEqual({ inputTokens: 150, outputTokens: 15 });
    expect(usage.inherited.tokens).toEqual({ inputTokens: 100, outputTokens: 10 });
  });
});
