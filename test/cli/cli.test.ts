import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { convertToLlm, SessionManager } from '@mariozechner/pi-coding-agent';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Session } from '../../src/core/index.js';
import { readSourceFile } from '../../src/import/index.js';
import { openSession, openStore } from '../../src/store/index.js';
import { cli, liveCli, tempStores } from './helpers.js';

const stores = tempStores();
afterAll(() => stores.remove());

describe.each(['jsonl', 'sqlite'] as const)('palimpsest on a %s store', (backend) => {
  const store = stores.urls[backend];
  const run = (...args: string[]) => cli([...args, '--store', store], { cwd: stores.dir });
  let id = '';

  beforeAll(() => {
    const demo = run('demo');
    expect(demo.stderr).toContain('offline scripted model');
    expect(demo.code).toBe(0);
    id = /session (demo-[0-9a-f]{8})/.exec(demo.stdout)?.[1] ?? '';
    expect(id).not.toBe('');
  });

  it('demo records the whole scenario and says how to look at it', () => {
    const listed = run('ls', '--json', '--surface');
    const sessions = JSON.parse(listed.stdout) as Array<{
      id: string;
      turns: number;
      events: number;
      surface: number;
    }>;
    const demo = sessions.find((session) => session.id === id);
    expect(demo).toMatchObject({ turns: 5 });
    expect(demo?.surface).toBeLessThan(demo?.events ?? 0);
    const log = run('log', id, '--json');
    const types = log.stdout
      .trim()
      .split('\n')
      .map((line) => (JSON.parse(line) as { type: string }).type);
    expect(types.filter((type) => type === 'compaction/start')).toHaveLength(2);
    expect(types.filter((type) => type === 'turn/end')).toHaveLength(5);
    const tool = run('log', id, '--type', 'tool/result', '--json');
    expect(tool.stdout).toContain('TOOL_OUTCOME_UNKNOWN');
  });

  it('ls prints a table from summaries, and the surface columns with --surface', () => {
    const listed = run('ls');
    expect(listed.code).toBe(0);
    expect(listed.stdout.split('\n')[0]).toMatch(
      /^ID\s+CREATED\s+TURNS\s+EVENTS\s+USED\s+COST\s+LAST ACTIVITY\s+DURATION\s+PARENT$/,
    );
    expect(listed.stdout).toContain(id);
    const full = run('ls', '--surface');
    expect(full.stdout.split('\n')[0]).toMatch(
      /^ID\s+CREATED\s+TURNS\s+EVENTS\s+SURFACE\s+~TOKENS\s+USED\s+COST\s+LAST ACTIVITY\s+DURATION\s+PARENT$/,
    );
    // The summary columns agree with what a full load computes.
    const summary = JSON.parse(run('ls', '--json').stdout) as Record<string, unknown>[];
    const loaded = JSON.parse(run('ls', '--json', '--surface').stdout) as Record<string, unknown>[];
    expect(loaded.map(({ surface, tokens, ...rest }) => rest)).toEqual(summary);
  });

  it('show prints the transcript, with markers where history was replaced', () => {
    const shown = run('show', id);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain('What is this project? Have a look around.');
    expect(shown.stdout).toMatch(/no longer seen by the model: replaced by #\d+/);
    expect(shown.stdout).toMatch(
      /history replaced: \d+ surface entries, #\d+ to #\d+ in surface order \(#\d+, /,
    );
    expect(shown.stdout).toMatch(/tool result rewritten/);
  });

  it('show opens each turn with its model, start and duration, and says how it ended when not completed', () => {
    const lines = run('show', id).stdout.split('\n');
    const separators = lines.filter((line) => line.startsWith('── turn '));
    expect(separators).toHaveLength(5);
    expect(separators[0]).toMatch(
      /^── turn 1 · scripted:scripted-model · \d{4}-\d\d-\d\d \d\d:\d\d:\d\d · [\d.]+ m?s ──$/,
    );
    // The demo's writer is killed in turn 4: its repair closes the turn as interrupted.
    expect(separators[3]).toMatch(/^── turn 4 · .* · interrupted ──$/);
    // A turn's line comes right before its prompt.
    const first = lines.indexOf(separators[0] ?? '');
    expect(lines[first + 1]).toContain('What is this project? Have a look around.');
  });

  it('surface shows what the model sees now, and at an earlier event', () => {
    const now = run('surface', id);
    expect(now.stdout).toContain('[Summary of the earlier conversation');
    const early = run('surface', id, '--at', '20');
    expect(early.stdout).toContain('what the model saw after event #20');
    expect(early.stdout).not.toContain('[Summary');
    const json = JSON.parse(run('surface', id, '--at', '20', '--json').stdout) as {
      entries: unknown[];
    };
    expect(json.entries.length).toBeGreaterThan(1);
  });

  it('why shows what an event was derived from and what shadowed it', () => {
    const first = run('why', id, '1');
    expect(first.stdout).toContain('#1 user/message');
    expect(first.stdout).toMatch(/shadowed by #\d+ user\/message/);
    const json = JSON.parse(run('why', id, '1', '--json').stdout) as {
      shadowedBy: number[];
      citedBy: number[];
    };
    expect(json.shadowedBy).toHaveLength(1);
    const summary = run('why', id, String(json.shadowedBy[0]));
    expect(summary.stdout).toMatch(/derived from:\n├─ #1 user\/message/);
    expect(summary.stdout).toMatch(/stream chunk\(s\) #\d+–#\d+/);
  });

  it('export writes Markdown, palimpsest JSON and provider request bodies', () => {
    expect(run('export', id).stdout).toMatch(/^# Session demo-/);
    const json = JSON.parse(run('export', id, '--format', 'json').stdout) as {
      messages: unknown[];
    };
    expect(json.messages.length).toBeGreaterThan(3);
    const openai = JSON.parse(run('export', id, '--format', 'openai', '--at', '40').stdout) as {
      messages: Array<{ role: string; tool_calls?: unknown[] }>;
    };
    expect(openai.messages[0]?.role).toBe('system');
    expect(openai.messages.some((message) => message.tool_calls !== undefined)).toBe(true);
    const anthropic = JSON.parse(run('export', id, '--format', 'anthropic').stdout) as {
      system: string;
      tools: unknown[];
    };
    expect(anthropic.system).toContain('careful coding agent');
    expect(anthropic.tools.length).toBeGreaterThan(0);
    const bad = run('export', id, '--format', 'yaml');
    expect(bad.code).toBe(2);
  });

  it('request prints the request a call received with its digest, or a provider body', () => {
    const last = JSON.parse(run('request', id).stdout) as {
      turn: number;
      digest: string;
      recordedDigest: string;
      request: { provider: string; options: { prompt: Array<{ role: string }> } };
    };
    expect(last.turn).toBe(5);
    expect(last.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(last.recordedDigest).toBe(last.digest);
    expect(last.request.options.prompt[0]?.role).toBe('system');
    const early = JSON.parse(run('request', id, '40').stdout) as { turn: number; digest: string };
    expect(early.digest).not.toBe(last.digest);
    const openai = JSON.parse(run('request', id, '40', '--wire', 'openai').stdout) as {
      messages: Array<{ role: string }>;
    };
    expect(openai.messages[0]?.role).toBe('system');
    const outside = run('request', id, '0');
    expect(outside.code).toBe(2);
    expect(outside.stderr).toContain('outside every step');
    expect(run('request', id, '--wire', 'gemini').code).toBe(2);
  });

  it('export-evals writes one JSON line per turn that ended with an answer, or the calls at the seqs given', () => {
    const evals = run('export-evals', id);
    expect(evals.code).toBe(0);
    const lines = evals.stdout
      .trim()
      .split('\n')
      .map(
        (line) =>
          JSON.parse(line) as {
            messages: Array<{ role: string }>;
            metadata: { session: string; seq: number; requestDigest: string };
          },
      );
    expect(lines.length).toBeGreaterThanOrEqual(4);
    for (const line of lines) {
      expect(line.messages[0]?.role).toBe('system');
      expect(line.messages.at(-1)?.role).toBe('assistant');
      expect(line.metadata.session).toBe(id);
      expect(line.metadata.requestDigest).toMatch(/^sha256:/);
    }
    expect(evals.stderr).toContain(`${lines.length} eval case(s) written`);
    const one = run('export-evals', id, '--at', String(lines[0]?.metadata.seq));
    expect(JSON.parse(one.stdout)).toEqual(lines[0]);
    expect(run('export-evals', id, '--at', '0').code).toBe(2);
    expect(run('export-evals', id, id, '--at', '5').code).toBe(2);
  });

  it('replay asks another model the recorded request, stores the answer in a fork and prints both', () => {
    const asked = run('replay', id, '--at', '40', '--model', 'scripted', '--id', 'asked-again');
    expect(asked.code).toBe(0);
    expect(asked.stdout).toMatch(/^recorded: .*│ asked again: scripted:scripted-model/);
    expect(asked.stdout).toContain('This answer comes from');
    expect(asked.stdout).toContain("recorded in fork 'asked-again'");
    expect(run('verify', 'asked-again').code).toBe(0);
    const json = JSON.parse(run('replay', id, '40', '--model', 'scripted', '--json').stdout) as {
      fork: string;
      recorded: { text: string };
      answer: { text: string };
    };
    expect(json.recorded.text).not.toBe(json.answer.text);
    expect(run('replay', id, '40', '--at', '41', '--model', 'scripted').code).toBe(2);
    expect(run('replay', id, '0', '--model', 'scripted').code).toBe(2);
    const noModel = run('replay', id, '40');
    expect(noModel.code).toBe(2);
    expect(noModel.stderr).toContain('needs a model');
    expect(run('replay', 'no-such-session', '--model', 'scripted').code).toBe(3);
  });

  it('cache prints the prefix each call shared with the one before and the compaction that broke it', async () => {
    const table = run('cache', id);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/^SEQ +TURN\.STEP +REQUEST +SHARED +CACHED +BREAK\n/);
    const summarySeq = (
      JSON.parse(run('why', id, '1', '--json').stdout) as { shadowedBy: number[] }
    ).shadowedBy[0];
    expect(table.stdout).toMatch(new RegExp(`compaction at #${summarySeq} \\(message 0\\)`));
    expect(table.stdout).toMatch(/\d+ call\(s\), 1 break\(s\)/);
    const json = JSON.parse(run('cache', id, '--json').stdout) as {
      calls: Array<{ turn: number; break?: { cause: string; seq: number } }>;
      breaks: number;
    };
    expect(json.calls.filter((call) => call.break).map((call) => call.break?.cause)).toEqual([
      'compaction',
    ]);
    expect(json.breaks).toBe(1);
    const opened = await openStore(store);
    const quiet = await openSession(opened, 'no-calls');
    quiet.append(
      'user/message',
      { id: 'u', role: 'user', content: [{ type: 'text', text: 'hi' }], source: { kind: 'user' } },
      { surfaceOp: 'append' },
    );
    await quiet.close();
    const none = run('cache', 'no-calls');
    expect(none.code).toBe(9);
    expect(none.stderr).toContain('holds no model call');
    await opened.delete('no-calls');
    await opened.close();
    expect(run('cache', 'no-such-session').code).toBe(3);
  });

  it('verify names an answer whose recorded request digest the rebuilt request does not match', async () => {
    const opened = await openStore(store);
    const session = await openSession(opened, 'drifted');
    session.append('turn/start', { turn: 1 });
    session.append(
      'user/message',
      { id: 'u', role: 'user', content: [{ type: 'text', text: 'hi' }], source: { kind: 'user' } },
      { surfaceOp: 'append' },
    );
    session.append('step/start', { turn: 1, step: 1 });
    session.append('request/header', { provider: 'p', model: 'm' });
    session.append(
      'assistant/message',
      {
        turn: 1,
        step: 1,
        finishReason: 'stop',
        message: {
          id: 'a',
          role: 'assistant',
          content: [{ type: 'text', text: 'hello' }],
          source: { kind: 'model', provider: 'p', model: 'm' },
        },
        requestDigest: `sha256:${'0'.repeat(64)}`,
      },
      { surfaceOp: 'append', sourceEventSeqs: [] },
    );
    session.append('step/end', { turn: 1, step: 1 });
    session.append('turn/end', { turn: 1, reason: { kind: 'completed' } });
    await session.close();
    await opened.close();
    const verified = run('verify', 'drifted');
    expect(verified.code).toBe(7);
    expect(verified.stdout).toContain('#4 REQUEST_DIGEST');
    const request = run('request', 'drifted');
    expect(request.code).toBe(0);
    expect(request.stderr).toContain(`the writer recorded sha256:${'0'.repeat(64)}`);
    // The other tests verify the whole store.
    const cleanup = await openStore(store);
    await cleanup.delete('drifted');
    await cleanup.close();
  });

  it('export --format pi writes a file pi opens with the messages the model sees, losses on stderr', () => {
    const exported = run('export', id, '--format', 'pi');
    expect(exported.code).toBe(0);
    expect(exported.stderr).toContain('not carried over to pi:');
    expect(exported.stderr).toContain('stream chunks');
    const file = join(stores.dir, `${backend}-export.jsonl`);
    writeFileSync(file, exported.stdout);
    const byPi = convertToLlm(SessionManager.open(file, stores.dir).buildSessionContext().messages);
    const ours = (
      JSON.parse(run('export', id, '--format', 'json').stdout) as {
        messages: { role: string }[];
      }
    ).messages;
    expect(byPi.map((message) => message.role)).toEqual(
      ours.map((message) => (message.role === 'tool' ? 'toolResult' : message.role)),
    );
    expect(run('export', id, '--format', 'pi', '--at', '3').code).toBe(2);
  });

  it('export --format codex writes a rollout that imports back, and says where Codex looks for it', () => {
    const exported = run('export', id, '--format', 'codex');
    expect(exported.code).toBe(0);
    expect(exported.stderr).toMatch(
      /save it as ~\/\.codex\/sessions\/\d{4}\/\d{2}\/\d{2}\/rollout-/,
    );
    expect(exported.stderr).toContain('then run codex resume ');
    const file = join(stores.dir, `${backend}-export-codex.jsonl`);
    writeFileSync(file, exported.stdout);
    const [back] = readSourceFile('codex', file).sessions;
    if (back === undefined) throw new Error('the rollout imported no session');
    const ours = (
      JSON.parse(run('export', id, '--format', 'json').stdout) as {
        messages: { role: string }[];
      }
    ).messages;
    const again = Session.create({ header: back.header, seed: back.events });
    expect(again.deriveMessages().map((message) => message.role)).toEqual(
      ours.map((message) => message.role),
    );
  });

  it('verify passes on good sessions', () => {
    const verified = run('verify', '--all');
    expect(verified.code).toBe(0);
    expect(verified.stdout).toMatch(new RegExp(`${id}\\s+\\d+\\s+ok`));
    expect(verified.stderr).toBe('');
  });

  it('fork copies a prefix into a new session that names its parent', () => {
    const forked = run('fork', id, '--at', '74', '--id', `${id}-fork`);
    expect(forked.code).toBe(0);
    expect(forked.stdout).toContain(`into '${id}-fork' (75 events)`);
    const listed = JSON.parse(run('ls', '--json').stdout) as Array<{
      id: string;
      parent: string | null;
    }>;
    expect(listed.find((session) => session.id === `${id}-fork`)?.parent).toBe(id);
    expect(run('fork', id, '--at', '30').code).toBe(2);
  });

  it('prune and compact rewrite the surface through the library', () => {
    const fork = `${id}-rewrite`;
    run('fork', id, '--at', '160', '--id', fork);
    const pruned = run('prune', fork, '--keep-recent-turns', '0', '--min-chars', '100');
    expect(pruned.code).toBe(0);
    expect(pruned.stdout).toMatch(/pruned \d+ tool result/);
    expect(run('prune', fork, '--keep-recent-turns', '0', '--min-chars', '100').stdout).toContain(
      'no tool result to prune',
    );
    const compacted = run('compact', fork, '--keep-recent-tokens', '0', '--model', 'scripted');
    expect(compacted.code).toBe(0);
    expect(compacted.stdout).toMatch(/replaced \d+ surface entries with summary #\d+/);
    expect(run('verify', fork).code).toBe(0);
  });

  it('compact without a model refuses instead of writing a placeholder over real history', () => {
    const fork = `${id}-no-model`;
    run('fork', id, '--at', '160', '--id', fork);
    const before = run('log', fork, '--json').stdout;
    const refused = run('compact', fork, '--keep-recent-tokens', '0');
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/compact needs a model.*--model scripted/);
    expect(run('log', fork, '--json').stdout).toBe(before);
  });

  it('compact exits 9 when its summary would not be shorter, and changes nothing', () => {
    // Turns of a few words: a summary cannot be shorter than what it would replace.
    const fork = `${id}-short`;
    for (const word of ['hi', 'ok']) run('run', word, '--session', fork);
    const before = run('log', fork, '--json').stdout.trim().split('\n');
    const kept = run('compact', fork, '--keep-recent-tokens', '0', '--model', 'scripted');
    expect(kept.stdout).toContain('nothing replaced (not-shorter)');
    expect(kept.code).toBe(9);
    const after = run('log', fork, '--json').stdout.trim().split('\n');
    // The attempt is bracketed in the log; the surface is untouched.
    expect(after.slice(0, before.length)).toEqual(before);
    const entries = (...args: string[]) =>
      (JSON.parse(run('surface', fork, ...args, '--json').stdout) as { entries: unknown }).entries;
    expect(entries()).toEqual(entries('--at', String(before.length - 1)));
  });

  it('commands that rewrite a session refuse a mistyped id with exit code 3 and create nothing', () => {
    for (const args of [
      ['prune', 'no-such-session'],
      ['compact', 'no-such-session', '--model', 'scripted'],
      ['repair', 'no-such-session'],
    ]) {
      const refused = run(...args);
      expect(refused.code, args.join(' ')).toBe(3);
      expect(refused.stderr).toContain("session 'no-such-session' does not exist");
    }
    const listed = JSON.parse(run('ls', '--json').stdout) as Array<{ id: string }>;
    expect(listed.map((session) => session.id)).not.toContain('no-such-session');
  });

  it('a filter or limit that cannot match is a usage error, not an empty answer', () => {
    const typo = run('log', id, '--type', 'tool/resutl');
    expect(typo.code).toBe(2);
    expect(typo.stderr).toMatch(/--type expects an event type or area such as .*tool/);
    expect(run('log', id, '--type', 'tool').code).toBe(0);
    const none = run('ls', '--limit', '0');
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('--limit expects at least 1');
  });

  it('run records a turn with the scripted model and continues a session by id', () => {
    const first = run('run', 'hello there', '--session', 'chat');
    expect(first.code).toBe(0);
    expect(first.stdout).toContain('offline scripted model');
    const second = run('run', 'and again', '--session', 'chat');
    expect(second.code).toBe(0);
    const listed = JSON.parse(run('ls', '--json').stdout) as Array<{ id: string; turns: number }>;
    expect(listed.find((session) => session.id === 'chat')?.turns).toBe(2);
  });

  it('run without a prompt holds a conversation on stdin until an empty line', async () => {
    const conversation = liveCli(['run', '--session', 'talk', '--store', store], {
      cwd: stores.dir,
    });
    // Each line typed after the previous answer is a turn of its own (typed during a turn, a
    // line steers it: run-wire.test.ts).
    conversation.write('first\n');
    await conversation.waitFor('stdout', /offline scripted model[\s\S]*\n/);
    await conversation.waitFor('stderr', /type a message/);
    conversation.write('second\n');
    await conversation.waitFor('stdout', /(offline scripted model[\s\S]*){2}\n/);
    conversation.write('\n');
    expect((await conversation.exit()).code).toBe(0);
    const listed = JSON.parse(run('ls', '--json').stdout) as Array<{ id: string; turns: number }>;
    expect(listed.find((session) => session.id === 'talk')?.turns).toBe(2);
  });

  it('show cuts a long single line, and --full prints it whole', async () => {
    const live = await openSession(await openStore(store), 'one-long-line');
    const line = 'x'.repeat(1_000_000);
    live.append(
      'user/message',
      { id: 'u', role: 'user', content: [{ type: 'text', text: line }], source: { kind: 'user' } },
      { surfaceOp: 'append' },
    );
    await live.close();
    await live.store.close();
    const shown = run('show', 'one-long-line');
    expect(shown.code).toBe(0);
    expect(shown.stdout.length).toBeLessThan(2_000);
    expect(shown.stdout).toContain('… (999600 more characters)');
    expect(run('show', 'one-long-line', '--full').stdout).toContain(line);
  });

  it('a missing session is one line and exit code 3', () => {
    const missing = run('show', 'no-such-session');
    expect(missing.code).toBe(3);
    expect(missing.stderr.trim().split('\n')).toHaveLength(1);
    expect(missing.stderr).toMatch(
      /^palimpsest: session 'no-such-session' does not exist .*palimpsest ls/,
    );
  });

  it('usage mistakes exit with code 2', () => {
    expect(run('surface', id, '--at', 'abc').code).toBe(2);
    expect(run('surface', id, '--at', '999999').code).toBe(2);
    expect(run('frobnicate').code).toBe(2);
    expect(run('verify').code).toBe(2);
    expect(run('run', 'x', '--model', 'nope:model').code).toBe(2);
    expect(run('run', 'x', '--model', 'deepseek:deepseek-chat').stderr).toContain(
      'DEEPSEEK_API_KEY',
    );
  });

  it('--debug adds the stack to an error', () => {
    const debug = run('show', 'no-such-session', '--debug');
    expect(debug.stderr.split('\n').length).toBeGreaterThan(3);
    expect(debug.stderr).toContain('NotFoundError');
  });

  it('repair closes a turn a crashed writer left open, once', async () => {
    const opened = await openStore(store);
    const session = await openSession(opened, 'crashed');
    session.append('turn/start', { turn: 1 });
    session.append(
      'user/message',
      { id: 'u', role: 'user', content: [{ type: 'text', text: 'go' }], source: { kind: 'user' } },
      { surfaceOp: 'append' },
    );
    session.append('step/start', { turn: 1, step: 1 });
    await session.flush();
    // Leave without closing the turn, as a killed writer would (the lock is released on close).
    await session.close();
    await opened.close();
    const verified = run('verify', 'crashed');
    expect(verified.code).toBe(7);
    expect(verified.stdout).toContain('palimpsest repair crashed closes it');
    // The read-only views show what is stored, and say what repair would add.
    const stored = run('log', 'crashed');
    expect(stored.code).toBe(0);
    expect(stored.stdout).not.toContain('turn/end');
    expect(stored.stderr).toMatch(/ends inside a turn.*palimpsest repair crashed closes it/);
    expect(run('log', 'crashed', '--json').stdout.trim().split('\n')).toHaveLength(3);
    expect(run('show', 'crashed').stderr).toContain('ends inside a turn');
    const repaired = run('repair', 'crashed');
    expect(repaired.code).toBe(0);
    expect(repaired.stdout).toContain('appended 2 closing event(s)');
    expect(run('repair', 'crashed').stdout).toContain('needed no repair');
    expect(run('verify', 'crashed').code).toBe(0);
    expect(run('log', 'crashed').stdout).toContain('turn/end');
    expect(run('log', 'crashed').stderr).toBe('');
  });

  it('run says when it repaired the session it continues, and names its model', async () => {
    const opened = await openStore(store);
    const session = await openSession(opened, 'crashed-run');
    session.append('turn/start', { turn: 1 });
    await session.close();
    await opened.close();
    const ran = run('run', 'are you there?', '--session', 'crashed-run');
    expect(ran.code).toBe(0);
    expect(ran.stderr).toContain('· model scripted:scripted-model');
    expect(ran.stderr).toMatch(/repaired on open: .*1 closing event\(s\) appended/);
    expect(run('run', 'again', '--session', 'crashed-run').stderr).not.toContain('repaired');
  });

  it('a session locked by a live writer is exit code 5 for writing commands', async () => {
    const opened = await openStore(store);
    const session = await openSession(opened, 'busy');
    session.append('turn/start', { turn: 1 });
    await session.flush();
    try {
      const blocked = run('repair', 'busy');
      expect(blocked.code).toBe(5);
      expect(blocked.stderr).toMatch(/locked|held/i);
      expect(run('show', 'busy').code).toBe(0);
    } finally {
      await session.close();
      await opened.close();
    }
  });

  it('--help explains every command', () => {
    const help = run('--help');
    expect(help.code).toBe(0);
    for (const command of [
      'demo',
      'run',
      'ls',
      'show',
      'surface',
      'log',
      'why',
      'verify',
      'request',
      'replay',
      'cache',
      'export-evals',
      'repair',
      'fork',
      'compact',
      'prune',
      'unlock',
      'gc',
      'archive',
      'restore',
      'export',
      'convert',
    ]) {
      expect(help.stdout).toContain(command);
      const one = run(command, '--help');
      expect(one.code).toBe(0);
      expect(one.stdout).toContain(`Usage: palimpsest ${command}`);
    }
  });
});

/** Control, C1, line-separator and bidi characters no export or --json output may hold raw. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: looking for leaked control characters.
const LEAKED = /[\u001b\u0007\u0080-\u009f\u2028\u202a-\u202e\u2066-\u2069]/;

describe('palimpsest on damaged or foreign logs', () => {
  const dir = stores.dir;
  const url = `jsonl:${join(dir, 'damaged')}`;

  beforeAll(async () => {
    const store = await openStore(url);
    for (const id of ['corrupt', 'future', 'invalid', 'escape', 'many', 'bidi\u202eid\u2028x']) {
      const session = await openSession(store, id);
      session.append('turn/start', { turn: 1 });
      session.append(
        'user/message',
        {
          id: 'u',
          role: 'user',
          content: [{ type: 'text', text: 'hello' }],
          source: { kind: 'user' },
        },
        { surfaceOp: 'append' },
      );
      if (id === 'invalid') session.append('step/end', { turn: 1, step: 3 });
      if (id === 'many') {
        for (let step = 1; step <= 40; step++) session.append('step/end', { turn: 1, step });
      }
      if (id === 'escape') {
        session.append(
          'context/message',
          {
            id: 'c',
            role: 'user',
            content: [
              {
                type: 'text',
                text: 'before\u001b[2J\u001b]0;pwned\u0007\u009b31m\u202eafter\u2028next',
              },
              { type: 'text', text: '<script>alert(1)</script> [x](javascript:alert(1))\n```' },
            ],
            source: { kind: 'context' },
          },
          { surfaceOp: 'append' },
        );
      }
      session.append('turn/end', { turn: 1, reason: { kind: 'completed' } });
      await session.flush();
      session.append('turn/start', { turn: 2 });
      session.append('turn/end', { turn: 2, reason: { kind: 'completed' } });
      await session.close();
    }
    await store.close();
    const files = readdirSync(join(dir, 'damaged')).filter((name) => name.endsWith('.jsonl'));
    const corrupt = join(dir, 'damaged', files.find((name) => name.startsWith('corrupt')) ?? '');
    const lines = readFileSync(corrupt, 'utf8').split('\n');
    // After the header and its seal, the first event, in the first of two batches: damage
    // before the last batch.
    expect(lines[2]).toContain('"turn":1');
    lines[2] = (lines[2] ?? '').replace('"turn":1', '"turn":7');
    writeFileSync(corrupt, lines.join('\n'));
    const future = join(dir, 'damaged', files.find((name) => name.startsWith('future')) ?? '');
    const text = readFileSync(future, 'utf8');
    writeFileSync(future, text.replace('"version":1', '"version":99'));
  });

  const run = (...args: string[]) => cli([...args, '--store', url], { cwd: dir });

  it('a damaged log is one line naming the file and exit code 4', () => {
    const shown = run('show', 'corrupt');
    expect(shown.code).toBe(4);
    expect(shown.stderr.trim().split('\n')).toHaveLength(1);
    expect(shown.stderr).toMatch(/corrupt.*line/i);
  });

  it('a log of a newer format is exit code 6 and says to upgrade', () => {
    const shown = run('show', 'future');
    expect(shown.code).toBe(6);
    expect(shown.stderr).toMatch(/upgrade palimpsest/);
  });

  it('verify reports violations with exit code 7, and a table of all sessions', () => {
    const verified = run('verify', '--all');
    expect(verified.code).toBe(7);
    expect(verified.stdout).toMatch(/invalid\s+\d+\s+1 problem/);
    expect(verified.stdout).toMatch(/corrupt\s+0\s+1 problem/);
    expect(verified.stdout).toMatch(/escape\s+\d+\s+ok/);
  });

  it('verify prints 20 problems of a session after the first and counts the rest; --json has all', () => {
    const verified = run('verify', 'many');
    expect(verified.code).toBe(7);
    const problems = verified.stdout.split('\n').filter((line) => line.startsWith('many: '));
    expect(problems).toHaveLength(21);
    expect(problems.at(-1)).toBe('many: … and 19 more problem(s) (--json lists every one)');
    const [result] = JSON.parse(run('verify', 'many', '--json').stdout);
    expect(result.problems).toHaveLength(40);
  });

  it('escapes control characters from the log instead of sending them to the terminal', () => {
    for (const args of [
      ['show', 'escape'],
      ['surface', 'escape'],
      ['log', 'escape'],
    ]) {
      const output = run(...(args as [string, string]));
      expect(output.code).toBe(0);
      // biome-ignore lint/suspicious/noControlCharactersInRegex: looking for leaked control characters.
      expect(output.stdout).not.toMatch(/[\u001b\u0007\u009b\u202e\u2028]/);
      expect(output.stdout).toContain('\\u001b[2J');
    }
  });

  it('escapes ids, echoed options and --debug stacks on every command, not only the log', () => {
    const outputs = [
      run('ls'),
      run('verify', '--all'),
      run('repair', 'bidi\u202eid\u2028x'),
      run('unlock', 'bidi\u202eid\u2028x'),
      run('show', 'no\u202esuch\u001b[2J', '--debug'),
      run('ls', '--\u001b[31mred'),
      run('show', 'corrupt', '--debug'),
    ];
    for (const output of outputs) {
      // biome-ignore lint/suspicious/noControlCharactersInRegex: looking for leaked control characters.
      expect(output.stdout + output.stderr).not.toMatch(/[\u001b\u0007\u009b\u202e\u2028]/);
    }
    expect(outputs[0]?.stdout).toContain('bidi\\u202eid\\u2028x');
    expect(outputs[5]?.stderr).toContain('\\u001b[31mred');
  });

  it('exports and --json output carry no control, C1 or bidi character and no live markup', () => {
    for (const args of [
      ['export', 'escape'],
      ['export', 'escape', '--format', 'json'],
      ['export', 'escape', '--format', 'openai'],
      ['log', 'escape', '--json'],
      ['show', 'escape', '--json'],
    ]) {
      const output = run(...args);
      expect(output.code, args.join(' ')).toBe(0);
      expect(output.stdout).not.toMatch(LEAKED);
      if (args.includes('--format')) {
        expect(JSON.stringify(JSON.parse(output.stdout))).toContain('\u009b31m\u202eafter');
      }
    }
    const markdown = run('export', 'escape').stdout;
    expect(markdown).toContain('&lt;script>alert(1)&lt;/script> [x]\\(javascript:alert(1))');
    expect(markdown).toMatch(/```\n```\n\n/);
  });
});

describe('palimpsest on a store that does not exist', () => {
  it('refuses read and rewrite commands with exit code 3 and creates nothing', () => {
    const temp = tempStores();
    try {
      for (const url of [temp.urls.jsonl, temp.urls.sqlite]) {
        for (const args of [
          ['ls'],
          ['show', 'x'],
          ['verify', '--all'],
          ['repair', 'x'],
          ['prune', 'x'],
        ]) {
          const result = cli([...args, '--store', url]);
          expect(result.code).toBe(3);
          expect(result.stderr).toContain(`there is no store at ${url}`);
        }
      }
      expect(readdirSync(temp.dir)).toEqual([]);
    } finally {
      temp.remove();
    }
  });
});

describe('palimpsest convert', () => {
  it('copies every session between backends, verified, and resumes an interrupted copy', async () => {
    const temp = tempStores();
    try {
      const source = await openStore(temp.urls.jsonl);
      for (const id of ['a', 'b']) {
        const session = await openSession(source, id);
        for (let turn = 1; turn <= 3; turn++) {
          session.append('turn/start', { turn });
          session.append(
            'user/message',
            {
              id: `u${turn}`,
              role: 'user',
              content: [{ type: 'text', text: `q${turn}` }],
              source: { kind: 'user' },
            },
            { surfaceOp: 'append' },
          );
          session.append('turn/end', { turn, reason: { kind: 'completed' } });
        }
        await session.close();
      }
      // An interrupted earlier copy: the target holds the first four events of 'b'.
      const target = await openStore(temp.urls.sqlite);
      const b = await source.load('b');
      await target.create(b.header);
      await target.append('b', b.events.slice(0, 4), { expectedSeq: 0 });
      await target.close();
      await source.close();

      const first = cli([
        'convert',
        '--from',
        temp.urls.jsonl,
        '--to',
        temp.urls.sqlite,
        '--all',
        '--json',
      ]);
      expect(first.code).toBe(0);
      const outcomes = JSON.parse(first.stdout) as Array<{
        id: string;
        result: string;
        copied: number;
      }>;
      expect(
        outcomes.map((outcome) => [outcome.id, outcome.result, outcome.copied]).sort(),
      ).toEqual([
        ['a', 'copied', 9],
        ['b', 'resumed', 5],
      ]);
      const again = cli(['convert', '--from', temp.urls.jsonl, '--to', temp.urls.sqlite, '--all']);
      expect(again.stdout).toMatch(/a\s+9\s+up to date/);
      expect(cli(['verify', '--all', '--store', temp.urls.sqlite]).code).toBe(0);
      const reread = await openStore(temp.urls.sqlite);
      const copy = await reread.load('a');
      expect(
        Session.create({ header: copy.header, seed: copy.events }).deriveMessages(),
      ).toHaveLength(3);
      await reread.close();
      expect(cli(['convert', '--to', temp.urls.sqlite]).code).toBe(2);
    } finally {
      temp.remove();
    }
  });
});

describe('palimpsest convert of a crashed session', () => {
  it('copies it as stored and warns that a turn is open, naming repair', async () => {
    const temp = tempStores();
    try {
      const source = await openStore(temp.urls.jsonl);
      const session = await openSession(source, 'crashed');
      session.append('turn/start', { turn: 1 });
      await session.close();
      await source.close();
      const copied = cli([
        'convert',
        '--from',
        temp.urls.jsonl,
        '--to',
        temp.urls.sqlite,
        'crashed',
      ]);
      expect(copied.code).toBe(0);
      expect(copied.stderr).toMatch(
        /^warning: session 'crashed' ends inside a turn .*palimpsest repair crashed/,
      );
      expect(copied.stdout).toMatch(
        /crashed\s+1\s+copied\s+1\s+session 'crashed' ends inside a turn/,
      );
    } finally {
      temp.remove();
    }
  });
});

describe('palimpsest --version', () => {
  it('prints the version of package.json through the built binary', () => {
    const manifest = JSON.parse(
      readFileSync(join(import.meta.dirname, '..', '..', 'package.json'), 'utf8'),
    ) as { version: string };
    const shown = cli(['--version']);
    expect(shown.code).toBe(0);
    expect(shown.stdout.trim()).toBe(manifest.version);
  });
});
