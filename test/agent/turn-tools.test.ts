/**
 * Tools in a turn: calls and their results (sequential, parallel, failing), tool definitions, and
 * the step hooks that see them.
 */
import { describe, expect, it } from 'vitest';
import { AgentError, defineTool, runTurn, TOOL_ERROR } from '../../src/agent/index.js';
import type { ToolResultData } from '../../src/core/index.js';
import { Session } from '../../src/core/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { dataOf, delay, echo, expectValidLog, lastTurnEnd, shape } from './helpers.js';

describe('tool calls', () => {
  it('runs a tool and records tool/call then a tool/result citing it, then calls the model again', async () => {
    const session = Session.create();
    const model = scriptedModel([
      { toolCalls: [{ name: 'echo', args: { text: 'ping' } }] },
      { text: 'The tool said ping.' },
    ]);
    const result = await runTurn({ session, model, tools: [echo], input: 'use echo' });

    expect(shape(session.events)).toEqual([
      'turn/start',
      'user/message',
      'step/start',
      'request/header',
      'chunks',
      'assistant/message',
      'tool/call',
      'tool/result',
      'step/end',
      'step/start',
      'chunks',
      'assistant/message',
      'step/end',
      'turn/end',
    ]);
    const call = session.events.find((event) => event.type === 'tool/call');
    const toolResult = session.events.find((event) => event.type === 'tool/result');
    expect(toolResult?.sourceEventSeqs).toEqual([call?.seq]);
    const [resultData] = dataOf<ToolResultData>(session, 'tool/result');
    expect(resultData?.message.content[0]).toEqual({
      type: 'tool-result',
      toolCallId: 'call_0_0',
      content: [{ type: 'text', text: 'ping' }],
    });
    expect(result.steps).toBe(2);
    expect(model.calls[1]?.prompt.at(-1)).toEqual({
      role: 'tool',
      content: [
        {
          type: 'tool-result',
          toolCallId: 'call_0_0',
          toolName: 'echo',
          output: { type: 'text', value: 'ping' },
        },
      ],
    });
    expectValidLog(session);
  });

  it('runs parallel calls concurrently and appends their results in call order', async () => {
    const started: string[] = [];
    const finished: string[] = [];
    const wait = defineTool({
      name: 'wait',
      parameters: {
        type: 'object',
        properties: { ms: { type: 'number' }, name: { type: 'string' } },
      },
      execute: async (args) => {
        const name = String(args.name);
        started.push(name);
        await delay(Number(args.ms));
        finished.push(name);
        return name;
      },
    });
    const session = Session.create();
    const model = scriptedModel([
      {
        toolCalls: [
          { name: 'wait', args: { ms: 60, name: 'slow' } },
          { name: 'wait', args: { ms: 1, name: 'fast' } },
        ],
      },
      { text: 'done' },
    ]);
    await runTurn({ session, model, tools: [wait], input: 'go' });

    expect(started).toEqual(['slow', 'fast']);
    expect(finished).toEqual(['fast', 'slow']);
    const results = dataOf<ToolResultData>(session, 'tool/result').map(
      (data) => data.message.content[0].toolCallId,
    );
    expect(results).toEqual(['call_0_0', 'call_0_1']);
    expect(shape(session.events).slice(5, 10)).toEqual([
      'assistant/message',
      'tool/call',
      'tool/call',
      'tool/result',
      'tool/result',
    ]);
    expectValidLog(session);
  });

  it.each([
    [
      'arguments that are not JSON',
      'echo',
      '{"text": "unterminated',
      TOOL_ERROR.invalidArguments,
      'not valid JSON',
    ],
    ['arguments that fail the schema', 'echo', { text: 42 }, TOOL_ERROR.invalidArguments, 'text:'],
    [
      'arguments that are not an object',
      'echo',
      '[1,2]',
      TOOL_ERROR.invalidArguments,
      'must be a JSON object',
    ],
    ['an unknown tool', 'rm_rf', {}, TOOL_ERROR.unknownTool, "no tool named 'rm_rf'"],
  ])(
    'turns %s into an error result the model reads, and keeps going',
    async (_label, name, args, code, text) => {
      const session = Session.create();
      const model = scriptedModel([{ toolCalls: [{ name, args }] }, { text: 'sorry' }]);
      const result = await runTurn({ session, model, tools: [echo], input: 'x' });

      const [data] = dataOf<ToolResultData>(session, 'tool/result');
      expect(data?.error?.code).toBe(code);
      expect(data?.message.content[0].isError).toBe(true);
      expect(JSON.stringify(data?.message.content[0].content)).toContain(text);
      expect(result.reason).toEqual({ kind: 'completed' });
      const resent = model.calls[1]?.prompt.at(-1);
      expect(resent).toMatchObject({ role: 'tool', content: [{ output: { type: 'error-text' } }] });
      expectValidLog(session);
    },
  );

  it('turns a throwing tool into a TOOL_FAILED result with its message', async () => {
    const broken = defineTool({
      name: 'broken',
      parameters: { type: 'object' },
      execute: () => {
        throw new Error('disk on fire');
      },
    });
    const session = Session.create();
    await runTurn({
      session,
      model: scriptedModel([{ toolCalls: [{ name: 'broken', args: {} }] }, { text: 'ok' }]),
      tools: [broken],
      input: 'x',
    });
    const [data] = dataOf<ToolResultData>(session, 'tool/result');
    expect(data?.error).toMatchObject({
      code: 'TOOL_FAILED',
      message: "Tool 'broken' failed: disk on fire",
      exception: { name: 'Error', message: 'disk on fire' },
    });
    expectValidLog(session);
  });

  it('turns a non-JSON tool return value into a TOOL_FAILED result', async () => {
    const weird = defineTool({
      name: 'weird',
      parameters: { type: 'object' },
      execute: () => ({ when: Number.NaN }),
    });
    const session = Session.create();
    await runTurn({
      session,
      model: scriptedModel([{ toolCalls: [{ name: 'weird', args: {} }] }, { text: 'ok' }]),
      tools: [weird],
      input: 'x',
    });
    expect(dataOf<ToolResultData>(session, 'tool/result')[0]?.error?.code).toBe('TOOL_FAILED');
  });

  it('sends JSON values as their JSON text and passes the call context to the tool', async () => {
    const seen: unknown[] = [];
    const info = defineTool({
      name: 'info',
      parameters: { type: 'object' },
      execute: (_args, context) => {
        seen.push([context.callId, context.turn, context.step, context.signal.aborted]);
        return { ok: true, list: [1, 2] };
      },
    });
    const session = Session.create();
    await runTurn({
      session,
      model: scriptedModel([
        { toolCalls: [{ name: 'info', args: {}, id: 'c-7' }] },
        { text: 'ok' },
      ]),
      tools: [info],
      input: 'x',
    });
    expect(seen).toEqual([['c-7', 1, 1, false]]);
    expect(dataOf<ToolResultData>(session, 'tool/result')[0]?.message.content[0].content).toEqual([
      { type: 'text', text: '{"ok":true,"list":[1,2]}' },
    ]);
  });
});

