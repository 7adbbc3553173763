/**
 * A turn on a session that outlives its process: resuming a loaded or crashed session, and the
 * durability barrier a turn waits on before its tools run.
 */
import { describe, expect, it } from 'vitest';
import { AgentError, defineTool, runTurn } from '../../src/agent/index.js';
import type { ToolResultData, TurnEndData } from '../../src/core/index.js';
import { type Durable, Session } from '../../src/core/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { dataOf, echo, expectValidLog, lastTurnEnd } from './helpers.js';

describe('resume', () => {
  it('continues turn numbering on a session loaded from its events', async () => {
    const first = Session.create();
    await runTurn({ session: first, model: scriptedModel([{ text: 'a' }]), input: 'x' });
    const loaded = Session.create({ header: first.header, seed: first.events });
    const result = await runTurn({
      session: loaded,
      model: scriptedModel([{ text: 'b' }]),
      input: 'y',
    });
    expect(result.turn).toBe(2);
    expect(loaded.deriveMessages().map((message) => message.role)).toEqual([
      'user',
      'assistant',
      'user',
      'assistant',
    ]);
    expectValidLog(loaded);
  });

  it('closes a turn a crashed writer left open before starting the next one', async () => {
    const crashed = Session.create();
    crashed.append('turn/start', { turn: 1 });
    crashed.append(
      'user/message',
      {
        id: 'u1',
        role: 'user',
        content: [{ type: 'text', text: 'do it' }],
        source: { kind: 'user' },
      },
      { surfaceOp: 'append' },
    );
    crashed.append('step/start', { turn: 1, step: 1 });
    crashed.append(
      'assistant/message',
      {
        turn: 1,
        step: 1,
        finishReason: 'tool-calls',
        message: {
          id: 'a1',
          role: 'assistant',
          content: [{ type: 'tool-call', id: 'c1', name: 'echo', arguments: '{"text":"x"}' }],
          source: { kind: 'model', provider: 'p', model: 'm' },
        },
      },
      { surfaceOp: 'append' },
    );
    crashed.append('tool/call', {
      turn: 1,
      step: 1,
      callId: 'c1',
      name: 'echo',
      arguments: '{"text":"x"}',
    });
    const result = await runTurn({
      session: crashed,
      model: scriptedModel([{ text: 'resumed' }]),
      tools: [echo],
      input: 'again',
    });
    expect(result.turn).toBe(2);
    const [repairResult] = dataOf<ToolResultData>(crashed, 'tool/result');
    expect(repairResult?.error?.code).toBe('TOOL_OUTCOME_UNKNOWN');
    expect(lastTurnEnd(crashed).reason).toEqual({ kind: 'completed' });
    expect(dataOf<TurnEndData>(crashed, 'turn/end')[0]?.reason).toEqual({ kind: 'interrupted' });
    expectValidLog(crashed);
  });

  it('refuses a second concurrent turn on the same session', async () => {
    const session = Session.create();
    const slow = runTurn({
      session,
      model: scriptedModel([{ text: 'slow reply', delayMs: 5 }]),
      input: 'x',
    });
    await expect(
      runTurn({ session, model: scriptedModel([{ text: 'y' }]), input: 'y' }),
    ).rejects.toMatchObject({
      code: 'TURN_IN_PROGRESS',
    });
    await slow;
    expectValidLog(session);
  });
});

describe('durability', () => {
  const echoTool = (seen: string[]) =>
    defineTool({
      name: 'echo',
      parameters: { type: 'object', properties: {} },
      execute: () => {
        seen.push('tool ran');
        return 'ok';
      },
    });
  const toolThenText = () =>
    scriptedModel([{ toolCalls: [{ name: 'echo', args: {} }] }, { text: 'done' }]);

  it('waits on an explicit barrier after the tool/call events and before any tool runs', async () => {
    const session = Session.create();
    const seen: string[] = [];
    const barrier: Durable = {
      flush: async () => {
        const last = session.event(session.seq - 1);
        seen.push(`flush after ${last?.type}`);
      },
    };
    const result = await runTurn({
      session,
      model: toolThenText(),
      tools: [echoTool(seen)],
      input: 'go',
      barrier,
      durability: 'required',
    });
    expect(result.reason).toEqual({ kind: 'completed' });
    expect(seen).toEqual(['flush after tool/call', 'tool ran', 'flush after turn/end']);
  });

  it('uses the session as its own barrier when it is Durable, and goes on without one by default', async () => {
    const seen: string[] = [];
    const durable = Object.assign(Session.create(), {
      flush: async () => {
        seen.push('flush');
      },
    });
    await runTurn({
      session: durable,
      model: toolThenText(),
      tools: [echoTool(seen)],
      input: 'go',
    });
    expect(seen).toEqual(['flush', 'tool ran', 'flush']);

    const plain = Session.create();
    const result = await runTurn({
      session: plain,
      model: toolThenText(),
      tools: [echoTool([])],
      input: 'go',
    });
    expect(result.reason).toEqual({ kind: 'completed' });
  });

  it("refuses to start a turn without a barrier when durability is 'required'", async () => {
    const session = Session.create();
    const refused = runTurn({
      session,
      model: toolThenText(),
      input: 'go',
      durability: 'required',
    });
    await expect(refused).rejects.toBeInstanceOf(AgentError);
    await expect(refused).rejects.toMatchObject({ code: 'NOT_DURABLE' });
    expect(session.seq).toBe(0);
    await expect(
      runTurn({
        session,
        model: toolThenText(),
        input: 'go',
        durability: 'sometimes' as 'required',
      }),
    ).rejects.toMatchObject({ code: 'INVALID_INPUT' });
  });
});
