/**
 * Request ids (issue 34): a prompt, a steering message or a follow-up resent with the id it was
 * first sent with is admitted once, and the resend is answered with what the first admission
 * committed. Across killed workers and every store: `takeover.test.ts`.
 */
import { describe, expect, it } from 'vitest';
import { Agent, AgentError, defineTool, runTurn } from '../../src/agent/index.js';
import { Session, type SessionEvent } from '../../src/core/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { expectValidLog } from './helpers.js';

function withRequest(events: readonly SessionEvent[], requestId: string): SessionEvent[] {
  return events.filter(
    (event) =>
      (event.data as { source?: { requestId?: string } } | null)?.source?.requestId === requestId,
  );
}

const deploy = defineTool({
  name: 'deploy',
  description: 'Deploys the site.',
  parameters: { type: 'object', properties: {} },
  execute: async () => 'deployed',
});

describe('a prompt with a request id', () => {
  it('is admitted once when resent: the resend adds nothing and answers with the turn it started', async () => {
    const session = Session.create({ id: 'once' });
    const agent = new Agent({
      session,
      model: scriptedModel([
        { toolCalls: [{ name: 'deploy', args: {} }] },
        { text: 'Deployed.' },
        { text: 'never asked for' },
      ]),
      tools: [deploy],
    });
    const first = await agent.run('ship it', { requestId: 'req-1' });
    const length = session.seq;
    const again = await agent.run('ship it', { requestId: 'req-1' });

    expect(first.repeated).toBeUndefined();
    expect(again).toEqual({ ...first, repeated: true });
    expect(session.seq).toBe(length);
    const [admitted] = withRequest(session.events, 'req-1');
    expect(admitted?.type).toBe('user/message');
    expect(withRequest(session.events, 'req-1')).toHaveLength(1);
    expect((admitted?.data as { source?: unknown } | undefined)?.source).toEqual({
      kind: 'user',
      requestId: 'req-1',
    });
    expectValidLog(session);
  });

  it('resumes the turn a crash interrupted when resent, and answers later resends with that resumption', async () => {
    // The log a worker left when it died inside the tool: the tool/call is its last event.
    const crashed = Session.create({ id: 'crashed' });
    const hanging = defineTool({
      name: 'deploy',
      description: 'Deploys the site.',
      parameters: { type: 'object', properties: {} },
      execute: () => new Promise<string>(() => {}),
    });
    void runTurn({
      session: crashed,
      model: scriptedModel([{ toolCalls: [{ name: 'deploy', args: {} }] }]),
      tools: [hanging],
      input: 'ship it',
      requestId: 'req-2',
    });
    await expect.poll(() => crashed.events.at(-1)?.type).toBe('tool/call');

    const session = Session.create({ id: 'taken-over', seed: crashed.events });
    const model = scriptedModel([{ text: 'It may have deployed; checking first.' }]);
    const agent = new Agent({ session, model, tools: [deploy] });
    const resumed = await agent.run('ship it', { requestId: 'req-2' });

    expect(resumed).toMatchObject({
      repeated: true,
      turn: 2,
      reason: { kind: 'completed' },
      text: 'It may have deployed; checking first.',
    });
    expect(JSON.stringify(model.calls[0]?.prompt)).toContain('TOOL_OUTCOME_UNKNOWN');
    expect(session.events.find((event) => event.seq === resumed.startSeq)?.data).toEqual({
      turn: 2,
      resumes: 1,
    });
    const length = session.seq;
    expect(await agent.run('ship it', { requestId: 'req-2' })).toEqual(resumed);
    expect(session.seq).toBe(length);
    expect(withRequest(session.events, 'req-2')).toHaveLength(1);
    expectValidLog(session);
  });

  it('answers a resend with the turn the prompt started when that turn failed, without running it again', async () => {
    const session = Session.create({ id: 'failed' });
    const agent = new Agent({
      session,
      model: scriptedModel([{ error: 'provider down' }, { text: 'never asked for' }]),
    });
    const first = await agent.run('ship it', { requestId: 'req-3' });
    expect(first.reason.kind).toBe('error');
    expect(await agent.run('ship it', { requestId: 'req-3' })).toEqual({
      ...first,
      repeated: true,
    });
  });

  it('refuses an id resent with another input with REQUEST_REUSED, adding nothing', async () => {
    const session = Session.create({ id: 'reused' });
    const agent = new Agent({ session, model: scriptedModel([{ text: 'ok' }]) });
    await agent.run('ship it', { requestId: 'req-4' });
    const length = session.seq;
    const error = await agent
      .run('delete it', { requestId: 'req-4' })
      .catch((caught: unknown) => caught);
    expect(AgentError.isInstance(error) && error.code).toBe('REQUEST_REUSED');
    expect((error as Error).message).toContain('found it admitted at seq');
    const asSteer = await agent.steer('ship it', { requestId: 'req-4' }).catch((e: unknown) => e);
    expect(AgentError.isInstance(asSteer) && asSteer.code).toBe('REQUEST_REUSED');
    expect(session.seq).toBe(length);
  });

  it.each([
    ['an empty string', ''],
    ['a string of 201 units', 'x'.repeat(201)],
    ['a number', 7],
  ])('refuses %s as a request id with INVALID_INPUT, adding nothing', async (_, requestId) => {
    const session = Session.create({ id: 'bad-id' });
    const agent = new Agent({ session, model: scriptedModel([{ text: 'ok' }]) });
    const error = await agent
      .run('hi', { requestId: requestId as string })
      .catch((caught: unknown) => caught);
    expect(AgentError.isInstance(error) && error.code).toBe('INVALID_INPUT');
    expect((error as Error).message).toContain('expected requestId to be a non-empty string');
    expect(session.seq).toBe(0);
  });
});

describe('a queued message with a request id', () => {
  it('is queued once when resent, and the resend resolves with the message queued first', async () => {
    const session = Session.create({ id: 'queued' });
    const agent = new Agent({ session, model: scriptedModel([{ text: 'a' }, { text: 'b' }]) });
    const first = await agent.followUp('then tidy up', { requestId: 'q-1' });
    const again = await agent.followUp('then tidy up', { requestId: 'q-1' });
    expect(again).toEqual(first);
    expect(agent.pending.followUps).toHaveLength(1);
    await agent.steer('and be quick', { requestId: 's-1' });
    await agent.steer('and be quick', { requestId: 's-1' });
    expect(agent.pending.steers).toHaveLength(1);
    await agent.run('start');
    // Delivered: a resend still answers with what was queued, and queues nothing.
    expect(await agent.followUp('then tidy up', { requestId: 'q-1' })).toEqual(first);
    expect(agent.pending).toEqual({ steers: [], followUps: [] });
  });
});
