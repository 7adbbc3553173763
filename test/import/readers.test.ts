/**
 * Each reader turns its harness's file into palimpsest sessions that pass every surface rule and
 * the log linter: messages carried over one for one, compactions as surface replacements, branches
 * as forks sharing their parent's prefix, and every entry left out counted by reason.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  checkInvariants,
  foldSurface,
  type JsonObject,
  Session,
  type SessionEvent,
} from '../../src/core/index.js';
import {
  type ImportedFile,
  NO_RESULT,
  readClaudeCode,
  readSourceFile,
} from '../../src/import/index.js';

const fixture = (name: string): string => join(import.meta.dirname, 'fixtures', name);

function read(harness: 'claude-code' | 'codex' | 'pi'): ImportedFile {
  return readSourceFile(harness, fixture(`${harness}.jsonl`));
}

/** An event's data, read as `T` (a missing event reads as empty, and fails the expectation). */
function dataOf<T>(event: SessionEvent | undefined): T {
  return (event?.data ?? {}) as T;
}

function origin(event: SessionEvent): JsonObject {
  return dataOf<{ origin: JsonObject }>(event).origin;
}

/** Messages the source holds: every surface-eligible event but the results the builder made. */
function sourceMessages(events: readonly SessionEvent[]): number {
  return events.filter((e) => e.surfaceOp !== undefined && origin(e).made !== 'no-result').length;
}

describe.each(['claude-code', 'codex', 'pi'] as const)('reading a %s file', (harness) => {
  it('gives sessions a Session seeds and the linter passes, closed', () => {
    for (const session of read(harness).sessions) {
      const seeded = Session.create({ header: session.header, seed: session.events });
      expect(seeded.seq).toBe(session.events.length);
      expect(checkInvariants(session.events, { requireClosed: true })).toEqual([]);
    }
  });

  it('records the harness, the file and the line on every event, and says so in the header', () => {
    const [session] = read(harness).sessions;
    expect(session?.header.metadata?.imported).toMatchObject({
      harness,
      path: fixture(`${harness}.jsonl`),
    });
    for (const event of session?.events ?? []) {
      expect(origin(event)).toMatchObject({ harness, file: `${harness}.jsonl` });
      expect(origin(event).line).toBeGreaterThan(0);
    }
  });

  it('carries over each source message once: the count equals the messages it appended', () => {
    for (const session of read(harness).sessions) {
      expect(sourceMessages(session.events)).toBe(session.sourceMessages);
    }
  });
});

describe('Claude Code', () => {
  const file = read('claude-code');
  const [active, branch] = file.sessions;

  it('merges the entries of one response (one message.id) into one assistant message', () => {
    const messages = active?.events.filter((e) => e.type === 'assistant/message') ?? [];
    const first = dataOf<{ message: { id: string; content: { type: string }[] } }>(messages[0]);
    expect(first.message.id).toBe('msg_01');
    expect(first.message.content.map((b) => b.type)).toEqual(['reasoning', 'tool-call']);
    expect(messages.map((m) => dataOf<{ message: { id: string } }>(m).message.id)).toEqual([
      'msg_01',
      'msg_02',
      'msg_04',
      'msg_05',
      'msg_06',
    ]);
  });

  it('makes the compact summary a replacement of everything the model saw before it', () => {
    const events = active?.events ?? [];
    const { replacements, seqs } = foldSurface(events);
    expect(replacements).toHaveLength(1);
    const summary = events[replacements[0]?.seq ?? -1];
    expect(dataOf<{ source: JsonObject }>(summary).source.kind).toBe('compaction');
    expect(replacements[0]?.shadowedSeqs).toHaveLength(10);
    // The summary, the next prompt and its answer.
    expect(seqs).toHaveLength(3);
  });

  it('makes the branch a user left a fork that shares the prefix up to its last turn boundary', () => {
    expect(branch?.header).toMatchObject({
      id: `${active?.header.id}~c0000000-0000-4000-8000-000000000009`,
      parentSession: active?.header.id,
    });
    const seedLength = branch?.header.seedLength ?? 0;
    expect(seedLength).toBeGreaterThan(0);
    expect(branch?.events.slice(0, seedLength)).toEqual(active?.events.slice(0, seedLength));
    expect(branch?.events[seedLength]?.type).toBe('turn/start');
    const last = branch?.events.filter((e) => e.type === 'assistant/message').at(-1);
    expect(dataOf<{ message: { id: string } }>(last).message.id).toBe('msg_03');
  });

  it('counts what it left out by reason, once per entry', () => {
    expect(Object.fromEntries(file.skipped)).toMatchObject({
      'summary (a title for the session picker, not conversation)': 1,
      'file-history-snapshot (file backups for undo, not conversation)': 1,
      "sidechain (a subagent's conversation, in its own transcript)": 1,
      'tool_result without a matching tool_use in its step': 1,
      "assistant content block 'server_tool_use' (no palimpsest block holds it)": 1,
    });
  });

  it('keeps thinking signatures and cache usage for the next request', () => {
    const message = dataOf<{ message: { content: JsonObject[] }; usage: JsonObject }>(
      active?.events.find((e) => e.type === 'assistant/message'),
    );
    expect(message.message.content[0]).toMatchObject({
      type: 'reasoning',
      providerMetadata: { anthropic: { signature: 'c2ln' } },
    });
    expect(message.usage).toMatchObject({
      inputTokens: 210,
      outputTokens: 30,
      cacheWriteTokens: 200,
    });
  });
});