describe('tool definitions', () => {
  it('exports a zod schema as draft-07 JSON Schema without $schema', () => {
    expect(echo.parameters).toEqual({
      type: 'object',
      properties: { text: { type: 'string' } },
      required: ['text'],
    });
  });

  it.each([
    [
      'a name with spaces',
      { name: 'read file', parameters: { type: 'object' }, execute: () => '' },
      'name matching',
    ],
    [
      'a non-object schema',
      { name: 'x', parameters: { type: 'string' }, execute: () => '' },
      "type 'object'",
    ],
    ['a missing execute', { name: 'x', parameters: { type: 'object' } }, 'execute function'],
  ])('refuses %s with INVALID_TOOL', (_label, spec, message) => {
    expect(() => defineTool(spec as Parameters<typeof defineTool>[0])).toThrow(message);
    try {
      defineTool(spec as Parameters<typeof defineTool>[0]);
    } catch (error) {
      expect(error).toBeInstanceOf(AgentError);
      expect((error as AgentError).code).toBe('INVALID_TOOL');
    }
  });

  it('refuses two tools with the same name before recording anything', async () => {
    const session = Session.create();
    await expect(
      runTurn({ session, model: scriptedModel([]), tools: [echo, echo], input: 'x' }),
    ).rejects.toMatchObject({ code: 'INVALID_TOOL' });
    expect(session.events).toHaveLength(0);
  });
});

describe('hooks', () => {
  it('lets beforeStep append context that the request then carries', async () => {
    const session = Session.create();
    const model = scriptedModel([{ text: 'ok' }]);
    await runTurn({
      session,
      model,
      input: 'x',
      hooks: {
        beforeStep: ({ session: live }) => {
          live.append(
            'context/message',
            {
              id: 'ctx',
              role: 'user',
              content: [{ type: 'text', text: 'today is Monday' }],
              source: { kind: 'context' },
            },
            { surfaceOp: 'append' },
          );
        },
      },
    });
    expect(JSON.stringify(model.calls[0]?.prompt)).toContain('today is Monday');
    expectValidLog(session);
  });

  it('calls afterStep with the message and tool results, and onEvent for every appended event', async () => {
    const session = Session.create();
    const outcomes: unknown[] = [];
    const seen: number[] = [];
    await runTurn({
      session,
      model: scriptedModel([
        { toolCalls: [{ name: 'echo', args: { text: 'hi' } }] },
        { text: 'bye' },
      ]),
      tools: [echo],
      input: 'x',
      hooks: {
        afterStep: ({ step, finishReason, toolResults }) => {
          outcomes.push([step, finishReason, toolResults.length]);
        },
        onEvent: (event) => seen.push(event.seq),
      },
    });
    expect(outcomes).toEqual([
      [1, 'tool-calls', 1],
      [2, 'stop', 0],
    ]);
    expect(seen).toEqual(session.events.map((event) => event.seq));
  });

  it('closes the step and the turn when a hook throws, then rethrows', async () => {
    const session = Session.create();
    const failure = new Error('hook bug');
    await expect(
      runTurn({
        session,
        model: scriptedModel([{ toolCalls: [{ name: 'echo', args: { text: 'hi' } }] }]),
        tools: [echo],
        input: 'x',
        hooks: {
          afterStep: () => {
            throw failure;
          },
        },
      }),
    ).rejects.toBe(failure);
    expect(lastTurnEnd(session).reason).toEqual({
      kind: 'error',
      error: { message: 'hook bug', code: 'LOOP_FAILED' },
    });
    expectValidLog(session);
  });
});
