/**
 * `palimpsest run [PROMPT] [--session ID] [--model provider:name]`: one turn, or a conversation
 * when no prompt is given, recorded in the store. The answer streams as it arrives; Ctrl-C
 * cancels the running turn (the session stays valid), and Ctrl-C at the prompt exits.
 */
import { createInterface } from 'node:readline/promises';
import { Agent, AgentError, type RetryInfo, type TurnResult } from '../../agent/index.js';
import { isElidedChunkData } from '../../core/elided.js';
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
  readonly resume?: boolean;
}

/** One turn of the command: the user's input, or `undefined` to resume what is unfinished. */
type TurnRunner = (input: string | undefined, controller: AbortController) => Promise<TurnResult>;

export async function runCommand(
  context: CliContext,
  prompt: string | undefined,
  options: RunOptions,
): Promise<number> {
  const { terminal } = context;
  if (options.resume === true && options.session === undefined) {
    throw new CliError(
      'expected --session ID with --resume (a new session has nothing to resume)',
      EXIT.usage,
    );
  }
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
          `session ${safeLine(id, 80)} in ${safeLine(context.printableStoreUrl, 200)} (${session.seq} events) · model ${safeLine(picked.description, 120)}`,
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
      const agent = new Agent({
        session,
        model,
        tools: builtinTools(process.cwd()),
        system: options.system ?? SYSTEM,
        hooks: {
          onEvent: (event) => stream(context, event),
          onRetry: (retry) => announceRetry(context, retry),
        },
      });
      const turn: TurnRunner = async (input, controller) => {
        const signal = { signal: controller.signal };
        const result = await (input === undefined
          ? resume(agent, signal)
          : agent.run(input, signal));
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
        let code: number = EXIT.ok;
        if (options.resume === true) code = exitCodeOf(await single(turn, undefined));
        if (prompt !== undefined) {
          return code === EXIT.ok ? exitCodeOf(await single(turn, prompt)) : code;
        }
        if (code !== EXIT.ok) return code;
        return await conversation(context, session, agent, turn);
      } finally {
        announceQueue(context, agent);
        await session.close();
      }
    },
    context.storeUrl,
    { create: true },
  );
}

/** One turn outside a conversation: Ctrl-C cancels it. */
async function single(turn: TurnRunner, input: string | undefined): Promise<TurnResult> {
  const controller = new AbortController();
  const onSigint = (): void => controller.abort('interrupted with Ctrl-C');
  process.once('SIGINT', onSigint);
  try {
    return await turn(input, controller);
  } finally {
    process.off('SIGINT', onSigint);
  }
}

/** `Agent.resume()`, with nothing to resume as a usage error that says what was found. */
async function resume(agent: Agent, options: { signal: AbortSignal }): Promise<TurnResult> {
  try {
    return await agent.resume(options);
  } catch (error) {
    if (AgentError.isInstance(error) && error.code === 'NOTHING_TO_RESUME') {
      throw new CliError(`--resume: ${error.message}`, EXIT.usage);
    }
    throw error;
  }
}

/** Steering messages still queued when the command ends enter the session's next turn. */
function announceQueue(context: CliContext, agent: Agent): void {
  const { steers } = agent.pending;
  if (steers.length === 0) return;
  context.terminal.note(
    context.terminal.style(
      'yellow',
      `${steers.length} steering message(s) still queued in session ${safeLine(agent.session.header.id, 80)}: they enter its next turn (palimpsest run --session ${safeLine(agent.session.header.id, 80)} --resume)`,
    ),
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
 * The conversation on stdin. A line typed while no turn runs starts one; a line typed while a
 * turn runs steers it (`Agent.steer`: durable at once, seen by the model at the turn's next step
 * boundary). An empty line or the end of input ends the conversation, once the running turn is
 * over; Ctrl-C cancels the running turn, or ends the conversation at the prompt.
 */
async function conversation(
  context: CliContext,
  session: LiveSession,
  agent: Agent,
  turn: TurnRunner,
): Promise<number> {
  const { terminal } = context;
  const interactive = process.stdin.isTTY === true;
  const lines = createInterface({
    input: process.stdin,
    output: terminal.err,
    terminal: interactive,
  });
  lines.setPrompt(terminal.style('cyan', 'you> '));
  let running: AbortController | undefined;
  let ending = false;
  let finished = false;
  let interruptedAtPrompt = false;
  let interrupt = (): void => {};
  const code = await new Promise<number>((resolve, reject) => {
    const finish = (): void => {
      if (finished) return;
      finished = true;
      lines.close();
      // An empty line or end of input ends the conversation; Ctrl-C interrupts it (docs/cli.md).
      resolve(interruptedAtPrompt ? EXIT.interrupted : EXIT.ok);
    };
    const start = (input: string): void => {
      const controller = new AbortController();
      running = controller;
      turn(input, controller).then(() => {
        running = undefined;
        if (ending) finish();
        else if (interactive) lines.prompt();
      }, reject);
    };
    const steer = (input: string): void => {
      agent
        .steer(input)
        .then(
          (queued) =>
            terminal.note(
              terminal.style(
                'dim',
                `↳ queued (#${queued.seq}): the agent reads it at its next step`,
              ),
            ),
          reject,
        );
    };
    interrupt = (): void => {
      if (running !== undefined) running.abort('interrupted with Ctrl-C');
      else {
        interruptedAtPrompt = true;
        ending = true;
        finish();
      }
    };
    // In terminal mode readline turns Ctrl-C into its own event; piped, the process gets SIGINT.
    lines.on('SIGINT', interrupt);
    process.on('SIGINT', interrupt);
    // Only now that Ctrl-C has a handler: before it, a SIGINT would kill the process outright.
    terminal.note(
      terminal.style(
        'dim',
        'type a message; typing while the agent works steers it; an empty line or Ctrl-D ends the conversation, Ctrl-C cancels a turn',
      ),
    );
    lines.on('line', (input) => {
      if (ending) return;
      if (input.trim() === '') {
        ending = true;
        if (running === undefined) finish();
      } else if (running === undefined) start(input);
      else steer(input);
    });
    lines.on('close', () => {
      ending = true;
      if (running === undefined) finish();
    });
    if (interactive) lines.prompt();
  }).finally(() => process.off('SIGINT', interrupt));
  terminal.note(terminal.style('dim', `${session.seq} events recorded in session ${session.id}`));
  return code;
}

function stream(context: CliContext, event: SessionEvent): void {
  const { terminal } = context;
  if (event.type === 'assistant/chunk') {
    // A live session's chunks are never elided stubs; the test keeps the type honest.
    if (isElidedChunkData(event.data)) return;
    const chunk = event.data.chunk;
    if (typeof chunk.delta !== 'string') return;
    if (chunk.type === 'text-delta') terminal.out.write(safe(chunk.delta));
    else if (chunk.type === 'reasoning-delta')
      terminal.err.write(terminal.style('dim', safe(chunk.delta)));
  } else if (event.type === 'user/message') {
    if (event.data.source.kind === 'steer') {
      const text = event.data.content
        .map((block) => (block.type === 'text' ? block.text : ''))
        .join(' ');
      terminal.note(terminal.style('cyan', `\n↳ steering: ${safeLine(text, 160)}`));
    }
  } else if (event.type === 'tool/call') {
    const call = event.data;
    terminal.note(
      terminal.style('yellow', `\n→ ${safeLine(`${call.name}(${call.arguments})`, 160)}`),
    );
  } else if (event.type === 'tool/result') {
    const error = event.data.error;
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
    case 'context-overflow':
      return EXIT.model;
    default:
      return EXIT.ok;
  }
}
