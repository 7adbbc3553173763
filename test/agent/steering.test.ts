/**
 * Steering and follow-ups through the public `Agent`: a steered message is in the log the moment
 * it is queued and enters the surface at the next step boundary (never inside a tool round
 * trip); a follow-up runs after the turn as a turn of its own; the queue is read from the log, so
 * a reloaded session delivers each message exactly once.
 */
import type { LanguageModelV3CallOptions } from '@ai-sdk/provider';
import { describe, expect, it } from 'vitest';
import { Agent, AgentError, defineTool, pendingMessages } from '../../src/agent/index.js';
import { checkInvariants, Session, type SessionEvent } from '../../src/core/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { expectValidLog, shape } from './helpers.js';

/** The text of each message of a request, as `role: text`, tool results by their text. */
function transcriptOf(call: LanguageModelV3CallOptions | undefined): string[] {
  return (call?.prompt ?? []).map((message) => {
    const parts = Array.isArray(message.content) ? message.content : [];
    const text = parts
      .map((part) => {
        if (part.type === 'text') return part.text;
        if (part.type === 'tool-call') return `call ${part.toolName}`;
        if (part.type === 'tool-result') return `result ${JSON.stringify(part.output)}`;
        return part.type;
      })
      .join(' ');
    return `${message.role}: ${text}`;
  });
}

function ofType(session: Session, type: string): SessionEvent[] {
  return session.events.filter((event) => event.type === type);
}

describe('Agent.steer', () => {
  it('records the message when queued and delivers it after the tool results, before the next model call', async () => {
    const session = Session.create();
    let agent: Agent | undefined;
    let queuedAt = -1;
    const search = defineTool({
      name: 'search',
      parameters: { type: 'object', properties: { q: { type: 'string' } } },
      execute: async () => {
        const queued = await agent?.steer('only look at 2026');
        queuedAt = queued?.seq ?? -1;
        // Queued, in the log, but not on the surface: the tool round trip is not interrupted.
        expect(session.event(queuedAt)?.type).toBe('queue/steer');
        expect(session.deriveMessages().at(-1)?.role).toBe('assistant');
        return 'three results';
      },
    });
    const model = scriptedModel([
      { toolCalls: [{ name: 'search', args: { q: 'releases' } }] },
      { text: 'The 2026 release is 4.0.' },
    ]);
    agent = new Agent({ session, model, tools: [search] });
    const result = await agent.run('what was released?');

    expect(result.steps).toBe(2);
    expect(transcriptOf(model.calls[1]).slice(-3)).toEqual([
      'assistant: call search',
      'tool: result {"type":"text","value":"three results"}',
      'user: only look at 2026',
    ]);
    expect(shape(session.events)).toEqual([
      'turn/start',
      'user/message',
      'step/start',
      'request/header',
      'chunks',
      'assistant/message',
      'tool/call',
      'queue/steer',
      'tool/result',
      'step/end',
      'user/message',
      'step/start',
      'chunks',
      'assistant/message',
      'step/end',
      'turn/end',
    ]);
    const delivered = ofType(session, 'user/message')[1];
    expect(delivered?.sourceEventSeqs).toEqual([queuedAt]);
    expect(delivered?.data).toMatchObject({ source: { kind: 'steer', queued: queuedAt } });
    expect(pendingMessages(session).steers).toEqual([]);
    // The transcript shows it where the model read it.
    expect(
      session
        .transcript()
        .map((entry) => (entry.message?.role === 'user' ? entry.message.source.kind : entry.type)),
    ).toEqual(['user', 'assistant/message', 'tool/result', 'steer', 'assistant/message']);
    expectValidLog(session);
  });

  it('keeps a turn going for one more step when the user steers while the model answers', async () => {
    const session = Session.create();
    let steered = false;
    const model = scriptedModel([{ text: 'Here is a long answer.' }, { text: 'Shorter: yes.' }]);
    const agent: Agent = new Agent({
      session,
      model,
      hooks: {
        onEvent: (event) => {
          if (event.type === 'assistant/chunk' && !steered) {
            steered = true;
            void agent.steer('make it shorter');
          }
        },
      },
    });
    const result = await agent.run('is it ready?');
    expect(result.reason).toEqual({ kind: 'completed' });
    expect(result.steps).toBe(2);
    expect(result.text).toBe('Shorter: yes.');
    expect(transcriptOf(model.calls[1]).slice(-2)).toEqual([
      'assistant: Here is a long answer.',
      'user: make it shorter',
    ]);
    expectValidLog(session);
  });

  it('queued while no turn runs, enters the next turn right after its input', async () => {
    const session = Session.create();
    const model = scriptedModel([{ text: 'ok' }]);
    const agent = new Agent({ session, model });
    await agent.steer('answer in French');
    expect(agent.pending.steers).toHaveLength(1);
    expect(session.deriveMessages()).toEqual([]);
    await agent.run('hello');
    expect(transcriptOf(model.calls[0])).toEqual(['user: hello', 'user: answer in French']);
    expect(agent.pending.steers).toEqual([]);
    expectValidLog(session);
  });

  it('refuses empty input with INVALID_INPUT and queues nothing', async () => {
    const session = Session.create();
    const agent = new Agent({ session, model: scriptedModel([]) });
    const error = await agent.steer('').catch((caught: unknown) => caught);
    expect(AgentError.isInstance(error) && error.code).toBe('INVALID_INPUT');
    expect(session.seq).toBe(0);
  });
});

