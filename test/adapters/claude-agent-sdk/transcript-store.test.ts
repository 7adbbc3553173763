/**
 * The Claude Agent SDK's `SessionStore` over palimpsest stores, on what the real Claude Code
 * wrote: a run with parallel tool calls and a subagent, mirrored through the SDK's own
 * `InMemorySessionStore` (the reference), its append batches replayed into each backend, and read
 * back through the SDK's own session functions.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  deleteSession,
  InMemorySessionStore,
  importSessionToStore,
  type SessionKey,
  type SessionStoreEntry,
} from '@anthropic-ai/claude-agent-sdk';
import { beforeAll, describe, expect, it } from 'vitest';
import { ClaudeTranscriptStore } from '../../../src/adapters/claude-agent-sdk/index.js';
import { checkInvariants, Session } from '../../../src/core/index.js';
import { importSessions } from '../../../src/import/index.js';
import { openStore } from '../../../src/store/index.js';
import {
  type ClaudeCodeRun,
  describeClaudeCode,
  type MirrorBatch,
  RecordingStore,
  runClaudeCode,
} from './claude-code-rig.js';
import { conversation, replayContract } from './replay-contract.js';

function storeUrls(): Record<string, string> {
  const dir = mkdtempSync(join(tmpdir(), 'claude-store-'));
  return {
    memory: 'memory:',
    jsonl: `jsonl:${join(dir, 'jsonl')}`,
    sqlite: `sqlite:${join(dir, 'db.sqlite')}`,
  };
}

describeClaudeCode('ClaudeTranscriptStore on a real Claude Code run', () => {
  const reference = new RecordingStore();
  let run: ClaudeCodeRun;
  let keys: SessionKey[];
  let mainKey: SessionKey;
  beforeAll(async () => {
    run = await runClaudeCode(['PARALLEL: read a.txt and b.txt', 'SUBAGENT: say hello'], reference);
    const seen = new Map(reference.batches.map(({ key }) => [JSON.stringify(key), key]));
    keys = [...seen.values()];
    mainKey = keys[0] as SessionKey;
    run.close();
  }, 120_000);

  it('the run made a main transcript and a subagent transcript, in several batches', () => {
    // A third result comes when the background subagent's notice starts a turn of its own.
    expect(run.results.length).toBeGreaterThanOrEqual(2);
    expect(run.results.every((result) => result.subtype === 'success')).toBe(true);
    expect(keys.map((key) => key.subpath?.replace(/agent-.*/, 'agent-…'))).toEqual([
      undefined,
      'subagents/agent-…',
    ]);
    expect(reference.batches.length).toBeGreaterThan(2);
  });

  describe.each(Object.entries(storeUrls()))('replayed into a %s store', (_name, url) => {
    replayContract(
      () => ({ reference, run, mainKey, agentKey: keys[1] as SessionKey }),
      () => openStore(url),
    );
  });

  it("importSessionToStore copies Claude Code's own file, idempotently", async () => {
    const store = await openStore('memory:');
    const mirror = new ClaudeTranscriptStore(store);
    const copy = new InMemorySessionStore();
    // The SDK finds Claude Code's files under the config directory of this process.
    process.env.CLAUDE_CONFIG_DIR = run.configDir;
    await importSessionToStore(run.sessionId, copy, { dir: run.cwd });
    await importSessionToStore(run.sessionId, mirror, { dir: run.cwd, batchSize: 7 });
    await importSessionToStore(run.sessionId, mirror, { dir: run.cwd });
    const key = { projectKey: mainKey.projectKey, sessionId: run.sessionId };
    const copied = copy.getEntries(key);
    const identified = (entries: readonly SessionStoreEntry[]) =>
      entries.filter((entry) => entry.uuid !== undefined);
    const loaded = (await mirror.load(key)) ?? [];
    // The second import adds only the entries without a uuid, which the contract never dedups.
    expect(loaded.slice(0, copied.length)).toEqual(copied);
    expect(identified(loaded)).toEqual(identified(copied));
    expect(loaded.length - copied.length).toBe(copied.length - identified(copied).length);
    expect(checkInvariants((await store.load(`claude-code-${run.sessionId}`)).events)).toEqual([]);
  });

  it("imports Claude Code's own files as a parent and a subagent session linked both ways", async () => {
    // A session that starts with the subagent: Claude Code writes its transcript to its own
    // files then (resumed through a store, it mirrors it there only).
    const spawning = new RecordingStore();
    const own = await runClaudeCode(['SUBAGENT: say hello'], spawning);
    own.close();
    const agentKey = spawning.batches.find(({ key }) => key.subpath !== undefined)?.key;
    const store = await openStore('memory:');
    const report = await importSessions({
      from: 'claude-code',
      path: join(own.configDir, 'projects'),
      store,
    });
    expect(report.failed).toEqual([]);
    const parentId = `claude-code-${own.sessionId}`;
    const childId = `${parentId}/${agentKey?.subpath}`;
    expect(report.sessions.map((session) => session.id).sort()).toEqual([parentId, childId]);
    const parent = (await store.load(parentId)).events;
    const child = await store.load(childId);
    const spawned = parent.filter(
      (event) =>
        (event.type === 'tool/call' || event.type === 'tool/result') &&
        event.data.child !== undefined,
    );
    // The Agent call and its result name the child; the child's header names the parent's call.
    expect(spawned.map((event) => event.type)).toEqual(['tool/call', 'tool/result']);
    const call = spawned[0];
    expect(call?.type === 'tool/call' && call.data.name).toBe('Agent');
    const link = { session: childId, agentId: agentKey?.subpath?.replace('subagents/agent-', '') };
    for (const event of spawned) expect(event.data).toMatchObject({ child: link });
    expect(child.header.metadata?.subagentOf).toEqual({
      session: parentId,
      toolCallId: call?.type === 'tool/call' ? call.data.callId : undefined,
      agentId: link.agentId,
    });
    for (const events of [parent, child.events]) expect(checkInvariants(events)).toEqual([]);
    await store.close();
  });

  it('an answer the user interrupted ends its turn as aborted, and the session goes on', async () => {
    const store = await openStore('memory:');
    const interrupted = await runClaudeCode(['Say hi'], new ClaudeTranscriptStore(store));
    const abortController = new AbortController();
    const asked = interrupted.ask('STALL on this one', { abortController });
    await interrupted.stalled();
    abortController.abort();
    await asked.then(
      () => undefined,
      () => undefined,
    );
    await interrupted.ask('Say hi again');
    interrupted.close();
    const events = (await store.load(`claude-code-${interrupted.sessionId}`)).events;
    const ends = events.flatMap((event) => (event.type === 'turn/end' ? [event.data.reason] : []));
    expect(ends.map((reason) => reason.kind)).toEqual(['completed', 'aborted', 'completed']);
    expect(ends[1]).toMatchObject({ cause: expect.stringContaining('<synthetic>') });
    expect(checkInvariants(events)).toEqual([]);
    await store.close();
  });

  it('a mirror killed between or inside appends leaves whole batches, and a new one goes on from there', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'claude-kill-')), 'batches.json');
    writeFileSync(file, JSON.stringify(reference.batches));
    const entriesOf = (batches: readonly MirrorBatch[], key: SessionKey) =>
      batches
        .filter((batch) => JSON.stringify(batch.key) === JSON.stringify(key))
        .flatMap((batch) => batch.entries);
    for (const killAfter of [
      1,
      Math.ceil(reference.batches.length / 2),
      reference.batches.length - 1,
    ]) {
      const directory = mkdtempSync(join(tmpdir(), 'claude-killed-'));
      await killAfterAppends(file, directory, killAfter);
      const store = await openStore(`jsonl:${directory}`);
      const mirror = new ClaudeTranscriptStore(store);
      // What survived is the entries of the first `kept` batches, whole, for every key.
      let kept = killAfter;
      const loaded = await Promise.all(keys.map((key) => mirror.load(key)));
      while (
        kept < reference.batches.length &&
        keys.some(
          (key, i) =>
            (loaded[i] ?? []).length > entriesOf(reference.batches.slice(0, kept), key).length,
        )
      )
        kept++;
      keys.forEach((key, i) => {
        expect(loaded[i] ?? []).toEqual(entriesOf(reference.batches.slice(0, kept), key));
      });
      for (const { key, entries } of reference.batches.slice(kept))
        await mirror.append(key, entries);
      for (const key of keys) {
        expect(await mirror.load(key)).toEqual(reference.getEntries(key));
        const id = `claude-code-${key.sessionId}${key.subpath === undefined ? '' : `/${key.subpath}`}`;
        expect(checkInvariants((await store.load(id)).events, { requireClosed: true })).toEqual([]);
      }
      await store.close();
    }
  }, 120_000);

  it('deleteSession removes the session and its subagent transcripts', async () => {
    const store = await openStore('memory:');
    const mirror = new ClaudeTranscriptStore(store);
    for (const { key, entries } of reference.batches) await mirror.append(key, entries);
    await deleteSession(run.sessionId, { dir: run.cwd, sessionStore: mirror });
    expect((await store.list()).sessions).toEqual([]);
    for (const key of keys) expect(await mirror.load(key)).toBeNull();
  });
});

