/**
 * What a palimpsest store must do as the Claude Agent SDK's session store, checked on a real
 * Claude Code run: its append batches replayed in order, then read back directly and through the
 * SDK's own session functions, against the SDK's `InMemorySessionStore` fed the same batches.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  getSessionMessages,
  getSubagentMessages,
  type InMemorySessionStore,
  listSessions,
  listSubagents,
  type SessionKey,
} from '@anthropic-ai/claude-agent-sdk';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ClaudeTranscriptStore } from '../../../src/adapters/claude-agent-sdk/index.js';
import { checkInvariants, type SessionEvent } from '../../../src/core/index.js';
import { importSessions } from '../../../src/import/index.js';
import { openStore, type SessionStore } from '../../../src/store/index.js';
import type { ClaudeCodeRun, MirrorBatch, RecordingStore } from './claude-code-rig.js';

/** The run the contract replays. */
export interface RecordedRun {
  readonly reference: RecordingStore;
  readonly run: ClaudeCodeRun;
  /** The main transcript's key. */
  readonly mainKey: SessionKey;
  /** The subagent transcript's key. */
  readonly agentKey: SessionKey;
}

/** The raw layer left out: the conversation events of a mirrored session. */
export const conversation = (events: readonly SessionEvent[]): SessionEvent[] =>
  events.filter((event) => !event.type.startsWith('claude-code/'));
const shapes = (events: readonly SessionEvent[]) =>
  conversation(events).map(({ type, data, surfaceOp }) => ({ type, data, surfaceOp }));

/** The contract's tests, inside the caller's `describe`. */
export function replayContract(
  recorded: () => RecordedRun,
  open: () => Promise<SessionStore>,
): void {
  let store: SessionStore;
  let reference: RecordingStore;
  let run: ClaudeCodeRun;
  let mainKey: SessionKey;
  let keys: readonly SessionKey[];
  let mirror: ClaudeTranscriptStore;
  beforeAll(async () => {
    ({ reference, run, mainKey } = recorded());
    keys = [mainKey, recorded().agentKey];
    store = await open();
    mirror = new ClaudeTranscriptStore(store);
    for (const { key, entries } of reference.batches) await mirror.append(key, entries);
  });
  afterAll(() => store.close());

  it('load returns each transcript exactly as the SDK appended it', async () => {
    for (const key of keys) {
      const entries = await mirror.load(key);
      expect(entries).toEqual(reference.getEntries(key));
      expect(JSON.stringify(entries)).toBe(JSON.stringify(reference.getEntries(key)));
    }
    expect(await mirror.load({ ...mainKey, sessionId: 'never-written' })).toBeNull();
  });

  it('lists the session and its subagent as the reference store does', async () => {
    const projectKey = mainKey.projectKey;
    const ids = (list: { sessionId: string }[]) => list.map((session) => session.sessionId);
    expect(ids(await mirror.listSessions(projectKey))).toEqual(
      ids(await reference.listSessions(projectKey)),
    );
    expect(await mirror.listSessions('another-project')).toEqual([]);
    expect(await mirror.listSubkeys(mainKey)).toEqual(await reference.listSubkeys(mainKey));
  });

  it("reads the same sessions and messages through the SDK's own functions", async () => {
    const through = (sessionStore: InMemorySessionStore | ClaudeTranscriptStore) => ({
      dir: run.cwd,
      sessionStore,
    });
    const listed = await listSessions(through(mirror));
    expect(listed.map((session) => session.sessionId)).toEqual([run.sessionId]);
    expect(listed.map((session) => session.summary)).toEqual(
      (await listSessions(through(reference))).map((session) => session.summary),
    );
    const messages = await getSessionMessages(run.sessionId, through(mirror));
    expect(messages.length).toBeGreaterThan(4);
    expect(messages).toEqual(await getSessionMessages(run.sessionId, through(reference)));
    const agents = await listSubagents(run.sessionId, through(mirror));
    expect(agents).toEqual(await listSubagents(run.sessionId, through(reference)));
    expect(agents).toHaveLength(1);
    const agent = agents[0] as string;
    expect(await getSubagentMessages(run.sessionId, agent, through(mirror))).toEqual(
      await getSubagentMessages(run.sessionId, agent, through(reference)),
    );
  });

  it('holds the conversation palimpsest import makes of the same entries, and it verifies', async () => {
    for (const key of keys) {
      const mirrored = await store.load(
        `claude-code-${key.sessionId}${key.subpath === undefined ? '' : `/${key.subpath}`}`,
      );
      expect(checkInvariants(mirrored.events, { requireClosed: true })).toEqual([]);
      const dir = mkdtempSync(join(tmpdir(), 'claude-file-'));
      const file = join(dir, `${key.subpath?.split('/').pop() ?? key.sessionId}.jsonl`);
      const lines = ((await mirror.load(key)) ?? []).map((entry) => JSON.stringify(entry));
      writeFileSync(file, `${lines.join('\n')}\n`);
      const imported = await openStore('memory:');
      const report = await importSessions({ from: 'claude-code', path: file, store: imported });
      expect(report.sessions.map((session) => session.id)).toEqual([mirrored.header.id]);
      expect(shapes(mirrored.events)).toEqual(
        shapes((await imported.load(mirrored.header.id)).events),
      );
    }
  });

  it('keeps both results of the parallel calls, and links the subagent to the call that spawned it', async () => {
    const main = await store.load(`claude-code-${run.sessionId}`);
    const results = main.events.flatMap((event) =>
      event.type === 'tool/result' ? [event.data.message.content[0].toolCallId] : [],
    );
    expect(results).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^toolu_a/),
        expect.stringMatching(/^toolu_b/),
      ]),
    );
    const spawn = main.events.find(
      (event) => event.type === 'tool/call' && event.data.name === 'Agent',
    );
    const child = await store.load(`claude-code-${run.sessionId}/${keys[1]?.subpath}`);
    expect(child.header.metadata?.subagentOf).toMatchObject({
      session: main.header.id,
      toolCallId: spawn?.type === 'tool/call' ? spawn.data.callId : 'no Agent call',
    });
    expect(
      conversation(child.events).filter((event) => event.type === 'assistant/message'),
    ).toHaveLength(1);
  });

  it('writes the same conversation whatever the batches: one entry per append, or all at once', async () => {
    for (const key of keys) {
      const entries = reference.getEntries(key);
      const id = `claude-code-${key.sessionId}${key.subpath === undefined ? '' : `/${key.subpath}`}`;
      const batched = shapes((await store.load(id)).events);
      for (const size of [1, entries.length]) {
        const other = await openStore('memory:');
        const mirror = new ClaudeTranscriptStore(other);
        for (let at = 0; at < entries.length; at += size) {
          await mirror.append(key, entries.slice(at, at + size));
        }
        expect(shapes((await other.load(id)).events)).toEqual(batched);
      }
    }
  });

  it('stores an entry with a uuid appended again (a retry, a replayed import) only once', async () => {
    const { key, entries } = reference.batches[0] as MirrorBatch;
    await mirror.append(key, entries);
    // Entries without a uuid (titles, tags, mode markers) have no identity: the contract
    // appends them again.
    const again = entries.filter((entry) => entry.uuid === undefined);
    expect(again.length).toBeLessThan(entries.length);
    expect(await mirror.load(key)).toEqual([...reference.getEntries(key), ...again]);
  });
}