describe('Claude Code, chains that are not a tree of the conversation', () => {
  const at = (s: number) => `2026-06-01T10:00:${String(s).padStart(2, '0')}.000Z`;
  const entry = (type: string, uuid: string, parentUuid: string | null, extra: JsonObject) => ({
    type,
    uuid,
    parentUuid,
    timestamp: at(Number(uuid.replace(/\D/g, '')) || 0),
    sessionId: 's',
    ...extra,
  });
  const prompt = (uuid: string, parent: string | null, text: string) =>
    entry('user', uuid, parent, { message: { role: 'user', content: text } });
  const answer = (
    uuid: string,
    parent: string,
    blocks: JsonObject[],
    stop: string | null,
    id = uuid,
  ) =>
    entry('assistant', uuid, parent, {
      message: {
        id: `msg_${id}`,
        role: 'assistant',
        model: 'm',
        content: blocks,
        stop_reason: stop,
      },
    });
  const result = (uuid: string, parent: string, callId: string) =>
    entry('user', uuid, parent, {
      message: {
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: callId, content: 'ok' }],
      },
    });
  const call = (id: string) => ({ type: 'tool_use', id, name: 'Read', input: {} });
  const readEntries = (entries: readonly object[]): ImportedFile => {
    const dir = mkdtempSync(join(tmpdir(), 'claude-chain-'));
    try {
      const path = join(dir, 'chain.jsonl');
      writeFileSync(path, `${entries.map((e) => JSON.stringify(e)).join('\n')}\n`);
      return readSourceFile('claude-code', path);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };

  it('puts parallel calls and results that hang off the chain back in place, as one session', () => {
    // The chain goes on from the result of the first call; the second call and its result are
    // a dead end, as Claude Code writes them when the first call finishes last.
    const file = readEntries([
      prompt('e1', null, 'read both'),
      answer('e2', 'e1', [call('c1')], 'tool_use', 'r'),
      answer('e3', 'e2', [call('c2')], 'tool_use', 'r'),
      result('e4', 'e3', 'c2'),
      result('e5', 'e2', 'c1'),
      answer('e6', 'e5', [{ type: 'text', text: 'done' }], 'end_turn'),
    ]);
    expect(file.sessions).toHaveLength(1);
    const events = file.sessions[0]?.events ?? [];
    expect(checkInvariants(events, { requireClosed: true })).toEqual([]);
    const results = events.filter((e) => e.type === 'tool/result').map((e) => origin(e).line);
    expect(results).toEqual([4, 5]);
    expect(events.some((e) => origin(e).made === 'no-result')).toBe(false);
  });

  it('reads a file whose every entry has a null parent in file order', () => {
    const file = readEntries(
      [
        prompt('e1', null, 'one'),
        answer('e2', 'e1', [{ type: 'text', text: 'first' }], 'end_turn'),
        prompt('e3', null, 'two'),
        answer('e4', 'e3', [{ type: 'text', text: 'second' }], 'end_turn'),
      ].map((e) => ({ ...e, parentUuid: null })),
    );
    expect(file.sessions).toHaveLength(1);
    expect(file.sessions[0]?.events.filter((e) => e.type === 'turn/end')).toHaveLength(2);
  });

  it('does not read a dead end of progress links as a branch', () => {
    const file = readEntries([
      prompt('e1', null, 'run it'),
      answer('e2', 'e1', [call('c1')], 'tool_use'),
      entry('progress', 'e3', 'e2', { data: { type: 'bash_progress' } }),
      result('e4', 'e2', 'c1'),
      answer('e5', 'e4', [{ type: 'text', text: 'done' }], 'end_turn'),
    ]);
    expect(file.sessions).toHaveLength(1);
  });

  describe('subagent conversations kept inside the main transcript (Claude Code 1.0.x)', () => {
    // Modelled on 1.0.108 (test/import/corpus): sidechain entries name no agent, and each
    // subagent's chain starts at its prompt, the `prompt` of the Task call that spawned it.
    const side = (e: JsonObject) => ({ ...e, isSidechain: true });
    const task = (id: string, prompt?: string) => ({
      type: 'tool_use',
      id,
      name: 'Task',
      input: { description: 'd', ...(prompt === undefined ? {} : { prompt }) },
    });
    const text = (value: string) => [{ type: 'text', text: value }];
    const link = (file: ImportedFile) =>
      file.sessions.map((session) => session.header.metadata?.subagentOf);
    const children = (events: readonly SessionEvent[]) =>
      events
        .filter((e) => e.type === 'tool/result')
        .map((e) => [
          dataOf<{ message: { content: [{ toolCallId: string }] } }>(e).message.content[0]
            .toolCallId,
          dataOf<{ child?: { session: string } }>(e).child?.session,
        ]);

    it('reads each as a session of its own, linked to the call that spawned it both ways', () => {
      const file = readEntries([
        prompt('e1', null, 'look at both'),
        answer('e2', 'e1', [task('t1', 'List the files.')], 'tool_use', 'r'),
        answer('e3', 'e2', [task('t2', 'Read the README.')], 'tool_use', 'r'),
        // Two subagents at once: their entries interleave, each chained from its own prompt.
        side(prompt('e4', null, 'List the files.')),
        side(prompt('e5', null, 'Read the README.')),
        side(answer('e6', 'e4', text('a, b'), 'end_turn')),
        side(answer('e7', 'e5', text('It says hi.'), 'end_turn')),
        result('e8', 'e3', 't1'),
        result('e9', 'e8', 't2'),
        answer('e10', 'e9', text('done'), 'end_turn'),
      ]);
      expect(file.sessions.map((session) => session.header.id)).toEqual([
        'claude-code-chain',
        'claude-code-chain/subagents/sidechain-e4',
        'claude-code-chain/subagents/sidechain-e5',
      ]);
      expect(link(file)).toEqual([
        undefined,
        { session: 'claude-code-chain', toolCallId: 't1' },
        { session: 'claude-code-chain', toolCallId: 't2' },
      ]);
      expect(children(file.sessions[0]?.events ?? [])).toEqual([
        ['t1', 'claude-code-chain/subagents/sidechain-e4'],
        ['t2', 'claude-code-chain/subagents/sidechain-e5'],
      ]);
      for (const session of file.sessions) {
        expect(checkInvariants(session.events, { requireClosed: true })).toEqual([]);
      }
      const answers = file.sessions
        .slice(1)
        .map((session) => session.events.filter((e) => e.type === 'assistant/message').length);
      expect(answers).toEqual([1, 1]);
      expect([...file.skipped.keys()].some((reason) => reason.startsWith('sidechain'))).toBe(false);
    });

    it('without a chain, starts one at each prompt, ends it at its result in the parent; a prompt no call gave is not linked', () => {
      const file = readEntries(
        [
          prompt('e1', null, 'go'),
          answer('e2', 'e1', [task('t1', 'First.')], 'tool_use'),
          side(prompt('e3', null, 'First.')),
          // 1.0.x often wrote no stop_reason on a last answer: the result in the parent ends it.
          side(answer('e4', 'e3', text('one'), null)),
          result('e5', 'e2', 't1'),
          // A Task call without a prompt fails and spawns nothing.
          answer('e6', 'e5', [task('t2')], 'tool_use'),
          result('e7', 'e6', 't2'),
          side(prompt('e8', null, 'Second.')),
          side(answer('e9', 'e8', text('two'), 'end_turn')),
          answer('e10', 'e7', text('done'), 'end_turn'),
        ].map((e) => ({ ...e, parentUuid: null })),
      );
      expect(file.sessions.map((session) => session.header.id)).toEqual([
        'claude-code-chain',
        'claude-code-chain/subagents/sidechain-e3',
        'claude-code-chain/subagents/sidechain-e8',
      ]);
      expect(link(file).slice(1)).toEqual([
        { session: 'claude-code-chain', toolCallId: 't1' },
        { session: 'claude-code-chain' },
      ]);
      expect(children(file.sessions[0]?.events ?? [])).toEqual([
        ['t1', 'claude-code-chain/subagents/sidechain-e3'],
        ['t2', undefined],
      ]);
      const first = file.sessions[1]?.events ?? [];
      expect(checkInvariants(first, { requireClosed: true })).toEqual([]);
      expect(first.at(-1)).toMatchObject({ type: 'turn/end', data: { origin: { line: 5 } } });
    });
  });

  it('reads a subagent transcript as a session linked to its parent and the call that spawned it', () => {
    const sidechain = (e: JsonObject) => ({ ...e, isSidechain: true, agentId: 'a1' });
    const file = readEntries([
      { type: 'agent_metadata', agentType: 'general-purpose', toolUseId: 'toolu_9' },
      sidechain(prompt('e1', null, 'Say hello.')),
      sidechain(answer('e2', 'e1', [{ type: 'text', text: 'hello' }], 'end_turn')),
    ]);
    expect(file.sessions.map((session) => session.header.id)).toEqual([
      'claude-code-s/subagents/chain',
    ]);
    expect(file.sessions[0]?.header.metadata?.subagentOf).toEqual({
      session: 'claude-code-s',
      toolCallId: 'toolu_9',
      agentId: 'a1',
    });
  });
});