/** Runs the mirror child on `directory` and kills it (SIGKILL) once it reports `count` appends. */
async function killAfterAppends(file: string, directory: string, count: number): Promise<void> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', join(import.meta.dirname, 'mirror-child.ts'), file, directory],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stderr = '';
  child.stderr.on('data', (data: Buffer) => {
    stderr += data.toString();
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (data: Buffer) => {
      if (data.toString().includes(`APPENDED ${count}\n`)) {
        child.kill('SIGKILL');
        resolve();
      }
    });
    child.on('exit', (code) =>
      reject(new Error(`the mirror child exited (${code}) before ${count} appends: ${stderr}`)),
    );
  });
  await new Promise((resolve) => child.once('exit', resolve));
}

describeClaudeCode('Claude Code with a palimpsest store as its session store', () => {
  it('mirrors each turn as it runs and resumes from the store', async () => {
    const store = await openStore(`jsonl:${mkdtempSync(join(tmpdir(), 'claude-live-'))}`);
    const mirror = new ClaudeTranscriptStore(store);
    const run = await runClaudeCode(['Hello there', 'PARALLEL: read a.txt and b.txt'], mirror);
    expect(run.results.map((result) => result.result)).toEqual([
      'Hello from the loopback model.',
      'Read 2 results.',
    ]);
    const session = await store.load(`claude-code-${run.sessionId}`);
    expect(checkInvariants(session.events, { requireClosed: true })).toEqual([]);
    const turns = conversation(session.events).filter((event) => event.type === 'turn/end');
    expect(turns).toHaveLength(2);
    await store.close();
  }, 120_000);
});

