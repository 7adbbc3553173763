import { describe, expect, it } from 'vitest';
import { runTurn } from '../../src/agent/index.js';
import {
  type AutoCompactionAction,
  autoCompaction,
  compact,
  contextTokens,
  pruneToolResults,
  recallTool,
} from '../../src/compaction/index.js';
import {
  checkInvariants,
  deriveEventMessage,
  estimateMessageTokens,
  estimateTokens,
  MESSAGE_OVERHEAD_TOKENS,
  Session,
} from '../../src/core/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { fetchTool, recordedSession, sessionModel } from './helpers.js';

describe('contextTokens', () => {
  it('anchors on the usage the provider last reported, plus what entered after it', async () => {
    const session = await recordedSession(2);
    const measured = contextTokens(session);
    expect(measured.source).toBe('usage');
    const lastMessage = [...session.events]
      .reverse()
      .find((event) => event.type === 'assistant/message');
    if (lastMessage === undefined) throw new Error('no assistant message');
    const { usage } = lastMessage.data as { usage: { inputTokens: number; outputTokens: number } };
    expect(measured.tokens).toBe(usage.inputTokens + usage.outputTokens);
  });

  it('falls back to the estimate after a replace rewrote the surface', async () => {
    const session = await recordedSession(4, 5000);
    pruneToolResults(session, { keepRecentTurns: 1 });
    expect(contextTokens(session).source).toBe('estimate');
  });

  it('estimates a session without usage, including the system prompt and tool schemas', () => {
    const session = Session.create();
    session.append(
      'user/message',
      {
        id: 'u',
        role: 'user',
        content: [{ type: 'text', text: 'hello there' }],
        source: { kind: 'user' },
      },
      { surfaceOp: 'append' },
    );
    expect(contextTokens(session)).toEqual({
      tokens: MESSAGE_OVERHEAD_TOKENS + estimateTokens('hello there'),
      source: 'estimate',
    });
  });
});

describe('autoCompaction', () => {
  it('refuses a threshold outside (0, 1] and a keep budget above the threshold', () => {
    const model = scriptedModel([]);
    expect(() => autoCompaction({ model, contextWindow: 1000, threshold: 1.5 })).toThrow(
      /threshold/,
    );
    expect(() => autoCompaction({ model, contextWindow: 1000, keepRecentTokens: 900 })).toThrow(
      /keepRecentTokens/,
    );
  });

  it('prunes first and compacts only when pruning was not enough', async () => {
    const session = await recordedSession(6, 6000);
    const actions: AutoCompactionAction[] = [];
    const hook = autoCompaction({
      model: sessionModel(),
      contextWindow: 3000,
      threshold: 0.8,
      keepRecentTokens: 500,
      prune: { keepRecentTurns: 1, minChars: 1000 },
      onAction: (action) => actions.push(action),
    });
    await hook({ session, turn: 7, step: 1, signal: new AbortController().signal });
    expect(actions.map((action) => action.kind)).toEqual(['prune', 'compact']);
    expect(contextTokens(session).tokens).toBeLessThan(2400);
  });

  it('does nothing under the threshold', async () => {
    const session = await recordedSession(2, 100);
    const length = session.seq;
    await autoCompaction({ model: scriptedModel([]), contextWindow: 100_000 })({
      session,
      turn: 3,
      step: 1,
      signal: new AbortController().signal,
    });
    expect(session.seq).toBe(length);
  });

  it('keeps a 200-turn agent session under its context window, with valid logs throughout', async () => {
    const session = Session.create();
    const model = sessionModel({
      resultSize: 4000,
      summary: 'Goal: read every document. Next: the next one.',
    });
    const contextWindow = 6000;
    const actions: string[] = [];
    const beforeStep = autoCompaction({
      model,
      contextWindow,
      threshold: 0.7,
      keepRecentTokens: 1500,
      prune: { keepRecentTurns: 1, minChars: 1000 },
      onAction: (action) => actions.push(action.kind),
    });
    let peak = 0;
    for (let turn = 1; turn <= 200; turn++) {
      const result = await runTurn({
        session,
        model,
        tools: [fetchTool],
        system: 'You read documents.',
        input: `read document ${turn}`,
        hooks: {
          beforeStep,
          afterStep: () => {
            peak = Math.max(peak, contextTokens(session).tokens);
          },
        },
      });
      expect(result.reason).toEqual({ kind: 'completed' });
      if (turn % 25 === 0)
        expect(checkInvariants(session.events, { requireClosed: true })).toEqual([]);
    }
    expect(peak).toBeLessThanOrEqual(contextWindow);
    expect(actions).toContain('compact');
    expect(actions).toContain('prune');
    // The log still holds every tool result the model ever received.
    expect(session.events.filter((event) => event.type === 'tool/call')).toHaveLength(200);
    expect(checkInvariants(session.events, { requireClosed: true })).toEqual([]);
  });
});

