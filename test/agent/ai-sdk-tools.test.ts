import { jsonSchema as aiJsonSchema, tool, zodSchema } from 'ai';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import {
  AgentError,
  defineTool,
  fromAiSdkTool,
  jsonSchema,
  runTurn,
  type ToolList,
} from '../../src/agent/index.js';
import { type RequestHeaderData, Session, type ToolResultData } from '../../src/core/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { dataOf, expectValidLog } from './helpers.js';

function callThenAnswer(name: string, args: Record<string, string | number>) {
  return scriptedModel([{ toolCalls: [{ id: 'call_1', name, args }] }, { text: 'done' }]);
}

function firstResult(session: Session): ToolResultData | undefined {
  return dataOf<ToolResultData>(session, 'tool/result')[0];
}

function resultText(session: Session): string {
  const block = firstResult(session)?.message.content[0]?.content[0];
  return block?.type === 'text' ? block.text : '';
}

describe('AI SDK tool() objects', () => {
  it('run from a tools record, keyed by name, with a zod inputSchema validated and typed', async () => {
    const session = Session.create();
    const seen: { city: string; toolCallId: string; aborted: boolean }[] = [];
    const weather = tool({
      description: 'Current weather for a city.',
      inputSchema: z.object({ city: z.string() }),
      execute: async ({ city }, { toolCallId, abortSignal }) => {
        seen.push({ city, toolCallId, aborted: abortSignal?.aborted ?? true });
        return { city, celsius: 21 };
      },
    });
    const model = callThenAnswer('weather', { city: 'Lisbon' });
    await runTurn({ session, model, tools: { weather }, input: 'warm?' });
    expect(seen).toEqual([{ city: 'Lisbon', toolCallId: 'call_1', aborted: false }]);
    expect(resultText(session)).toBe('{"city":"Lisbon","celsius":21}');
    const [header] = dataOf<RequestHeaderData>(session, 'request/header');
    expect(header?.tools?.[0]).toMatchObject({
      name: 'weather',
      description: 'Current weather for a city.',
      parameters: { type: 'object', properties: { city: { type: 'string' } } },
    });
    expect(model.calls[0]?.tools?.[0]).toMatchObject({ type: 'function', name: 'weather' });
    expectValidLog(session);
  });

  it('answers arguments that fail the zod schema with INVALID_ARGUMENTS naming the field', async () => {
    const session = Session.create();
    let ran = false;
    const weather = tool({
      inputSchema: z.object({ city: z.string() }),
      execute: async () => {
        ran = true;
        return 'x';
      },
    });
    await runTurn({
      session,
      model: callThenAnswer('weather', { city: 7 }),
      tools: { weather },
      input: 'q',
    });
    expect(ran).toBe(false);
    expect(firstResult(session)?.error?.code).toBe('INVALID_ARGUMENTS');
    expect(firstResult(session)?.error?.message).toContain('city');
  });

  it('run with an AI SDK jsonSchema() inputSchema, using its validate when it has one', async () => {
    const session = Session.create();
    const add = tool({
      inputSchema: aiJsonSchema<{ a: number; b: number }>(
        { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } } },
        {
          validate: (value) =>
            typeof (value as { a?: unknown }).a === 'number'
              ? { success: true, value: value as { a: number; b: number } }
              : { success: false, error: new Error('a must be a number') },
        },
      ),
      execute: async ({ a, b }) => String(a + b),
    });
    await runTurn({
      session,
      model: callThenAnswer('add', { a: 2, b: 3 }),
      tools: { add },
      input: '2+3',
    });
    expect(resultText(session)).toBe('5');
    const bad = Session.create();
    await runTurn({
      session: bad,
      model: callThenAnswer('add', { a: 'two', b: 3 }),
      tools: { add },
      input: 'q',
    });
    expect(firstResult(bad)?.error).toMatchObject({ code: 'INVALID_ARGUMENTS' });
    expect(firstResult(bad)?.error?.message).toContain('a must be a number');
  });

  it('run with zodSchema() and lazy schemas too', async () => {
    const schema = zodSchema(z.object({ text: z.string() }));
    const echo = tool({ inputSchema: schema, execute: async ({ text }) => text.toUpperCase() });
    // A lazy schema (the AI SDK's LazySchema): a function that returns the schema.
    const lazy = tool({
      inputSchema: () => schema,
      execute: async ({ text }) => text.toLowerCase(),
    });
    for (const [tools, expected] of [
      [{ echo }, 'HI'],
      [{ echo: lazy }, 'hi'],
    ] as const) {
      const session = Session.create();
      await runTurn({ session, model: callThenAnswer('echo', { text: 'hI' }), tools, input: 'q' });
      expect(resultText(session)).toBe(expected);
    }
  });

  it('mix with defineTool tools in a record or, through fromAiSdkTool, in a list', async () => {
    const upper = tool({
      inputSchema: z.object({ text: z.string() }),
      execute: async ({ text }) => text.toUpperCase(),
    });
    const lower = defineTool({
      name: 'lower',
      parameters: z.object({ text: z.string() }),
      execute: ({ text }) => text.toLowerCase(),
    });
    for (const tools of [{ upper, lower }, [fromAiSdkTool('upper', upper), lower]]) {
      const session = Session.create();
      await runTurn({ session, model: callThenAnswer('upper', { text: 'a' }), tools, input: 'q' });
      expect(resultText(session)).toBe('A');
    }
  });

  it('keep the last value of a streaming execute and apply toModelOutput', async () => {
    const session = Session.create();
    const progress = tool({
      inputSchema: z.object({}),
      async *execute() {
        yield { status: 'working' };
        yield { status: 'done', files: 3 };
      },
      toModelOutput: ({ output }) => ({ type: 'text', value: `status ${output.status}` }),
    });
    await runTurn({
      session,
      model: callThenAnswer('progress', {}),
      tools: { progress },
      input: 'q',
    });
    expect(resultText(session)).toBe('status done');
  });

  it('honour needsApproval: denied without a beforeToolCall hook, asked with one', async () => {
    let ran = 0;
    const remove = tool({
      inputSchema: z.object({ path: z.string() }),
      needsApproval: async ({ path }) => path.startsWith('/'),
      execute: async () => {
        ran += 1;
        return 'removed';
      },
    });
    const denied = Session.create();
    await runTurn({
      session: denied,
      model: callThenAnswer('remove', { path: '/etc' }),
      tools: { remove },
      input: 'q',
    });
    expect(firstResult(denied)?.error?.code).toBe('TOOL_DENIED');
    const asked = Session.create();
    const flags: boolean[] = [];
    await runTurn({
      session: asked,
      model: callThenAnswer('remove', { path: '/etc' }),
      tools: { remove },
      input: 'q',
      hooks: {
        beforeToolCall: ({ needsApproval }) => {
          flags.push(needsApproval);
          return { action: 'allow' };
        },
      },
    });
    expect(flags).toEqual([true]);
    expect(ran).toBe(1);
  });

  it('are refused with INVALID_TOOL when the loop cannot run them, saying why', async () => {
    const session = Session.create();
    const clientSide = tool({ inputSchema: z.object({}) });
    const cases: [unknown, string][] = [
      [{ clientSide }, 'expected an execute function'],
      [
        { web: { type: 'provider', id: 'openai.web_search', inputSchema: z.object({}), args: {} } },
        'found a provider-defined tool',
      ],
      [
        { 'bad name': tool({ inputSchema: z.object({}), execute: async () => 'x' }) },
        'found "bad name"',
      ],
      [[tool({ inputSchema: z.object({}), execute: async () => 'x' })], 'has no name of its own'],
      [
        { other: defineTool({ name: 'lower', parameters: {}, execute: () => 'x' }) },
        "found the tool 'lower'",
      ],
    ];
    for (const [tools, message] of cases) {
      const attempt = runTurn({
        session,
        model: scriptedModel([]),
        // An untyped caller (JavaScript, configuration) can pass anything here.
        tools: tools as ToolList,
        input: 'q',
      });
      await expect(attempt).rejects.toSatisfy(
        (error) =>
          AgentError.isInstance(error) &&
          error.code === 'INVALID_TOOL' &&
          error.message.includes(message),
      );
    }
    expect(session.events).toEqual([]);
  });
});