describe('Agent.followUp', () => {
  it('runs each follow-up after the turn as a turn of its own, citing its queue event', async () => {
    const session = Session.create();
    const model = scriptedModel([{ text: 'first answer' }, { text: 'second answer' }]);
    let agent: Agent | undefined;
    agent = new Agent({
      session,
      model,
      hooks: {
        beforeStep: async ({ turn }) => {
          if (turn === 1) await agent?.followUp('and the second question');
        },
      },
    });
    const result = await agent.run('first question');
    expect(result.turn).toBe(2);
    expect(result.text).toBe('second answer');
    const [queued] = ofType(session, 'queue/follow-up');
    const turnTwo = session.events.findIndex(
      (event) => event.type === 'turn/start' && (event.data as { turn: number }).turn === 2,
    );
    const opening = session.events[turnTwo + 1];
    expect(opening?.type).toBe('user/message');
    expect(opening?.sourceEventSeqs).toEqual([queued?.seq]);
    expect(opening?.data).toMatchObject({ source: { kind: 'follow-up' } });
    expect(transcriptOf(model.calls[1])).toEqual([
      'user: first question',
      'assistant: first answer',
      'user: and the second question',
    ]);
    expect(session.transcript().filter((entry) => entry.type === 'user/message')).toHaveLength(2);
    expectValidLog(session);
  });

  it('waits in the queue when the turn is cancelled, and runs on resume', async () => {
    const session = Session.create();
    const controller = new AbortController();
    const model = scriptedModel([{ text: 'resumed' }, { text: 'followed' }]);
    let agent: Agent | undefined;
    agent = new Agent({
      session,
      model,
      hooks: {
        beforeStep: async () => {
          await agent?.followUp('then this');
          controller.abort('stop');
        },
      },
    });
    const cancelled = await agent.run('do that', { signal: controller.signal });
    expect(cancelled.reason.kind).toBe('aborted');
    expect(agent.pending.followUps).toHaveLength(1);

    const resumed = await agent.with({ hooks: {} }).resume();
    // The cancelled turn is resumed first, then the follow-up runs.
    expect(resumed).toMatchObject({ turn: 3, reason: { kind: 'completed' }, text: 'followed' });
    expect(transcriptOf(model.calls[0]).at(-1)).toMatch(/^user: \[resumed: turn 1 was cancelled/);
    expect(agent.pending.followUps).toEqual([]);
    expectValidLog(session);
  });
});

describe('the queue after a reload', () => {
  it('is read from the log, and each queued message is delivered exactly once', async () => {
    const first = Session.create({ id: 'reload' });
    const agent = new Agent({ session: first, model: scriptedModel([{ text: 'ok' }]) });
    await agent.run('hello');
    await agent.steer('steer me');
    await agent.followUp('follow me');

    const reloaded = Session.create({ id: 'reload', seed: first.events });
    expect(pendingMessages(reloaded).steers.map((queued) => queued.message.content)).toEqual([
      [{ type: 'text', text: 'steer me' }],
    ]);
    const model = scriptedModel([{ text: 'steered' }, { text: 'followed' }]);
    const again = new Agent({ session: reloaded, model });
    await again.run('next');
    expect(transcriptOf(model.calls[0]).slice(-2)).toEqual(['user: next', 'user: steer me']);
    expect(transcriptOf(model.calls[1]).at(-1)).toBe('user: follow me');

    const twice = Session.create({ id: 'reload', seed: reloaded.events });
    expect(pendingMessages(twice)).toEqual({ steers: [], followUps: [] });
    const delivered = twice.events.filter(
      (event) => event.type === 'user/message' && event.sourceEventSeqs !== undefined,
    );
    expect(delivered).toHaveLength(2);
    expect(checkInvariants(twice.events, { requireClosed: true })).toEqual([]);
  });
});
