import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { defineTool, runTurn } from '../../src/agent/index.js';
import type { ToolResultData, TurnEndData } from '../../src/core/index.js';
import { openSession, openStore, type SessionStore } from '../../src/store/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { dataOf, expectValidLog } from './helpers.js';

let directory: string;
let store: SessionStore;

beforeEach(async () => {
  directory = mkdtempSync(join(tmpdir(), 'palimpsest-agent-'));
  store = await openStore(`jsonl:${directory}`);
});

afterEach(async () => {
  await store.close();
  rmSync(directory, { recursive: true, force: true });
});

const echo = defineTool({
  name: 'echo',
  parameters: { type: 'object', properties: { text: { type: 'string' } } },
  execute: (args) => String(args.text),
});

describe('the loop on a stored session', () => {
  it('makes each turn durable and continues numbering after a reopen', async () => {
    const first = await openSession(store, 'resume');
    await runTurn({
      session: first,
      model: scriptedModel([
        { toolCalls: [{ name: 'echo', args: { text: 'a' } }] },
        { text: 'one' },
      ]),
      tools: [echo],
      input: 'first',
    });
    const written = first.seq;
    await first.close();

    const loaded = await store.load('resume');
    expect(loaded.events).toHaveLength(written);

    const second = await openSession(store, 'resume');
    const result = await runTurn({
      session: second,
      model: scriptedModel([{ text: 'two' }]),
      input: 'second',
    });
    expect(result.turn).toBe(2);
    await second.close();
    const reopened = await openSession(store, 'resume');
    expect(reopened.deriveMessages().map((message) => message.role)).toEqual([
      'user',
      'assistant',
      'tool',
      'assistant',
      'user',
      'assistant',
    ]);
    expectValidLog(reopened);
    await reopened.close();
  });

  it('after a writer is killed inside a tool, reopening answers the call as outcome-unknown and the next turn runs', async () => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', join(import.meta.dirname, 'crash-child.ts'), directory, 'killed'],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stderr = '';
    child.stderr.on('data', (data: Buffer) => {
      stderr += data.toString();
    });
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (data: Buffer) => {
        if (data.toString().includes('TOOL_STARTED')) resolve();
      });
      child.on('exit', (code) => reject(new Error(`child exited early (${code}): ${stderr}`)));
    });
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('exit', resolve));

    const session = await openSession(store, 'killed');
    expect(session.openReport.repairedEvents).toBeGreaterThan(0);
    const [repaired] = dataOf<ToolResultData>(session, 'tool/result');
    expect(repaired?.error?.code).toBe('TOOL_OUTCOME_UNKNOWN');
    expect(dataOf<TurnEndData>(session, 'turn/end')[0]?.reason).toEqual({ kind: 'interrupted' });

    const result = await runTurn({
      session,
      model: scriptedModel([{ text: 'The deploy may or may not have happened; checking first.' }]),
      input: 'did it deploy?',
    });
    expect(result.turn).toBe(2);
    expectValidLog(session);
    await session.close();
  }, 30_000);
});
