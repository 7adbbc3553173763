/**
 * `palimpsest run [PROMPT] [--session ID] [--model provider:name]`: one turn, or a conversation
 * when no prompt is given, recorded in the store. The answer streams as it arrives; Ctrl-C
 * cancels the running turn (the session stays valid), and Ctrl-C at the prompt exits.
 */
import { createInterface } from 'node:readline/promises';
import { type RetryInfo, runTurn, type TurnResult } from '../../agent/index.js';
import type { SessionEvent } from '../../core/index.js';
import { type LiveSession, openSession } from '../../store/index.js';
import { builtinTools } from '../builtin-tools.js';
import type { CliContext } from '../context.js';
import { CliError, EXIT } from '../failure.js';
import { announce, resolveModel } from '../model.js';
import { safe, safeLine } from '../terminal.js';

const SYSTEM =
  'You are a helpful assistant working in the user’s current directory. You can read files and list directories with your tools. Be concise.';

/** Options of `palimpsest run`. */
export interface RunOptions {
  readonly session?: string;
  readonly model?: string;
  readonly baseUrl?: string;
  readonly system?: string;
}

export async function runCommand(
  context: CliContext,
  prompt: string | undefined,
  options: RunOptions,
): Promise<number> {
  const { terminal } = context;
  const picked = await resolveModel(modelSpec(options), OFFLINE_ANSWER, {
    env:
      options.baseUrl === undefined
        ? process.env
        : { ...process.env, OPENAI_BASE_URL: options.baseUrl },
  });
  const model = announce(picked, (text) => terminal.note(text));
  const id = options.session ?? `run-${crypto.randomUUID().slice(0, 8)}`;
  return context.withStore(
    async (store) => {
      const session = await openSession(store, id);
      terminal.note(
        terminal.style(
          'dim',
          `session ${safeLine(id, 80)} in ${context.storeUrl} (${session.seq} events) · model ${safeLine(picked.description, 120)}`,
        ),
      );
      const { repairedEvents, tornBytesDropped } = session.openReport;
      if (repairedEvents > 0 || tornBytesDropped > 0) {
        terminal.note(
          terminal.style(
            'yellow',
            `repaired on open: a crashed writer had left the session unfinished; ${repairedEvents} closing event(s) appended${tornBytesDropped > 0 ? `, a torn final batch of ${tornBytesDropped} bytes dropped` : ''}`,
          ),
        );
      }
      const system = options.system ?? SYSTEM;
      const tools = builtinTools(process.cwd());
      const turn = async (input: string, controller: AbortController): Promise<TurnResult> => {
        const result = await runTurn({
          session,
          model,
          tools,
          system,
          input,
          signal: controller.signal,
          hooks: {
            onEvent: (event) => stream(context, event),
            onRetry: (retry) => announceRetry(context, retry),
          },
        });
        terminal.out.write('\n');
        if (result.reason.kind !== 'completed') {
          terminal.note(
            terminal.style(
              'yellow',
              `turn ${result.turn} ended: ${safeLine(JSON.stringify(result.reason), 200)}`,
            ),
          );
        }
        return result;
      };
      try {
        if (prompt !== undefined) {
          const controller = new AbortController();
          const onSigint = (): void => controller.abort('interrupted with Ctrl-C');
          process.once('SIGINT', onSigint);
          try {
            return exitCodeOf(await turn(prompt, controller));
          } finally {
            process.off('SIGINT', onSigint);
          }
        }
        return await conversation(context, session, turn);
      } finally {
        await session.close();
      }
    },
    context.storeUrl,
    { create: true },
  );
}

const OFFLINE_ANSWER = [
  {
    text: 'This is the offline scripted model: set DEEPSEEK_API_KEY, OPENAI_API_KEY or ANTHROPIC_API_KEY (or pass --model) for real answers.',
  },
];

