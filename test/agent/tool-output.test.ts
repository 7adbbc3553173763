/**
 * What tools return (issue 12): values convert like JSON.stringify, the rest is refused with a
 * path; failures reach the developer (hook, and the error's details in the log).
 */
import { describe, expect, it } from 'vitest';
import { defineTool, runTurn, type ToolFailure, toolContent } from '../../src/agent/index.js';
import { Session, type ToolResultData } from '../../src/core/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { dataOf, expectValidLog } from './helpers.js';

async function resultOf(execute: () => unknown): Promise<{
  session: Session;
  result: ToolResultData;
  failures: ToolFailure[];
}> {
  const tool = defineTool({
    name: 'probe',
    parameters: { type: 'object' },
    execute: execute as () => string,
  });
  const session = Session.create();
  const failures: ToolFailure[] = [];
  await runTurn({
    session,
    model: scriptedModel([{ toolCalls: [{ name: 'probe', args: {} }] }, { text: 'ok' }]),
    tools: [tool],
    input: 'go',
    hooks: { onToolError: (failure) => failures.push(failure) },
  });
  const [result] = dataOf<ToolResultData>(session, 'tool/result');
  if (result === undefined) throw new Error('no tool/result');
  expectValidLog(session);
  return { session, result, failures };
}

function textOf(result: ToolResultData): string {
  const block = result.message.content[0];
  return block?.content.map((item) => (item.type === 'text' ? item.text : '')).join('') ?? '';
}

class Stats {
  size = 1;
}

describe('tool return values convert like JSON.stringify', () => {
  it('drops undefined fields, writes dates as ISO text and honours toJSON', async () => {
    const { result } = await resultOf(() => ({
      when: new Date(0),
      skipped: undefined,
      list: [1, undefined],
      custom: { toJSON: () => 'custom!' },
      zero: -0,
    }));
    expect(result.error).toBeUndefined();
    expect(JSON.parse(textOf(result))).toEqual({
      when: '1970-01-01T00:00:00.000Z',
      list: [1, null],
      custom: 'custom!',
      zero: 0,
    });
  });

  it.each([
    ['a Map', () => ({ stats: { mtime: new Map() } }), 'result.stats.mtime', 'a Map'],
    ['a Set', () => ({ tags: new Set(['a']) }), 'result.tags', 'a Set'],
    ['a Buffer', () => ({ files: [{ data: Buffer.from('x') }] }), 'result.files[0].data', 'Buffer'],
    ['a class instance', () => ({ stats: new Stats() }), 'result.stats', 'Stats'],
    ['a function', () => ({ run: () => 1 }), 'result.run', 'function'],
    ['a bigint', () => ({ size: 10n }), 'result.size', 'bigint'],
    ['NaN', () => ({ ratio: Number.NaN }), 'result.ratio', 'NaN'],
    [
      'a cycle',
      () => {
        const node: Record<string, unknown> = { name: 'root' };
        node.self = { parent: node };
        return node;
      },
      'result.self.parent',
      'cycle',
    ],
  ])('refuses %s with a message naming the path', async (_label, value, path, what) => {
    const { result, failures } = await resultOf(value);
    expect(result.error?.code).toBe('TOOL_FAILED');
    expect(result.error?.message).toContain(path);
    expect(result.error?.message).toContain(what);
    expect(failures).toHaveLength(1);
  });

  it('keeps a shared (not cyclic) reference, as JSON.stringify does', async () => {
    const shared = { a: 1 };
    const { result } = await resultOf(() => ({ x: shared, y: shared }));
    expect(JSON.parse(textOf(result))).toEqual({ x: { a: 1 }, y: { a: 1 } });
  });
});

describe('tool failures reach the developer', () => {
  it('calls onToolError with the thrown error and keeps name, message, stack and causes in the event', async () => {
    const root = new RangeError('disk quota');
    const thrown = new Error('write failed', { cause: root });
    const { result, failures } = await resultOf(() => {
      throw thrown;
    });
    expect(result.error).toMatchObject({
      code: 'TOOL_FAILED',
      exception: {
        name: 'Error',
        message: 'write failed',
        stack: expect.stringContaining('write failed'),
        cause: { name: 'RangeError', message: 'disk quota' },
      },
    });
    expect(failures).toHaveLength(1);
    expect(failures[0]).toMatchObject({ name: 'probe', code: 'TOOL_FAILED', error: thrown });
  });

  it('bounds what it keeps of a huge message and a long cause chain', async () => {
    let error: Error = new Error('bottom');
    for (let i = 0; i < 50; i++)
      error = new Error(`level ${i} ${'x'.repeat(10_000)}`, { cause: error });
    const { result } = await resultOf(() => {
      throw error;
    });
    const kept = JSON.stringify(result.error);
    expect(kept.length).toBeLessThan(64_000);
  });
});

