import type { LanguageModelV3Prompt } from '@ai-sdk/provider';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  AgentError,
  defineTool,
  runTurn,
  TOOL_ERROR,
  type ToolCallRequest,
  type TurnHooks,
} from '../../src/agent/index.js';
import {
  type JsonObject,
  planRepair,
  Session,
  type ToolCallData,
  type ToolResultData,
} from '../../src/core/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { dataOf, expectValidLog, outline } from './helpers.js';

function shellTool(ran: string[]) {
  return defineTool({
    name: 'shell',
    description: 'Runs a command.',
    parameters: z.object({ cmd: z.string() }),
    execute: ({ cmd }) => {
      ran.push(cmd);
      return `ran ${cmd}`;
    },
  });
}

function callThenAnswer(args: JsonObject = { cmd: 'rm -rf build' }) {
  return scriptedModel([{ toolCalls: [{ id: 'call_1', name: 'shell', args }] }, { text: 'done' }]);
}

/** One turn in which the model calls `shell` with `args` once, under `hooks`. */
async function shellTurn(hooks: TurnHooks, args: JsonObject = { cmd: 'ls' }) {
  const session = Session.create();
  const ran: string[] = [];
  const model = callThenAnswer(args);
  const result = await runTurn({ session, model, tools: [shellTool(ran)], input: 'x', hooks });
  const toolResult = dataOf<ToolResultData>(session, 'tool/result')[0];
  return { session, ran, model, result, toolResult };
}

/** The text the model reads for each tool result of a request, with its output type. */
function toolOutputs(prompt: LanguageModelV3Prompt): { type: string; value: unknown }[] {
  return prompt.flatMap((message) =>
    message.role === 'tool'
      ? message.content.flatMap((part) =>
          part.type === 'tool-result'
            ? [
                {
                  type: part.output.type,
                  value: 'value' in part.output ? part.output.value : undefined,
                },
              ]
            : [],
        )
      : [],
  );
}

