/**
 * The real Codex CLI (`@openai/codex`, a dev dependency) run against a loopback server speaking
 * the Responses API: a rollout is put where Codex looks for it, `codex exec resume` continues it
 * with one more prompt, and the request Codex sent the model is what the tests read.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { startResponsesServer, textOutput } from '../adapters/openai-agents/responses-server.js';

const CODEX = join(import.meta.dirname, '..', '..', 'node_modules', '.bin', 'codex');

/** One item of a Responses request's `input`. */
export type InputItem = Record<string, unknown> & { type: string; role?: string };

/**
 * Resumes the rollout `text` (filed at `path` under a fresh CODEX_HOME) with `prompt`, the model
 * answering "resumed"; the `input` of the request Codex sent, with the run's temporary
 * directories written as `$CODEX_HOME` and `$WORK`.
 */
export async function resumeInCodex(
  text: string,
  path: string,
  sessionId: string,
  prompt: string,
): Promise<InputItem[]> {
  const home = mkdtempSync(join(tmpdir(), 'codex-home-'));
  const work = mkdtempSync(join(tmpdir(), 'codex-work-'));
  const server = await startResponsesServer([[textOutput('msg_resumed', 'resumed')]]);
  try {
    const file = join(home, path);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, text);
    const provider = `{ name = "loopback", base_url = "${server.baseURL}", wire_api = "responses", env_key = "LOOPBACK_KEY" }`;
    const args = [
      'exec',
      '-c',
      'model_provider="loopback"',
      '-c',
      `model_providers.loopback=${provider}`,
      '-m',
      'gpt-test',
      '--skip-git-repo-check',
      'resume',
      sessionId,
      prompt,
    ];
    const env = { PATH: process.env.PATH ?? '', HOME: home, CODEX_HOME: home, LOOPBACK_KEY: 'k' };
    const { code, stderr } = await run(args, work, env);
    const [request] = server.requests;
    if (code !== 0 || request === undefined) {
      throw new Error(`codex exec resume exited ${code}: ${stderr.slice(-2000)}`);
    }
    const input = JSON.stringify(request.input).replaceAll(home, '$CODEX_HOME');
    return JSON.parse(input.replaceAll(work, '$WORK')) as InputItem[];
  } finally {
    await server.close();
    rmSync(home, { recursive: true, force: true });
    rmSync(work, { recursive: true, force: true });
  }
}

function run(
  args: readonly string[],
  cwd: string,
  env: NodeJS.ProcessEnv,
): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(CODEX, args, { cwd, env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
    });
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, stderr }));
  });
}

/** Text Codex puts in a user-role message as context it makes (not the user's words). */
const CONTEXT = ['<environment_context>', '<user_instructions>', '# AGENTS.md instructions'];

/**
 * The conversation in a request's input: what the rollout's history holds, without the context
 * Codex makes anew on every resume (developer messages, environment and AGENTS.md messages),
 * each item without the ids and statuses Codex adds.
 */
export function conversation(input: readonly InputItem[]): InputItem[] {
  return input
    .filter((item) => {
      if (item.type !== 'message') return true;
      if (item.role === 'developer') return false;
      const [first] = (item.content as { text?: string }[] | undefined) ?? [];
      return !(item.role === 'user' && CONTEXT.some((prefix) => first?.text?.startsWith(prefix)));
    })
    .map(({ id: _id, status: _status, ...rest }) => rest as InputItem);
}