describeClaudeCode('Claude Code rewinding a session mirrored into a palimpsest store', () => {
  it('keeps every entry, and the conversation goes on from where it went back to', async () => {
    const store = await openStore('memory:');
    const reference = new RecordingStore();
    const mirror = new ClaudeTranscriptStore(store);
    const both = {
      append: async (key: SessionKey, entries: SessionStoreEntry[]) => {
        await reference.append(key, entries);
        await mirror.append(key, entries);
      },
      load: (key: SessionKey) => mirror.load(key),
    };
    const run = await runClaudeCode(['Hello there', 'And again'], both);
    const key = (reference.batches[0] as { key: SessionKey }).key;
    const firstAnswer = reference.getEntries(key).find((entry) => entry.type === 'assistant');
    // A truncating resume: the conversation goes on from the first answer, leaving turn two.
    await run.ask('Instead, this', { resumeSessionAt: String(firstAnswer?.uuid) });
    run.close();
    expect(run.results.map((result) => result.subtype)).toEqual(['success', 'success', 'success']);
    expect(await mirror.load(key)).toEqual(reference.getEntries(key));
    const { header, events } = await store.load(`claude-code-${run.sessionId}`);
    expect(checkInvariants(events, { requireClosed: true })).toEqual([]);
    expect(events.some((event) => event.type === 'claude-code/derive-stopped')).toBe(false);
    expect(conversation(events).filter((event) => event.type === 'turn/end')).toHaveLength(3);
    const prompts = Session.create({ header, seed: events })
      .deriveMessages()
      .flatMap((message) => (message.role === 'user' ? [message.content[0]] : []))
      .map((block) => (block?.type === 'text' ? block.text : block?.type));
    expect(prompts).toEqual(['Hello there', 'Instead, this']);
  }, 120_000);
});