describe('beforeToolCall', () => {
  it('denies a call with a reason the model reads as a TOOL_DENIED error, and the tool never runs', async () => {
    const session = Session.create();
    const ran: string[] = [];
    const model = callThenAnswer();
    await runTurn({
      session,
      model,
      tools: [shellTool(ran)],
      input: 'clean up',
      hooks: {
        beforeToolCall: ({ input }) =>
          JSON.stringify(input).includes('rm -rf')
            ? { action: 'deny', reason: 'destructive commands need a human' }
            : undefined,
      },
    });
    expect(ran).toEqual([]);
    expect(outline(session.events)).not.toContain('tool/call');
    const [result] = dataOf<ToolResultData>(session, 'tool/result');
    expect(result?.error?.code).toBe(TOOL_ERROR.denied);
    expect(result?.error?.code).toBe('TOOL_DENIED');
    expect(result?.decision).toEqual({
      action: 'deny',
      reason: 'destructive commands need a human',
    });
    const seen = toolOutputs(model.calls[1]?.prompt ?? []);
    expect(seen).toHaveLength(1);
    expect(seen[0]?.type).toBe('error-text');
    expect(String(seen[0]?.value)).toContain('destructive commands need a human');
    expectValidLog(session);
  });

  it('records an allow decision on the tool/call, also when the hook returns nothing', async () => {
    const requests: ToolCallRequest[] = [];
    const { session, ran } = await shellTurn({
      beforeToolCall: (request) => {
        requests.push(request);
        return undefined;
      },
    });
    expect(ran).toEqual(['ls']);
    expect(requests[0]).toMatchObject({
      turn: 1,
      step: 1,
      callId: 'call_1',
      name: 'shell',
      arguments: '{"cmd":"ls"}',
      input: { cmd: 'ls' },
      needsApproval: false,
    });
    expect(dataOf<ToolCallData>(session, 'tool/call')[0]?.decision).toEqual({ action: 'allow' });
  });

  it('runs a call with changed arguments and keeps the model’s in the log', async () => {
    const { session, ran } = await shellTurn(
      { beforeToolCall: () => ({ action: 'modify', arguments: { cmd: 'rm -rf ./build' } }) },
      { cmd: 'rm -rf /' },
    );
    expect(ran).toEqual(['rm -rf ./build']);
    const [call] = dataOf<ToolCallData>(session, 'tool/call');
    expect(call?.arguments).toBe('{"cmd":"rm -rf ./build"}');
    expect(call?.decision).toEqual({ action: 'modify', originalArguments: '{"cmd":"rm -rf /"}' });
    expectValidLog(session);
  });

  it('validates changed arguments against the tool’s schema like the model’s', async () => {
    const { ran, toolResult } = await shellTurn({
      beforeToolCall: () => ({ action: 'modify', arguments: { cmd: 42 } }),
    });
    expect(ran).toEqual([]);
    expect(toolResult?.error?.code).toBe('INVALID_ARGUMENTS');
  });

  it('asks about the calls of one step in call order and runs only the allowed ones', async () => {
    const session = Session.create();
    const ran: string[] = [];
    const asked: string[] = [];
    const model = scriptedModel([
      {
        toolCalls: [
          { id: 'a', name: 'shell', args: { cmd: 'one' } },
          { id: 'b', name: 'shell', args: { cmd: 'two' } },
          { id: 'c', name: 'shell', args: { cmd: 'three' } },
        ],
      },
      { text: 'ok' },
    ]);
    const result = await runTurn({
      session,
      model,
      tools: [shellTool(ran)],
      input: 'x',
      hooks: {
        beforeToolCall: async ({ callId, session: log }) => {
          asked.push(callId);
          // A denial is in the log as soon as it is made, before the next call is decided.
          if (callId === 'c') expect(outline(log.events).slice(-1)).toEqual(['tool/result']);
          return callId === 'b' ? { action: 'deny', reason: 'not two' } : { action: 'allow' };
        },
      },
    });
    expect(asked).toEqual(['a', 'b', 'c']);
    expect(ran.sort()).toEqual(['one', 'three']);
    expect(result.toolCalls.map((call) => [call.callId, call.started])).toEqual([
      ['a', true],
      ['b', false],
      ['c', true],
    ]);
    expectValidLog(session);
  });

  it('answers a call whose tool needs approval with TOOL_DENIED when the turn has no hook', async () => {
    const session = Session.create();
    let ran = false;
    const guarded = defineTool({
      name: 'shell',
      parameters: z.object({ cmd: z.string() }),
      needsApproval: true,
      execute: () => {
        ran = true;
        return 'ran';
      },
    });
    await runTurn({ session, model: callThenAnswer(), tools: [guarded], input: 'x' });
    expect(ran).toBe(false);
    const [result] = dataOf<ToolResultData>(session, 'tool/result');
    expect(result?.error?.code).toBe('TOOL_DENIED');
    expect(result?.error?.message).toContain('needs approval');
    expectValidLog(session);
  });

  it('tells the hook which calls need approval, from the tool’s own rule', async () => {
    const session = Session.create();
    const flags: boolean[] = [];
    const guarded = defineTool({
      name: 'shell',
      parameters: z.object({ cmd: z.string() }),
      needsApproval: (args) => String(args.cmd).startsWith('rm'),
      execute: () => 'ran',
    });
    const model = scriptedModel([
      {
        toolCalls: [
          { id: 'a', name: 'shell', args: { cmd: 'ls' } },
          { id: 'b', name: 'shell', args: { cmd: 'rm x' } },
        ],
      },
      { text: 'ok' },
    ]);
    await runTurn({
      session,
      model,
      tools: [guarded],
      input: 'x',
      hooks: {
        beforeToolCall: ({ needsApproval }) => {
          flags.push(needsApproval);
          return undefined;
        },
      },
    });
    expect(flags).toEqual([false, true]);
  });

  it('refuses a malformed decision with INVALID_HOOK_RESULT and leaves a closed log', async () => {
    const session = Session.create();
    const attempt = runTurn({
      session,
      model: callThenAnswer(),
      tools: [shellTool([])],
      input: 'x',
      hooks: {
        // A decision read from user input at run time, as an untyped caller would pass it.
        beforeToolCall: () => JSON.parse('{"action":"maybe"}'),
      },
    });
    await expect(attempt).rejects.toSatisfy(
      (error) =>
        AgentError.isInstance(error) &&
        error.code === 'INVALID_HOOK_RESULT' &&
        error.message.includes("expected undefined or {action: 'allow' | 'deny' | 'modify'}") &&
        error.message.includes('found an object with keys action'),
    );
    expectValidLog(session);
  });

  it('answers calls whose decision was pending when the turn was cancelled as not started', async () => {
    const session = Session.create();
    const controller = new AbortController();
    const ran: string[] = [];
    const result = await runTurn({
      session,
      model: callThenAnswer(),
      tools: [shellTool(ran)],
      input: 'x',
      signal: controller.signal,
      hooks: {
        // A human who never answers; Ctrl-C cancels the turn.
        beforeToolCall: () => {
          controller.abort('user left');
          return new Promise(() => {});
        },
      },
    });
    expect(result.reason).toEqual({ kind: 'aborted', cause: 'user left' });
    expect(ran).toEqual([]);
    const [toolResult] = dataOf<ToolResultData>(session, 'tool/result');
    expect(toolResult?.error?.code).toBe('TOOL_ABORTED');
    expect(toolResult?.error?.message).toContain('before this tool started');
    expectValidLog(session);
  });

  it('leaves a denial that crash repair does not answer again', async () => {
    const { session } = await shellTurn({
      beforeToolCall: () => ({ action: 'deny', reason: 'no' }),
    });
    // Cut the log right after the denial, as a crash would.
    const cut = session.events.findIndex((event) => event.type === 'tool/result') + 1;
    const crashed = Session.create({ seed: session.events.slice(0, cut) });
    const closers = planRepair(crashed.events);
    expect(closers.map((closer) => closer.type)).toEqual(['step/end', 'turn/end']);
  });
});