describe('Codex', () => {
  const file = read('codex');
  const [session] = file.sessions;
  const events = session?.events ?? [];

  it('gathers the output items of one response (up to its token_count) into one message', () => {
    const first = dataOf<{
      message: { content: { type: string; name?: string }[] };
      usage: JsonObject;
    }>(events.find((e) => e.type === 'assistant/message'));
    expect(first.message.content.map((b) => b.name ?? b.type)).toEqual([
      'reasoning',
      'shell',
      'apply_patch',
    ]);
    expect(first.usage).toMatchObject({ inputTokens: 900, reasoningTokens: 20 });
  });

  it('reads injected instructions as context, not as the user speaking', () => {
    const context = events.filter((e) => e.type === 'context/message');
    expect(context).toHaveLength(2);
    expect(events.filter((e) => e.type === 'turn/start')).toHaveLength(2);
  });

  it('ends turns where task_complete and turn_aborted say, closing an unanswered call', () => {
    const ends = events
      .filter((e) => e.type === 'turn/end')
      .map((e) => dataOf<{ reason: JsonObject }>(e).reason);
    expect(ends).toEqual([{ kind: 'completed' }, { kind: 'aborted', cause: 'interrupted' }]);
    const made = events.filter((e) => origin(e).made === 'no-result');
    expect(made).toHaveLength(1);
    expect(dataOf<{ error: JsonObject }>(made[0]).error.code).toBe(NO_RESULT);
  });

  it('makes compacted a replacement of the whole surface by the history Codex kept', () => {
    const { replacements } = foldSurface(events);
    expect(replacements).toHaveLength(1);
    const summary = dataOf<{ content: { text: string }[] }>(events[replacements[0]?.seq ?? -1]);
    expect(summary.content.map((b) => b.text)).toEqual([
      'Why does the build fail?',
      'Summary: the build failed on a string port.',
    ]);
  });

  it('counts a rollback it cannot carry over', () => {
    expect(
      file.skipped.get(
        'event_msg/thread_rolled_back (dropping turns would need a replacement that removes entries)',
      ),
    ).toBe(1);
  });

  it('marks a failed output as an error result', () => {
    const failed = events.filter(
      (e) =>
        e.type === 'tool/result' &&
        origin(e).made === undefined &&
        dataOf<{ message: { content: [{ isError: boolean }] } }>(e).message.content[0].isError,
    );
    expect(failed).toHaveLength(1);
  });
});

