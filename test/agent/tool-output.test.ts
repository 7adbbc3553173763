/**
 * What tools return (issue 12): values convert like JSON.stringify, the rest is refused with a
 * path; failures reach the developer (hook, and the error's details in the log).
 */
import { describe, expect, it } from 'vitest';
import { defineTool, runTurn, type ToolFailure } from '../../src/agent/index.js';
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