describe('tool output has limits', () => {
  function bigTool(output: () => unknown, maxOutputChars?: number) {
    return defineTool({
      name: 'big',
      parameters: { type: 'object' },
      execute: output as () => string,
      ...(maxOutputChars === undefined ? {} : { maxOutputChars }),
    });
  }
  const twoSteps = () =>
    scriptedModel([{ toolCalls: [{ name: 'big', args: {} }] }, { text: 'read it' }]);

  function surfaceToolText(session: Session): string {
    const tool = session.deriveMessages().find((message) => message.role === 'tool');
    const block = tool?.content[0];
    if (block?.type !== 'tool-result') throw new Error('no tool message');
    return block.content.map((item) => (item.type === 'text' ? item.text : '')).join('');
  }

  it('keeps a 5 MB output whole in the log and gives the model a head/tail excerpt', async () => {
    const output = `HEAD${'x'.repeat(5_000_000)}TAIL`;
    const session = Session.create();
    const model = twoSteps();
    const result = await runTurn({ session, model, tools: [bigTool(() => output)], input: 'go' });
    expect(result.reason).toEqual({ kind: 'completed' });
    const results = session.events.filter((event) => event.type === 'tool/result');
    expect(results).toHaveLength(2);
    const [original, excerpt] = results;
    expect(original?.surfaceOp).toBe('append');
    expect(textOf(original?.data as unknown as ToolResultData)).toBe(output);
    expect(excerpt?.surfaceOp).toEqual({ op: 'replace', start: original?.seq, end: original?.seq });
    const seen = surfaceToolText(session);
    expect(seen.length).toBeLessThan(50_000);
    expect(seen.startsWith('HEAD')).toBe(true);
    expect(seen.endsWith('TAIL')).toBe(true);
    expect(seen).toContain(`event #${original?.seq}`);
    expect(JSON.stringify(model.calls[1]?.prompt).length).toBeLessThan(60_000);
    expectValidLog(session);
  });

  it('honours a per-tool limit over the turn’s', async () => {
    const session = Session.create();
    await runTurn({
      session,
      model: twoSteps(),
      tools: [bigTool(() => 'y'.repeat(1000), 100)],
      input: 'go',
      maxToolOutputChars: 100_000,
    });
    expect(surfaceToolText(session).length).toBeLessThan(400);
  });

  it('refuses an output over the session’s data limits with a typed error, and the turn goes on', async () => {
    const session = Session.create({ limits: { maxChars: 1_000_000 } });
    const result = await runTurn({
      session,
      model: twoSteps(),
      tools: [bigTool(() => 'z'.repeat(2_000_000))],
      input: 'go',
    });
    expect(result.reason).toEqual({ kind: 'completed' });
    const [data] = dataOf<ToolResultData>(session, 'tool/result');
    expect(data?.error?.code).toBe('TOOL_OUTPUT_TOO_LARGE');
    expect(data?.error?.message).toContain('2,000,000');
    expect(surfaceToolText(session).length).toBeLessThan(50_000);
    expectValidLog(session);
  });

  it('survives a 70 MiB output under the default limits', async () => {
    const session = Session.create();
    const result = await runTurn({
      session,
      model: twoSteps(),
      tools: [bigTool(() => 'w'.repeat(70 * 1024 * 1024))],
      input: 'go',
    });
    expect(result.reason).toEqual({ kind: 'completed' });
    expect(dataOf<ToolResultData>(session, 'tool/result')[0]?.error?.code).toBe(
      'TOOL_OUTPUT_TOO_LARGE',
    );
    expectValidLog(session);
  });

  it('turns content blocks the log refuses into a TOOL_FAILED result instead of throwing', async () => {
    const session = Session.create();
    const bad = defineTool({
      name: 'big',
      parameters: { type: 'object' },
      execute: () => toolContent([{ type: 'image', mediaType: '' } as never]),
    });
    const result = await runTurn({ session, model: twoSteps(), tools: [bad], input: 'go' });
    expect(result.reason).toEqual({ kind: 'completed' });
    expect(dataOf<ToolResultData>(session, 'tool/result')[0]?.error?.code).toBe('TOOL_FAILED');
    expectValidLog(session);
  });
});