/** `--base-url` names an OpenAI-compatible server, so it picks that provider unless `--model` does. */
function modelSpec(options: RunOptions): string | undefined {
  if (options.baseUrl === undefined) return options.model;
  if (options.model === undefined) return 'openai-compatible';
  if (!options.model.startsWith('openai-compatible')) {
    throw new CliError(
      `--base-url names an OpenAI-compatible server; expected --model openai-compatible:NAME with it, found --model ${options.model}`,
      EXIT.usage,
    );
  }
  return options.model;
}

/**
 * The interactive loop. Lines typed while a turn runs wait their turn (the line iterator buffers
 * them); Ctrl-C cancels the running turn, or ends the conversation at the prompt.
 */
async function conversation(
  context: CliContext,
  session: LiveSession,
  turn: (input: string, controller: AbortController) => Promise<TurnResult>,
): Promise<number> {
  const { terminal } = context;
  const interactive = process.stdin.isTTY === true;
  const lines = createInterface({
    input: process.stdin,
    output: terminal.err,
    terminal: interactive,
  });
  let running: AbortController | undefined;
  let interruptedAtPrompt = false;
  const interrupt = (): void => {
    if (running !== undefined) running.abort('interrupted with Ctrl-C');
    else {
      interruptedAtPrompt = true;
      lines.close();
    }
  };
  // In terminal mode readline turns Ctrl-C into its own event; piped, the process gets SIGINT.
  lines.on('SIGINT', interrupt);
  process.on('SIGINT', interrupt);
  terminal.note(
    terminal.style(
      'dim',
      'type a message; an empty line or Ctrl-D ends the conversation, Ctrl-C cancels a turn',
    ),
  );
  lines.setPrompt(terminal.style('cyan', 'you> '));
  if (interactive) lines.prompt();
  try {
    for await (const input of lines) {
      if (input.trim() === '') break;
      running = new AbortController();
      await turn(input, running);
      running = undefined;
      if (interactive) lines.prompt();
    }
  } finally {
    process.off('SIGINT', interrupt);
    lines.close();
  }
  terminal.note(terminal.style('dim', `${session.seq} events recorded in session ${session.id}`));
  // An empty line or end of input ends the conversation; Ctrl-C interrupts it (docs/cli.md).
  return interruptedAtPrompt ? EXIT.interrupted : EXIT.ok;
}

function stream(context: CliContext, event: SessionEvent): void {
  const { terminal } = context;
  if (event.type === 'assistant/chunk') {
    const chunk = (event.data as { chunk: { type: string; delta?: unknown } }).chunk;
    if (typeof chunk.delta !== 'string') return;
    if (chunk.type === 'text-delta') terminal.out.write(safe(chunk.delta));
    else if (chunk.type === 'reasoning-delta')
      terminal.err.write(terminal.style('dim', safe(chunk.delta)));
  } else if (event.type === 'tool/call') {
    const call = event.data as { name: string; arguments: string };
    terminal.note(
      terminal.style('yellow', `\n→ ${safeLine(`${call.name}(${call.arguments})`, 160)}`),
    );
  } else if (event.type === 'tool/result') {
    const error = (event.data as { error?: { message: string } }).error;
    if (error !== undefined)
      terminal.note(terminal.style('red', `← ${safeLine(error.message, 160)}`));
  }
}

/**
 * The streamed text of a failed attempt is already on the screen: say that it is void, what
 * failed, and how long the loop waits (and whether the provider asked for that wait).
 */
function announceRetry(context: CliContext, retry: RetryInfo): void {
  const { terminal } = context;
  const discarded = retry.failedChunkSeqs.length > 0 ? ' (the text above is discarded)' : '';
  const asked =
    retry.retryAfterMs === undefined
      ? ''
      : `, as the provider asked (retry-after ${seconds(retry.retryAfterMs)})`;
  terminal.note(
    terminal.style(
      'yellow',
      `\nattempt ${retry.attempt} failed${discarded}: ${safeLine(retry.error.message, 160)}; retrying in ${seconds(retry.delayMs)}${asked}`,
    ),
  );
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;
}

function exitCodeOf(result: TurnResult): number {
  switch (result.reason.kind) {
    case 'aborted':
      return EXIT.interrupted;
    case 'error':
      return EXIT.model;
    default:
      return EXIT.ok;
  }
}
