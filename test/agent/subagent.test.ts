/**
 * Subagents in the loop: a `subagentTool` call runs a child agent in a child session of the
 * parent's store, linked both ways; several run at once; a failing or cancelled child is an
 * error result of the parent's call; a child is a session like any other (resumed, forked,
 * compacted).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LanguageModelV3CallOptions } from '@ai-sdk/provider';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  Agent,
  defineTool,
  runTurn,
  SUBAGENT_FAILED,
  subagentSessionId,
  subagentTool,
  type Tool,
  type TurnResult,
  turnStreamEvent,
} from '../../src/agent/index.js';
import { compact } from '../../src/compaction/index.js';
import {
  checkInvariants,
  forkSession,
  isEventOfType,
  type JsonObject,
  Session,
  type SessionEvent,
} from '../../src/core/index.js';
import {
  inspectSession,
  openSession,
  openStore,
  type SessionStore,
} from '../../src/store/index.js';
import { scriptedModel } from '../../src/testing/index.js';

let directory: string;
let store: SessionStore;

beforeEach(async () => {
  directory = mkdtempSync(join(tmpdir(), 'palimpsest-subagent-'));
  store = await openStore(`jsonl:${directory}`);
});

afterEach(async () => {
  await store.close();
  rmSync(directory, { recursive: true, force: true });
});

/** The text of the last user message of a request: the task a child was given. */
function lastUserText(request: LanguageModelV3CallOptions): string {
  const users = request.prompt.filter((message) => message.role === 'user');
  const last = users[users.length - 1];
  if (last === undefined || typeof last.content === 'string') return '';
  return last.content.map((part) => (part.type === 'text' ? part.text : '')).join('');
}

/** Whether the request already holds a tool result (the child's tool has answered). */
function hasToolResult(request: LanguageModelV3CallOptions): boolean {
  return request.prompt.some((message) => message.role === 'tool');
}

/**
 * A meeting point both children must reach before either goes on: two calls that ran one after
 * the other would never meet, so two children finishing proves they ran at the same time.
 */
function rendezvous(parties: number): () => Promise<void> {
  let arrived = 0;
  let open: () => void = () => {};
  const all = new Promise<void>((resolve) => {
    open = resolve;
  });
  return () => {
    arrived += 1;
    if (arrived === parties) open();
    return all;
  };
}

function toolCallsOf(events: readonly SessionEvent[]): SessionEvent<'tool/call'>[] {
  return events.filter((event): event is SessionEvent<'tool/call'> =>
    isEventOfType(event, 'tool/call'),
  );
}

function toolResultsOf(events: readonly SessionEvent[]): SessionEvent<'tool/result'>[] {
  return events.filter((event): event is SessionEvent<'tool/result'> =>
    isEventOfType(event, 'tool/result'),
  );
}

/** A parent model that hands two tasks to `researcher` at once, then sums up. */
function parentModel() {
  return scriptedModel([
    {
      toolCalls: [
        { id: 'call_a', name: 'researcher', args: { task: 'Find the capital of France.' } },
        { id: 'call_b', name: 'researcher', args: { task: 'Find the capital of Spain.' } },
      ],
    },
    { text: 'Paris and Madrid.' },
  ]);
}

/**
 * Runs one turn of session `parent` in which the model calls `tool` once (call `call_a`) with
 * `args`, then answers `answer` (when the turn gets that far).
 */
async function callOnce(
  tool: Tool,
  args: JsonObject,
  options: { answer?: string; signal?: AbortSignal } = {},
): Promise<TurnResult> {
  const parent = await openSession(store, 'parent');
  try {
    return await runTurn({
      session: parent,
      model: scriptedModel([
        { toolCalls: [{ id: 'call_a', name: tool.name, args }] },
        { text: options.answer ?? 'Done.' },
      ]),
      tools: [tool],
      input: 'Go.',
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    });
  } finally {
    await parent.close();
  }
}