describe('recallTool', () => {
  it('returns the original messages a summary replaced, from the event numbers it names', async () => {
    const session = await recordedSession(3);
    const result = await compact(session, {
      model: scriptedModel([{ text: 'Short.' }]),
      keepRecentTokens: 0,
    });
    const from = Math.min(...result.shadowedSeqs);
    const to = Math.max(...result.shadowedSeqs);
    expect(result.summary).toContain(`from ${from} to ${to}`);
    const recall = recallTool();
    const output = await recall.run(JSON.stringify({ from, to }), {
      signal: new AbortController().signal,
      callId: 'r1',
      turn: 4,
      step: 1,
      session,
    });
    const textOf = output.content
      .map((block) => (block.type === 'text' ? block.text : ''))
      .join('');
    expect(textOf).toContain(`#${from} user: read document 1`);
    expect(textOf).toContain('doc d0:');
    expect(output.error).toBeUndefined();
  });

  it('answers a bad range with a message, and cuts long output', async () => {
    const session = await recordedSession(3, 5000);
    const context = {
      signal: new AbortController().signal,
      callId: 'r',
      turn: 1,
      step: 1,
      session,
    };
    const bad = await recallTool().run('{"from": 9, "to": 2}', context);
    expect(JSON.stringify(bad.content)).toContain('0 ≤ from ≤ to');
    const cut = await recallTool({ maxChars: 1000 }).run(
      JSON.stringify({ from: 0, to: session.seq }),
      context,
    );
    expect(JSON.stringify(cut.content)).toContain('cut at 1,000 characters');
  });
});