describe('Codex, a notice between a call and its output', () => {
  const line = (type: string, payload: object) =>
    JSON.stringify({ timestamp: '2026-11-04T08:00:00.000Z', type, payload });
  const call = (id: string) =>
    line('response_item', { type: 'function_call', name: 'shell', arguments: '{}', call_id: id });
  const output = (id: string) =>
    line('response_item', { type: 'function_call_output', call_id: id, output: 'done' });
  const notice = line('response_item', {
    type: 'message',
    role: 'developer',
    content: [{ type: 'input_text', text: 'Approved command prefix saved.' }],
  });

  function imported(lines: readonly string[]): readonly SessionEvent[] {
    const dir = mkdtempSync(join(tmpdir(), 'codex-notice-'));
    try {
      writeFileSync(join(dir, 'rollout.jsonl'), `${lines.join('\n')}\n`);
      return readSourceFile('codex', join(dir, 'rollout.jsonl')).sessions[0]?.events ?? [];
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  const prompt = line('response_item', {
    type: 'message',
    role: 'user',
    content: [{ type: 'input_text', text: 'Run both.' }],
  });
  const end = line('event_msg', { type: 'task_complete' });

  it('places the notice after the step’s results, where it passes the pairing rules, and says it moved', () => {
    const events = imported([
      prompt,
      call('c1'),
      call('c2'),
      notice,
      output('c1'),
      output('c2'),
      end,
    ]);
    const surface = events.filter((e) => e.surfaceOp !== undefined).map((e) => e.type);
    expect(surface).toEqual([
      'user/message',
      'assistant/message',
      'tool/result',
      'tool/result',
      'context/message',
    ]);
    const moved = events.find((e) => e.type === 'context/message');
    expect(origin(moved as SessionEvent)).toMatchObject({ line: 4, moved: 'after-tool-results' });
    expect(checkInvariants(events, { requireClosed: true })).toEqual([]);
  });

  it('keeps a notice whose call never got its output, after the result made for it', () => {
    const events = imported([prompt, call('c1'), notice]);
    const surface = events.filter((e) => e.surfaceOp !== undefined).map((e) => e.type);
    expect(surface).toEqual([
      'user/message',
      'assistant/message',
      'tool/result',
      'context/message',
    ]);
    expect(checkInvariants(events)).toEqual([]);
  });
});

describe('pi', () => {
  const file = read('pi');
  const [active, branch] = file.sessions;

  it('replaces the surface before firstKeptEntryId with the compaction summary', () => {
    const events = active?.events ?? [];
    const { replacements, seqs } = foldSurface(events);
    expect(replacements).toHaveLength(1);
    const shadowedLines = replacements[0]?.shadowedSeqs.map(
      (seq) => origin(events[seq] as SessionEvent).line,
    );
    // Everything from the first prompt (line 4) to the custom message (line 11); the kept entry
    // (line 15) follows the summary.
    expect(shadowedLines).toEqual([4, 5, 6, 7, 8, 11]);
    expect(origin(events[seqs[1] as number] as SessionEvent).line).toBe(15);
  });

  it('makes the abandoned edit a fork whose aborted call gets a made error result', () => {
    expect(branch?.header.parentSession).toBe(active?.header.id);
    expect(branch?.header.id.endsWith('~e0000013')).toBe(true);
    expect(branch?.madeResults).toBe(1);
    const end = branch?.events.at(-1);
    expect(end?.type).toBe('turn/end');
    expect(dataOf<{ reason: JsonObject }>(end).reason).toEqual({ kind: 'aborted' });
  });

  it('reads bash executions and extension messages as context, and error stops as failed turns', () => {
    const events = active?.events ?? [];
    const names = events
      .filter((e) => e.type === 'context/message')
      .map((e) => dataOf<{ source: { name: string } }>(e).source.name);
    expect(names).toEqual(['bashExecution', 'custom_message', 'branch_summary', 'custom']);
    const end = dataOf<{ reason: JsonObject }>(events.at(-1));
    expect(end.reason).toEqual({ kind: 'error', error: { message: '429 rate limited' } });
  });

  it('counts the entries pi keeps out of the model context', () => {
    expect(Object.fromEntries(file.skipped)).toEqual({
      'model_change (a setting; the model is recorded on each assistant message)': 1,
      'thinking_level_change (a setting, not conversation)': 1,
      "custom (an extension's state; pi never sends it to the model)": 1,
      'label (a bookmark on an entry)': 1,
      'session_info (the display name)': 1,
      'bashExecution excluded from context (a !! command)': 1,
    });
  });
});

describe('pi, version 1 and 2 files', () => {
  it('reads entries without ids as a line, and a hookMessage as context', () => {
    const dir = mkdtempSync(join(tmpdir(), 'palimpsest-pi-v1-'));
    const path = join(dir, 'old.jsonl');
    const at = (s: number) => `2025-06-01T10:00:0${s}.000Z`;
    const lines = [
      { type: 'session', version: 1, id: 'old', timestamp: at(0), cwd: '/app' },
      { type: 'message', timestamp: at(1), message: { role: 'user', content: 'Hello' } },
      {
        type: 'message',
        timestamp: at(2),
        message: { role: 'hookMessage', content: 'a hook said this' },
      },
      {
        type: 'message',
        timestamp: at(3),
        message: {
          role: 'assistant',
          content: [{ type: 'text', text: 'Hi' }],
          provider: 'openai',
          model: 'gpt-5',
          stopReason: 'stop',
        },
      },
    ];
    writeFileSync(path, `${lines.map((line) => JSON.stringify(line)).join('\n')}\n`);
    try {
      const [session, ...forks] = readSourceFile('pi', path).sessions;
      expect(forks).toEqual([]);
      expect(session?.events.map((e) => e.type)).toEqual([
        'turn/start',
        'user/message',
        'context/message',
        'step/start',
        'assistant/message',
        'step/end',
        'turn/end',
      ]);
      expect(checkInvariants(session?.events ?? [], { requireClosed: true })).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('entries a caller hands a reader', () => {
  it('are checked in full: a value JSON text cannot hold (a symbol key) is refused', () => {
    // readSourceFile parses its own lines; a reader called directly may be given any objects.
    const base = { isSidechain: false, sessionId: 's', timestamp: '2026-11-04T08:00:00.000Z' };
    const usage = { input_tokens: 1, output_tokens: 1, [Symbol('hidden')]: 1 };
    const entries: JsonObject[] = [
      {
        ...base,
        type: 'user',
        uuid: 'u1',
        parentUuid: null,
        message: { role: 'user', content: 'Hi' },
      },
      {
        ...base,
        type: 'assistant',
        uuid: 'a1',
        parentUuid: 'u1',
        message: {
          id: 'm1',
          role: 'assistant',
          model: 'claude-sonnet-4-5',
          content: [{ type: 'text', text: 'Hello' }],
          stop_reason: 'end_turn',
          usage,
        },
      },
    ];
    const read = () =>
      readClaudeCode(
        entries.map((value, i) => ({ line: i + 1, value })),
        'session.jsonl',
      );
    expect(read).toThrow(expect.objectContaining({ code: 'NON_JSON_DATA' }));
  });
});