describe('afterToolCall', () => {
  it('replaces what the model reads and keeps the tool’s own result in the log', async () => {
    const {
      session,
      model,
      toolResult: result,
    } = await shellTurn(
      {
        afterToolCall: ({ content, name, arguments: args }) => {
          expect(name).toBe('shell');
          expect(args).toBe('{"cmd":"cat .env"}');
          expect(content).toEqual([{ type: 'text', text: 'ran cat .env' }]);
          return { content: '[secret output withheld]' };
        },
      },
      { cmd: 'cat .env' },
    );
    expect(result?.message.content[0]?.content).toEqual([
      { type: 'text', text: '[secret output withheld]' },
    ]);
    expect(result?.replaced).toEqual({
      by: 'afterToolCall',
      content: [{ type: 'text', text: 'ran cat .env' }],
    });
    expect(toolOutputs(model.calls[1]?.prompt ?? [])).toEqual([
      { type: 'text', value: '[secret output withheld]' },
    ]);
    expectValidLog(session);
  });

  it('can turn a result into an error with its own code', async () => {
    const { toolResult: result } = await shellTurn({
      afterToolCall: () => ({
        content: 'policy: output blocked',
        error: { code: 'POLICY_BLOCKED', message: 'policy: output blocked' },
      }),
    });
    expect(result?.error?.code).toBe('POLICY_BLOCKED');
    expect(result?.message.content[0]?.isError).toBe(true);
  });

  it('keeps the result when it returns nothing, and records no replacement', async () => {
    const { toolResult: result } = await shellTurn({ afterToolCall: () => undefined });
    expect(result?.replaced).toBeUndefined();
    expect(result?.message.content[0]?.content).toEqual([{ type: 'text', text: 'ran ls' }]);
  });

  it('refuses a malformed replacement with INVALID_HOOK_RESULT', async () => {
    const session = Session.create();
    await expect(
      runTurn({
        session,
        model: callThenAnswer({ cmd: 'ls' }),
        tools: [shellTool([])],
        input: 'x',
        hooks: { afterToolCall: () => JSON.parse('{"content":42}') },
      }),
    ).rejects.toSatisfy(
      (error) =>
        AgentError.isInstance(error) &&
        error.code === 'INVALID_HOOK_RESULT' &&
        error.message.includes('content as a string or content blocks, found number'),
    );
    expectValidLog(session);
  });
});