describe('jsonSchema<T>()', () => {
  it('types execute’s arguments for a plain JSON Schema and leaves the schema as it is', async () => {
    const schema = {
      type: 'object',
      properties: { a: { type: 'number' }, b: { type: 'number' } },
      required: ['a', 'b'],
    } as const;
    const add = defineTool({
      name: 'add',
      parameters: jsonSchema<{ a: number; b: number }>({
        ...schema,
        required: [...schema.required],
      }),
      execute: (args) => {
        expectTypeOf(args).toEqualTypeOf<{ a: number; b: number }>();
        return String(args.a + args.b);
      },
    });
    expect(add.parameters).toEqual({ ...schema, required: ['a', 'b'] });
    const session = Session.create();
    await runTurn({
      session,
      model: callThenAnswer('add', { a: 2, b: 3 }),
      tools: [add],
      input: 'q',
    });
    expect(resultText(session)).toBe('5');
  });

  it('checks the arguments only to be a JSON object, as for any plain JSON Schema', async () => {
    const session = Session.create();
    const add = defineTool({
      name: 'add',
      parameters: jsonSchema<{ a: number }>({
        type: 'object',
        properties: { a: { type: 'number' } },
      }),
      execute: ({ a }) => `got ${typeof a}`,
    });
    await runTurn({ session, model: callThenAnswer('add', { a: 'x' }), tools: [add], input: 'q' });
    expect(resultText(session)).toBe('got string');
  });
});
