/**
 * `palimpsest run` against a real HTTP server speaking the OpenAI chat-completions wire format,
 * through the built binary: `--base-url`, `--system`, the banner, and the `openai:` pitfall.
 */
import { execFile, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Agent, runTurn } from '../../src/agent/index.js';
import { openSession, openStore } from '../../src/store/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { parseWireFixture, useWireServer, wireFixturesDir } from '../agent/wire-server.js';
import { binary, cli, liveCli, tempStores } from './helpers.js';

const stores = tempStores();
const server = useWireServer({ per: 'file' });

afterAll(() => {
  stores.remove();
});

/** The binary, run asynchronously so that this process's server can answer it. */
function runAsync(args: readonly string[], env: Record<string, string>) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      [binary, ...args, '--store', stores.urls.jsonl],
      { cwd: stores.dir, env: { ...process.env, NO_COLOR: '1', ...env }, timeout: 60_000 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : -1;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

describe('palimpsest run, interrupted', () => {
  it('exits 130 on Ctrl-C at the prompt, with the session recorded', async () => {
    const child = spawn(
      process.execPath,
      [binary, 'run', '--session', 'ctrl-c', '--store', stores.urls.jsonl],
      {
        cwd: stores.dir,
        env: {
          ...process.env,
          NO_COLOR: '1',
          DEEPSEEK_API_KEY: '',
          OPENAI_API_KEY: '',
          ANTHROPIC_API_KEY: '',
        },
        stdio: ['pipe', 'pipe', 'pipe'],
      },
    );
    let stderr = '';
    const waiting = new Promise<void>((resolve) => {
      child.stderr.on('data', (data: Buffer) => {
        stderr += data.toString();
        if (stderr.includes('type a message')) resolve();
      });
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    await waiting;
    child.kill('SIGINT');
    expect(await exited).toBe(130);
    expect(stderr).toContain('events recorded in session ctrl-c');
  });
});

describe('palimpsest run on an OpenAI-compatible server', () => {
  it('--base-url and --system reach the server, and the banner names the model', async () => {
    server.enqueue({
      fixture: 'openai-compatible/text.http',
      expect: { method: 'POST', path: '/v1/chat/completions' },
    });
    const ran = await runAsync(
      [
        'run',
        'hello',
        '--session',
        'wired',
        '--base-url',
        `${server.baseURL}/v1`,
        '--model',
        'openai-compatible:local-model',
        '--system',
        'Answer in one word.',
      ],
      { OPENAI_API_KEY: 'test-key', DEEPSEEK_API_KEY: '', ANTHROPIC_API_KEY: '' },
    );
    expect(ran.stderr).toMatch(
      /model openai-compatible:local-model at http:\/\/127\.0\.0\.1:\d+\/v1/,
    );
    expect(ran.code).toBe(0);
    expect(server.problems).toEqual([]);
    const body = server.lastRequest().body as {
      model: string;
      messages: { role: string; content: unknown }[];
    };
    expect(body.model).toBe('local-model');
    expect(body.messages[0]).toEqual({ role: 'system', content: 'Answer in one word.' });
  });

  it('says when an attempt failed, and how long it waits as the provider asked', async () => {
    const text = readFileSync(
      join(wireFixturesDir, 'openai-compatible/rate-limited-429.http'),
      'utf8',
    );
    server.enqueue(
      { fixture: parseWireFixture(text.replace('retry-after: 7', 'retry-after: 1'), '429, 1 s') },
      'openai-compatible/text.http',
    );
    const ran = await runAsync(
      ['run', 'hello', '--base-url', `${server.baseURL}/v1`, '--model', 'openai-compatible:m'],
      { OPENAI_API_KEY: 'test-key', DEEPSEEK_API_KEY: '', ANTHROPIC_API_KEY: '' },
    );
    expect(ran.code).toBe(0);
    expect(ran.stderr).toMatch(
      /attempt 1 failed: .*Rate limit reached.*; retrying in \d+\.\d s, as the provider asked \(retry-after 1\.0 s\)/,
    );
  });

  it('refuses openai:NAME while OPENAI_BASE_URL is set, and says which provider to use', () => {
    const refused = cli(
      ['run', 'hello', '--model', 'openai:gpt-4o', '--store', stores.urls.jsonl],
      {
        cwd: stores.dir,
        env: { OPENAI_API_KEY: 'test-key', OPENAI_BASE_URL: `${server.baseURL}/v1` },
      },
    );
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('use --model openai-compatible:gpt-4o');
    expect(server.requests).toHaveLength(3);
  });

  it('--base-url with a model of another provider is a usage error', () => {
    const refused = cli(
      [
        'run',
        'hello',
        '--base-url',
        'http://127.0.0.1:9/v1',
        '--model',
        'anthropic:claude',
        '--store',
        stores.urls.jsonl,
      ],
      { cwd: stores.dir, env: { ANTHROPIC_API_KEY: 'a' } },
    );
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('expected --model openai-compatible:NAME');
  });
});

describe('palimpsest run, typing while the agent works', () => {
  it('steers the running turn: a line typed during the answer reaches the model at the next step', async () => {
    // A slow answer (a pause before each SSE event), then the answer to the steer.
    server.enqueue(
      { fixture: 'openai-compatible/text.http', delayMs: 150 },
      'openai-compatible/text.http',
    );
    const before = server.requests.length;
    const conversation = liveCli(
      [
        'run',
        '--session',
        'steered',
        '--base-url',
        `${server.baseURL}/v1`,
        '--model',
        'openai-compatible:m',
        '--store',
        stores.urls.jsonl,
      ],
      { cwd: stores.dir, env: { OPENAI_API_KEY: 'test-key' } },
    );
    conversation.write('first question\n');
    await conversation.waitFor('stderr', /type a message/);
    while (server.requests.length === before) await new Promise((r) => setTimeout(r, 10));
    conversation.write('only the short version\n');
    await conversation.waitFor('stderr', /↳ queued \(#\d+\): the agent reads it at its next step/);
    await conversation.waitFor('stderr', /↳ steering: only the short version/);
    const ran = await conversation.exit();
    expect(ran.code).toBe(0);
    expect(server.requests.length).toBe(before + 2);
    const body = server.lastRequest().body as { messages: { role: string; content: unknown }[] };
    expect(body.messages.at(-1)).toEqual({ role: 'user', content: 'only the short version' });
    expect(body.messages.at(-2)?.role).toBe('assistant');

    const store = await openStore(stores.urls.jsonl);
    const { events } = await store.load('steered');
    await store.close();
    expect(events.filter((event) => event.type === 'turn/start')).toHaveLength(1);
    expect(events.filter((event) => event.type === 'queue/steer')).toHaveLength(1);
    // The transcript shows the steer where the model read it, after the first answer.
    const shown = cli(['show', 'steered', '--store', stores.urls.jsonl], { cwd: stores.dir });
    expect(shown.stdout).toMatch(
      /user +first question[\s\S]*assistant[\s\S]*user +\(steered into the running turn\) only the short version[\s\S]*assistant/,
    );
  });
});

describe('palimpsest run --resume', () => {
  it('shows a steer nobody read yet as queued, and delivers it as the resumed turn’s input', async () => {
    const store = await openStore(stores.urls.jsonl);
    const session = await openSession(store, 'left-queued');
    await new Agent({ session, model: scriptedModel([]) }).steer('check the logs first');
    await session.close();
    await store.close();
    const shown = cli(['show', 'left-queued', '--store', stores.urls.jsonl], { cwd: stores.dir });
    expect(shown.stdout).toMatch(
      /user +check the logs first\n +\(queued steer, not yet read by the model\)/,
    );

    const resumed = cli(
      [
        'run',
        '--session',
        'left-queued',
        '--resume',
        '--model',
        'scripted',
        '--store',
        stores.urls.jsonl,
      ],
      { cwd: stores.dir },
    );
    expect(resumed.code).toBe(0);
    expect(resumed.stderr).toContain('↳ steering: check the logs first');
    const after = cli(['show', 'left-queued', '--store', stores.urls.jsonl], { cwd: stores.dir });
    expect(after.stdout).toContain('(steered into the running turn) check the logs first');
    expect(after.stdout).not.toContain('not yet read by the model');
  });

  it('continues the turn a killed writer left, without a new prompt', async () => {
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        join(import.meta.dirname, '../agent/crash-child.ts'),
        join(stores.dir, 'sessions'),
        'crashed-run',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    await new Promise<void>((resolve) =>
      child.stdout.on('data', (data: Buffer) => {
        if (data.toString().includes('TOOL_STARTED')) resolve();
      }),
    );
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('exit', resolve));

    const resume = () =>
      cli(
        [
          'run',
          '--session',
          'crashed-run',
          '--resume',
          '--model',
          'scripted',
          '--store',
          stores.urls.jsonl,
        ],
        {
          cwd: stores.dir,
        },
      );
    const resumed = resume();
    expect(resumed.stderr).toContain('repaired on open');
    expect(resumed.code).toBe(0);
    expect(resumed.stdout).toContain('offline scripted model');
    const store = await openStore(stores.urls.jsonl);
    const { events } = await store.load('crashed-run');
    await store.close();
    const starts = events.filter((event) => event.type === 'turn/start').map((event) => event.data);
    expect(starts).toEqual([{ turn: 1 }, { turn: 2, resumes: 1 }]);

    const again = resume();
    expect(again.code).toBe(2);
    expect(again.stderr).toContain(
      '--resume: expected an unfinished last turn or a queued message to resume in session crashed-run, found turn 2 completed',
    );
  }, 30_000);

  it('needs --session', () => {
    const refused = cli(['run', '--resume', '--store', stores.urls.jsonl], { cwd: stores.dir });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('expected --session ID with --resume');
  });
});

describe('palimpsest replay on an OpenAI-compatible server', () => {
  it('sends the recorded request to the server as is, stores the fork and prints both answers', async () => {
    const store = await openStore(stores.urls.jsonl);
    const session = await openSession(store, 'to-replay');
    await runTurn({
      session,
      model: scriptedModel([{ text: 'Recorded answer.' }]),
      system: 'Answer in one word.',
      input: 'hello',
    });
    await session.close();
    await store.close();
    server.enqueue({
      fixture: 'openai-compatible/text.http',
      expect: { method: 'POST', path: '/v1/chat/completions' },
    });
    const ran = await runAsync(
      ['replay', 'to-replay', '--model', 'openai-compatible:local-model', '--id', 'replayed'],
      {
        OPENAI_API_KEY: 'test-key',
        OPENAI_BASE_URL: `${server.baseURL}/v1`,
        DEEPSEEK_API_KEY: '',
        ANTHROPIC_API_KEY: '',
      },
    );
    expect(ran.stderr).toBe('');
    expect(ran.code).toBe(0);
    expect(server.problems).toEqual([]);
    const body = server.lastRequest().body as { model: string; messages: unknown[] };
    expect(body.model).toBe('local-model');
    expect(body.messages).toEqual([
      { role: 'system', content: 'Answer in one word.' },
      { role: 'user', content: 'hello' },
    ]);
    expect(ran.stdout).toMatch(
      /recorded: scripted:scripted-model .*│ asked again: openai-compatible.chat:local-model/,
    );
    expect(ran.stdout).toContain('Recorded answer.');
    expect(ran.stdout).toContain('The log is append-only, so nothing is lost.');
    expect(ran.stdout).toContain("recorded in fork 'replayed' of 'to-replay'");
    const verified = cli(['verify', 'replayed', '--store', stores.urls.jsonl], { cwd: stores.dir });
    expect(verified.code).toBe(0);
  });
});