describe('autoCompaction, cache-aware', () => {
  const signal = new AbortController().signal;
  const lastCallEnd = (session: Session): number =>
    [...session.events].reverse().find((event) => event.type === 'assistant/message')?.time ?? 0;
  /** Estimated tokens of the surface entries before `seq`, message by message. */
  const tokensBefore = (session: Session, seq: number | undefined): number => {
    let tokens = 0;
    for (let index = 0; index < session.surface.size; index++) {
      const at = session.surface.at(index) as number;
      if (at === seq) break;
      const message = deriveEventMessage(session.event(at) as never);
      tokens += message === null ? 0 : estimateMessageTokens(message);
    }
    return tokens;
  };
  const policy = (
    session: Session,
    fill: number,
    now: number,
    actions: AutoCompactionAction[],
    pruneFirst = true,
  ) =>
    autoCompaction({
      model: sessionModel(),
      contextWindow: Math.ceil(contextTokens(session).tokens / fill),
      threshold: 0.8,
      keepRecentTokens: 500,
      pruneFirst,
      prune: { keepRecentTurns: 1, minChars: 1000 },
      cacheAware: true,
      forceThreshold: 0.95,
      clock: () => now,
      onAction: (action) => actions.push(action),
    });

  it('acts on a cold cache already at the cold threshold, on a warm one only at the threshold', async () => {
    const session = await recordedSession(6, 6000);
    const actions: AutoCompactionAction[] = [];
    const end = lastCallEnd(session);
    await policy(session, 0.6, end + 299_999, actions)({ session, turn: 7, step: 1, signal });
    expect(actions).toEqual([]);
    await policy(session, 0.6, end + 300_000, actions)({ session, turn: 7, step: 1, signal });
    expect(actions.map((action) => action.kind)).toEqual(['prune']);
    const compacted = await recordedSession(6, 6000);
    await policy(
      compacted,
      0.6,
      lastCallEnd(compacted) + 300_000,
      actions,
      false,
    )({
      session: compacted,
      turn: 7,
      step: 1,
      signal,
    });
    expect(actions.map((action) => action.kind)).toEqual(['prune', 'compact']);
    expect(checkInvariants(compacted.events)).toEqual([]);
  });

  it('compacts a warm cache only past the forced threshold, and a cold one at the threshold', async () => {
    const session = await recordedSession(6, 6000);
    const actions: AutoCompactionAction[] = [];
    const length = session.seq;
    const end = lastCallEnd(session);
    await policy(session, 0.9, end + 60_000, actions, false)({ session, turn: 7, step: 1, signal });
    expect(actions).toEqual([]);
    expect(session.seq).toBe(length);
    await policy(
      session,
      0.9,
      end + 300_000,
      actions,
      false,
    )({ session, turn: 7, step: 1, signal });
    expect(actions.map((action) => action.kind)).toEqual(['compact']);

    const forced = await recordedSession(6, 6000);
    const forcedActions: AutoCompactionAction[] = [];
    const forcedEnd = lastCallEnd(forced);
    await policy(
      forced,
      0.97,
      forcedEnd + 1_000,
      forcedActions,
      false,
    )({
      session: forced,
      turn: 7,
      step: 1,
      signal,
    });
    expect(forcedActions.map((action) => action.kind)).toEqual(['compact']);
    expect(checkInvariants(forced.events)).toEqual([]);
  });

  it('still prunes a warm cache at the threshold, and says what the prune kept cached', async () => {
    const session = await recordedSession(6, 6000);
    const actions: AutoCompactionAction[] = [];
    await policy(
      session,
      0.9,
      lastCallEnd(session) + 1_000,
      actions,
    )({
      session,
      turn: 7,
      step: 1,
      signal,
    });
    expect(actions.map((action) => action.kind)).toEqual(['prune']);
    const [prune] = actions;
    if (prune?.kind !== 'prune') throw new Error('expected a prune');
    expect(prune.keptCachedTokens).toBe(tokensBefore(session, prune.result.replacementSeqs[0]));
    expect(prune.keptCachedTokens).toBeGreaterThan(0);
  });

  it('reports what a compaction keeps cached: nothing before its summary', async () => {
    const session = await recordedSession(6, 6000);
    const actions: AutoCompactionAction[] = [];
    await autoCompaction({
      model: sessionModel(),
      contextWindow: 3000,
      keepRecentTokens: 500,
      pruneFirst: false,
      onAction: (action) => actions.push(action),
    })({ session, turn: 7, step: 1, signal });
    expect(actions.map((action) => [action.kind, action.keptCachedTokens])).toEqual([
      ['compact', 0],
    ]);
  });

  it('refuses thresholds out of order and a keep budget above the cold threshold', () => {
    const model = scriptedModel([]);
    const cacheAware = true;
    for (const forceThreshold of [0.5, 1.2]) {
      expect(() =>
        autoCompaction({ model, contextWindow: 1000, cacheAware, forceThreshold }),
      ).toThrow(/forceThreshold/);
    }
    for (const coldThreshold of [0, 0.9]) {
      expect(() =>
        autoCompaction({ model, contextWindow: 1000, cacheAware, coldThreshold }),
      ).toThrow(/coldThreshold/);
    }
    expect(() =>
      autoCompaction({ model, contextWindow: 1000, cacheAware, keepRecentTokens: 450 }),
    ).toThrow(/cold threshold/);
  });
});
