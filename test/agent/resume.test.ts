/**
 * `Agent.resume()`: after crash repair (a real process killed inside a tool) the interrupted
 * turn continues as a new turn without a user prompt, the model reading the repaired outcome;
 * messages steered or queued before the crash are delivered exactly once. With nothing
 * unfinished it refuses with `NOTHING_TO_RESUME`.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LanguageModelV3CallOptions } from '@ai-sdk/provider';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Agent, AgentError } from '../../src/agent/index.js';
import { Session, type TurnStartData } from '../../src/core/index.js';
import { openSession, openStore, type SessionStore } from '../../src/store/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { dataOf, expectValidLog } from './helpers.js';

let directory: string;
let store: SessionStore;

beforeEach(async () => {
  directory = mkdtempSync(join(tmpdir(), 'palimpsest-resume-'));
  store = await openStore(`jsonl:${directory}`);
});

afterEach(async () => {
  await store.close();
  rmSync(directory, { recursive: true, force: true });
});

function promptText(call: LanguageModelV3CallOptions | undefined): string {
  return JSON.stringify(call?.prompt ?? []);
}

/** Runs `child` on the store's directory and kills it with SIGKILL once it prints `marker`. */
async function killAt(child: string, id: string, marker: string): Promise<void> {
  const process_ = spawn(
    process.execPath,
    ['--import', 'tsx', join(import.meta.dirname, child), directory, id],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stderr = '';
  process_.stderr.on('data', (data: Buffer) => {
    stderr += data.toString();
  });
  await new Promise<void>((resolve, reject) => {
    process_.stdout.on('data', (data: Buffer) => {
      if (data.toString().includes(marker)) resolve();
    });
    process_.on('exit', (code) => reject(new Error(`child exited early (${code}): ${stderr}`)));
  });
  process_.kill('SIGKILL');
  await new Promise((resolve) => process_.once('exit', resolve));
}

describe('Agent.resume after a crash', () => {
  it('continues the interrupted turn: the model reads the unknown outcome and decides, without a new prompt', async () => {
    await killAt('crash-child.ts', 'crashed', 'TOOL_STARTED');
    const session = await openSession(store, 'crashed');
    const model = scriptedModel([
      { text: 'The deploy may have run; I will check before retrying.' },
    ]);
    const result = await new Agent({ session, model }).resume();

    expect(result).toMatchObject({ turn: 2, reason: { kind: 'completed' }, steps: 1 });
    expect(dataOf<TurnStartData>(session, 'turn/start')[1]).toEqual({ turn: 2, resumes: 1 });
    // No user/message in the resumed turn: a context/message says what it continues.
    const turnTwo = session.events.slice(
      session.events.findIndex((e) => e.seq === result.startSeq),
    );
    expect(turnTwo.filter((event) => event.type === 'user/message')).toEqual([]);
    expect(turnTwo[1]?.type).toBe('context/message');
    expect(promptText(model.calls[0])).toContain('TOOL_OUTCOME_UNKNOWN');
    expect(promptText(model.calls[0])).toContain('[resumed: turn 1 was interrupted');
    expectValidLog(session);
    await session.close();
  }, 30_000);

  it('delivers what was steered and queued before the crash exactly once, across reopens', async () => {
    await killAt('steer-crash-child.ts', 'queued', 'QUEUED');
    const session = await openSession(store, 'queued');
    const agent = new Agent({
      session,
      model: scriptedModel([{ text: 'Deployed to staging.' }, { text: 'https://staging.example' }]),
    });
    expect(agent.pending.steers).toHaveLength(1);
    expect(agent.pending.followUps).toHaveLength(1);
    const result = await agent.resume();
    // Turn 2 resumes turn 1 and takes the steer at its first step; turn 3 is the follow-up.
    expect(result).toMatchObject({ turn: 3, text: 'https://staging.example' });
    await session.close();

    const reopened = await openSession(store, 'queued');
    const again = new Agent({ session: reopened, model: scriptedModel([]) });
    expect(again.pending).toEqual({ steers: [], followUps: [] });
    const delivered = reopened.events.filter((event) => event.type === 'user/message');
    expect(
      delivered.map((event) => (event.data as { source: { kind: string } }).source.kind),
    ).toEqual(['user', 'steer', 'follow-up']);
    const error = await again.resume().catch((caught: unknown) => caught);
    expect(AgentError.isInstance(error) && error.code).toBe('NOTHING_TO_RESUME');
    expectValidLog(reopened);
    await reopened.close();
  }, 30_000);
});

describe('Agent.resume with nothing unfinished', () => {
  it('refuses with NOTHING_TO_RESUME after a completed turn, appending nothing', async () => {
    const session = Session.create({ id: 'done' });
    const agent = new Agent({ session, model: scriptedModel([{ text: 'done' }]) });
    await agent.run('hi');
    const before = session.seq;
    const error = await agent.resume().catch((caught: unknown) => caught);
    expect(AgentError.isInstance(error) && error.code).toBe('NOTHING_TO_RESUME');
    expect((error as Error).message).toBe(
      'expected an unfinished last turn or a queued message to resume in session done, found turn 1 completed and an empty queue',
    );
    expect(session.seq).toBe(before);
  });

  it('refuses on an empty session', async () => {
    const agent = new Agent({ session: Session.create({ id: 'empty' }), model: scriptedModel([]) });
    await expect(agent.resume()).rejects.toMatchObject({ code: 'NOTHING_TO_RESUME' });
  });
});
