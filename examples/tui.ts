/**
 * A small terminal UI over the typed turn stream: text streams as it arrives, reasoning dimmed,
 * each tool call shown while the model writes it, then its result; a failed attempt that is
 * retried is struck through; a tool that needs approval asks you (or, without a terminal, a
 * fixed policy decides), and the decision goes into the session log.
 *
 * Offline by default (the scripted model); a provider key (DEEPSEEK_API_KEY, OPENAI_API_KEY,
 * ANTHROPIC_API_KEY) makes it talk to a real model. Run with `npm run example:tui`.
 */
import { createInterface } from 'node:readline/promises';
import { Session } from 'palimpsest';
import {
  Agent,
  defineTool,
  modelFromEnv,
  type ToolCallDecision,
  type ToolCallRequest,
  type TurnStreamEvent,
} from 'palimpsest/agent';
import { scriptedModel } from 'palimpsest/testing';
import { z } from 'zod';

const dim = (text: string): string => `\x1b[2m${text}\x1b[22m`;
const bold = (text: string): string => `\x1b[1m${text}\x1b[22m`;
const strike = (text: string): string => `\x1b[9m${text}\x1b[29m`;
const out = (text: string): void => {
  process.stdout.write(text);
};

// A pretend file system, so that the example deletes nothing real.
const files = new Map([
  ['notes.txt', 'buy milk'],
  ['build/app.js', 'console.log(1)'],
  ['build/app.js.map', '{}'],
]);

const listFiles = defineTool({
  name: 'list_files',
  description: 'Lists the files of the workspace.',
  parameters: z.object({}),
  execute: () => [...files.keys()],
});

const deleteFiles = defineTool({
  name: 'delete_files',
  description: 'Deletes the files whose path starts with a prefix.',
  parameters: z.object({ prefix: z.string() }),
  needsApproval: true, // every call goes to beforeToolCall below
  execute: ({ prefix }) => {
    const gone = [...files.keys()].filter((path) => path.startsWith(prefix));
    for (const path of gone) files.delete(path);
    return { deleted: gone };
  },
});

const offline = [
  {
    reasoning: 'First see what is there.',
    toolCalls: [{ name: 'list_files', args: {} }],
  },
  {
    text: 'I will clean the build out',
    error: { message: 'overloaded', type: 'overloaded_error' },
  },
  {
    text: 'The build folder holds generated files; I will remove them.',
    toolCalls: [
      { name: 'delete_files', args: { prefix: 'build/' } },
      { name: 'delete_files', args: { prefix: '' } },
    ],
  },
  { text: 'Removed build/. I left the rest alone, since deleting everything was refused.' },
];
const { model, notice } = await modelFromEnv({
  fallback: scriptedModel(offline, { loop: true, chunkSize: 6 }),
});
if (notice !== undefined) console.log(dim(`note: ${notice}`));

/** Asks at the terminal; without one, allows only deletions inside build/. */
async function approve(call: ToolCallRequest): Promise<ToolCallDecision | undefined> {
  if (!call.needsApproval) return undefined;
  const question = `${call.name} ${call.arguments}`;
  if (!process.stdin.isTTY) {
    const prefix = (call.input as { prefix?: unknown } | undefined)?.prefix;
    const allowed = typeof prefix === 'string' && prefix.startsWith('build/');
    out(dim(`\n  approve ${question}? ${allowed ? 'yes' : 'no'} (policy: build/ only)\n`));
    return allowed ? { action: 'allow' } : { action: 'deny', reason: 'only build/ may be deleted' };
  }
  // readline redraws the line it prompts on: start a fresh one so the streamed call stays.
  out('\n');
  const prompt = createInterface({ input: process.stdin, output: process.stdout });
  // readline takes Ctrl-C while it reads; pass it on, so that it cancels the turn as usual.
  prompt.once('SIGINT', () => process.kill(process.pid, 'SIGINT'));
  try {
    const answer = await prompt.question(`  approve ${bold(question)}? [y/N] `, {
      signal: call.signal,
    });
    return /^y/i.test(answer)
      ? { action: 'allow' }
      : { action: 'deny', reason: 'the user said no' };
  } finally {
    prompt.close();
  }
}

/** Draws one event; everything it shows comes from the log through the stream. */
function draw(event: TurnStreamEvent, failed: Set<number>): void {
  switch (event.type) {
    case 'step-start':
      out(dim(`\n── step ${event.step} ──\n`));
      break;
    case 'reasoning-delta':
      out(dim(event.delta));
      break;
    case 'text-delta':
      out(event.delta);
      break;
    case 'tool-call-start':
      out(`\n  ${bold(event.name)}(`);
      break;
    case 'tool-call-delta':
      out(dim(event.delta));
      break;
    case 'tool-call-end':
      out(')');
      break;
    case 'retry':
      for (const seq of event.failedChunkSeqs) failed.add(seq);
      out(
        `\n  ${strike('(that attempt failed)')} ${dim(`${event.error.message}; retrying in ${event.delayMs} ms`)}\n`,
      );
      break;
    case 'tool-result': {
      const text = event.content
        .map((block) => (block.type === 'text' ? block.text : '[image]'))
        .join('');
      const line = `  → ${event.isError ? `${event.code}: ` : ''}${text.slice(0, 120)}`;
      out(`\n${event.isError ? line : dim(line)}`);
      break;
    }
    case 'turn-end':
      out(`\n\n${bold('turn ended')}: ${event.reason.kind}\n`);
      break;
    default:
      break;
  }
}

const session = Session.create({ id: 'tui-example' });
const agent = new Agent({
  session,
  model,
  tools: [listFiles, deleteFiles],
  system: 'You tidy a workspace. Ask before deleting.',
  retryDelayMs: 200,
  hooks: { beforeToolCall: approve },
});

// Ctrl-C cancels the turn; the session stays valid.
const stream = agent.stream('Please clean up the build output.');
process.once('SIGINT', () => stream.abort('interrupted by the user'));
const failed = new Set<number>();
for await (const event of stream) draw(event, failed);

const result = await stream.result;
console.log(
  dim(
    `${result.steps} steps, ${result.toolCalls.length} tool calls (${result.toolCalls.filter((call) => !call.started).length} not run), ` +
      `${result.usage.inputTokens ?? 0} input / ${result.usage.outputTokens ?? 0} output tokens; ` +
      `${failed.size} chunks of a failed attempt; files left: ${[...files.keys()].join(', ')}`,
  ),
);
if (result.reason.kind !== 'completed') process.exitCode = 1;