describe('subagentTool', () => {
  it('runs two calls of one step at once, each in a child session linked both ways', async () => {
    const meet = rendezvous(2);
    const lookup = defineTool({
      name: 'lookup',
      parameters: { type: 'object', properties: {} },
      execute: async () => {
        await meet();
        return 'looked up';
      },
    });
    const childModel = scriptedModel(
      [
        (request) =>
          hasToolResult(request)
            ? { text: `Answer to: ${lastUserText(request)}` }
            : { toolCalls: [{ name: 'lookup', args: {} }] },
      ],
      { loop: true },
    );
    const researcher = subagentTool({
      name: 'researcher',
      description: 'Researches one question.',
      instructions: 'You research one question and answer it.',
      model: childModel,
      tools: [lookup],
    });
    const parent = await openSession(store, 'parent');
    const result = await runTurn({
      session: parent,
      model: parentModel(),
      tools: [researcher],
      input: 'Capitals?',
    });
    await parent.close();

    expect(result.reason).toEqual({ kind: 'completed' });
    expect(result.toolResults.map((r) => [r.callId, r.content, r.child])).toEqual([
      [
        'call_a',
        [{ type: 'text', text: 'Answer to: Find the capital of France.' }],
        { session: 'parent/subagents/call_a' },
      ],
      [
        'call_b',
        [{ type: 'text', text: 'Answer to: Find the capital of Spain.' }],
        { session: 'parent/subagents/call_b' },
      ],
    ]);
    const stored = await inspectSession(store, 'parent', { repair: false });
    expect(checkInvariants(stored.events)).toEqual([]);
    const calls = toolCallsOf(stored.events);
    expect(calls.map((call) => call.data.child)).toEqual([
      { session: 'parent/subagents/call_a' },
      { session: 'parent/subagents/call_b' },
    ]);
    // A UI streaming the turn learns each child as its call starts.
    const starts = stored.events.flatMap((event) => {
      const streamed = turnStreamEvent(event);
      return streamed?.type === 'tool-start' ? [streamed.child?.session] : [];
    });
    expect(starts).toEqual(['parent/subagents/call_a', 'parent/subagents/call_b']);
    // Both tool/call events come before either result: the children ran side by side.
    const firstResult = toolResultsOf(stored.events)[0] as SessionEvent;
    expect(calls.every((call) => call.seq < firstResult.seq)).toBe(true);
    for (const callId of ['call_a', 'call_b']) {
      const child = await inspectSession(store, `parent/subagents/${callId}`, { repair: false });
      expect(checkInvariants(child.events)).toEqual([]);
      expect(child.header.metadata?.subagentOf).toEqual({ session: 'parent', toolCallId: callId });
      expect(child.events.filter((event) => event.type === 'turn/end')).toHaveLength(1);
      const header = child.events.find((event) => isEventOfType(event, 'request/header'));
      expect(header?.data).toMatchObject({ system: 'You research one question and answer it.' });
    }
  });

  it('answers a call whose child fails with SUBAGENT_FAILED, and the parent turn goes on', async () => {
    const researcher = subagentTool({
      name: 'researcher',
      description: 'Researches one question.',
      model: scriptedModel([{ error: { message: 'model overloaded', retryable: false } }]),
      maxRetries: 0,
    });
    const result = await callOnce(
      researcher,
      { task: 'Anything.' },
      { answer: 'The researcher failed.' },
    );

    expect(result.reason).toEqual({ kind: 'completed' });
    const [failure] = result.toolResults;
    expect(failure).toMatchObject({
      isError: true,
      code: SUBAGENT_FAILED,
      child: { session: 'parent/subagents/call_a' },
    });
    expect(JSON.stringify(failure?.content)).toContain(
      "Subagent 'researcher' (session parent/subagents/call_a) did not finish: its turn ended 'error'",
    );
    const child = await inspectSession(store, 'parent/subagents/call_a', { repair: false });
    expect(checkInvariants(child.events)).toEqual([]);
  });

  it('refuses a call without a task, and names no child it never opened in the result', async () => {
    const researcher = subagentTool({
      name: 'researcher',
      description: 'Researches one question.',
      model: scriptedModel([]),
    });
    const result = await callOnce(researcher, { question: 'x' }, { answer: 'Sorry.' });
    expect(result.toolResults[0]).toMatchObject({ code: 'INVALID_ARGUMENTS' });
    expect(result.toolResults[0]?.child).toBeUndefined();
    await expect(inspectSession(store, 'parent/subagents/call_a')).rejects.toMatchObject({
      code: 'NOT_FOUND',
    });
  });

  it('says so when the parent session has no store and the subagent was given none', async () => {
    const researcher = subagentTool({
      name: 'researcher',
      description: 'Researches one question.',
      model: scriptedModel([]),
    });
    const result = await runTurn({
      session: Session.create({ id: 'in-memory' }),
      model: scriptedModel([
        { toolCalls: [{ id: 'call_a', name: 'researcher', args: { task: 'x' } }] },
        { text: 'Sorry.' },
      ]),
      tools: [researcher],
      input: 'Go.',
    });
    expect(result.toolResults[0]).toMatchObject({ code: SUBAGENT_FAILED });
    expect(JSON.stringify(result.toolResults[0]?.content)).toContain('has no store to run in');
  });

  it('cancels the children when the parent turn is cancelled', async () => {
    const controller = new AbortController();
    const stall = defineTool({
      name: 'stall',
      parameters: { type: 'object', properties: {} },
      execute: (_args, { signal }) => {
        controller.abort();
        return new Promise<string>((_, reject) => {
          signal.addEventListener('abort', () => reject(new Error('stopped')));
        });
      },
    });
    const researcher = subagentTool({
      name: 'researcher',
      description: 'Researches one question.',
      model: scriptedModel([{ toolCalls: [{ name: 'stall', args: {} }] }]),
      tools: [stall],
    });
    const result = await callOnce(researcher, { task: 'Wait.' }, { signal: controller.signal });

    expect(result.reason.kind).toBe('aborted');
    expect(result.toolResults[0]).toMatchObject({
      code: 'TOOL_ABORTED',
      child: { session: 'parent/subagents/call_a' },
    });
    // The child closes its turn as cancelled and releases its session on its own time.
    await expect
      .poll(async () => {
        const child = await inspectSession(store, 'parent/subagents/call_a', { repair: false });
        return child.events.findLast((event) => event.type === 'turn/end')?.data;
      })
      .toMatchObject({ turn: 1, reason: { kind: 'aborted' } });
    const child = await openSession(store, 'parent/subagents/call_a');
    expect(checkInvariants(child.events)).toEqual([]);
    await child.close();
  });

  it('leaves a child that is a session like any other: continued, forked and compacted', async () => {
    const researcher = subagentTool({
      name: 'researcher',
      description: 'Researches one question.',
      model: scriptedModel([{ text: 'Paris. '.repeat(200) }]),
    });
    await callOnce(researcher, { task: 'France?' }, { answer: 'Paris.' });

    const id = subagentSessionId('parent', 'call_a');
    const child = await openSession(store, id);
    const agent = new Agent({ session: child, model: scriptedModel([{ text: 'Madrid.' }]) });
    expect((await agent.run('And Spain?')).text).toBe('Madrid.');
    const summary = await compact(child, {
      model: scriptedModel([{ text: 'Asked for two capitals.' }]),
      keepRecentTokens: 0,
    });
    expect(summary.replaced).toBe(true);
    expect(checkInvariants(child.events)).toEqual([]);
    const fork = forkSession(child);
    expect(fork.header.parentSession).toBe(id);
    expect(fork.header.metadata?.subagentOf).toEqual({ session: 'parent', toolCallId: 'call_a' });
    await child.close();
  });

  it('rejects a definition without a description, or with child tools it cannot run', () => {
    expect(() =>
      subagentTool({ name: 'researcher', description: '', model: scriptedModel([]) }),
    ).toThrow(/subagent 'researcher': expected a description/);
    const echo = defineTool({ name: 'echo', parameters: { type: 'object' }, execute: () => '' });
    expect(() =>
      subagentTool({
        name: 'researcher',
        description: 'Researches.',
        model: scriptedModel([]),
        tools: [echo, echo],
      }),
    ).toThrow(expect.objectContaining({ code: 'INVALID_TOOL' }));
  });
});

describe('subagentSessionId', () => {
  it('names the child after its parent and call, as imported subagents are named', () => {
    expect(subagentSessionId('chat-1', 'toolu_01')).toBe('chat-1/subagents/toolu_01');
  });

  it('falls back to a digest for an id over the store limit, the same for the same call', () => {
    const long = 'p'.repeat(190);
    const id = subagentSessionId(long, 'call_1');
    expect(id).toMatch(/^subagent-[0-9a-f]{64}$/);
    expect(subagentSessionId(long, 'call_1')).toBe(id);
    expect(subagentSessionId(long, 'call_2')).not.toBe(id);
  });
});
