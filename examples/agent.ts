/**
 * The agent loop end to end: a real provider when a key is set (DEEPSEEK_API_KEY,
 * OPENAI_API_KEY [+ OPENAI_BASE_URL], ANTHROPIC_API_KEY), otherwise the offline scripted model.
 * Two read-only tools, a turn with tool calls, a cancelled turn, then a resume in a new process
 * view of the same stored session, and the request of one step rebuilt from the log.
 *
 * Run with `npm run example:agent`.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { checkInvariants, type SessionEvent } from 'palimpsest';
import { defineTool, modelFromEnv, rebuildRequest, runTurn } from 'palimpsest/agent';
import { openSession, openStore } from 'palimpsest/store';
import { scriptedModel } from 'palimpsest/testing';
import { z } from 'zod';

const root = resolve(import.meta.dirname, '..');

/** Resolves a path inside the project, refusing anything outside it. */
function inside(path: string): string {
  const full = resolve(root, path);
  if (relative(root, full).startsWith('..')) throw new Error(`${path} is outside the project`);
  return full;
}

const readFile = defineTool({
  name: 'read_file',
  description: 'Reads a UTF-8 text file of the project (at most 4 KB).',
  parameters: z.object({ path: z.string().describe('a path relative to the project root') }),
  execute: ({ path }) => readFileSync(inside(path), 'utf8').slice(0, 4096),
});

const listDirectory = defineTool({
  name: 'list_directory',
  description: 'Lists a directory of the project.',
  parameters: z.object({ path: z.string().default('.') }),
  execute: ({ path }) =>
    readdirSync(inside(path))
      .map((name) => (statSync(join(inside(path), name)).isDirectory() ? `${name}/` : name))
      .join('\n'),
});

// What the scripted model answers when no provider key is set: a realistic first turn.
const offline = [
  { toolCalls: [{ name: 'list_directory', args: { path: 'docs' } }] },
  {
    reasoning: 'The durability guide should say what an acknowledged append promises.',
    toolCalls: [{ name: 'read_file', args: { path: 'docs/durability.md' } }],
  },
  { text: 'docs/durability.md explains what survives a crash for each store and mode.' },
  { text: 'This reply is cancelled while it streams, word by word.', delayMs: 40 },
  { text: 'Resumed: the earlier turns are all still on the surface.' },
];

// Offline is this example's choice: the library never swaps in a test double by itself.
const { model, description, notice } = await modelFromEnv({
  fallback: scriptedModel(offline, { loop: true }),
});
if (notice !== undefined) console.log(`note: ${notice}`);
console.log(`model: ${description}\n`);

const directory = mkdtempSync(join(tmpdir(), 'palimpsest-agent-example-'));
const store = await openStore(`jsonl:${directory}`);
const options = {
  model,
  tools: [readFile, listDirectory],
  system: 'You are a concise assistant for the palimpsest repository. Use the tools to look.',
};

try {
  // 1. A turn with tool calls. Every stream part, call and result is recorded.
  const session = await openSession(store, 'example');
  const first = await runTurn({
    ...options,
    session,
    input: 'Which document explains crash safety? Look in docs/.',
  });
  console.log(`turn ${first.turn}: ${first.reason.kind} after ${first.steps} steps`);
  console.log(`  answer: ${first.text}`);

  // 2. A turn cancelled mid-stream: the streamed text is kept, marked interrupted.
  const controller = new AbortController();
  setTimeout(() => controller.abort('the user pressed Ctrl-C'), 400);
  const second = await runTurn({
    ...options,
    session,
    input: 'Summarise the format document.',
    signal: controller.signal,
  });
  console.log(`turn ${second.turn}: ${second.reason.kind} (${JSON.stringify(second.reason)})`);
  console.log(`  kept, marked interrupted: "${second.text}"`);
  await session.close();

  // 3. Resume: reopen the stored session (as a restarted process would) and continue.
  const resumed = await openSession(store, 'example');
  const third = await runTurn({ ...options, session: resumed, input: 'Are you still there?' });
  console.log(`turn ${third.turn} after reopening: ${third.reason.kind}`);
  console.log(`  answer: ${third.text}\n`);

  console.log('the log, chunks collapsed:');
  console.log(`  ${outline(resumed.events).join(' ')}\n`);

  // 4. Any request can be rebuilt from the log alone.
  const request = rebuildRequest(resumed, 1, 2);
  console.log(
    `turn 1 step 2 sent ${request.messages.length} messages under header ${JSON.stringify({
      provider: request.header.provider,
      model: request.header.model,
      tools: request.header.tools?.map((tool) => tool.name),
    })}`,
  );
  const violations = checkInvariants(resumed.events, { requireClosed: true });
  console.log(`invariants: ${violations.length === 0 ? 'all hold' : JSON.stringify(violations)}`);
  await resumed.close();
  if (violations.length > 0) process.exitCode = 1;
} finally {
  await store.close();
  rmSync(directory, { recursive: true, force: true });
}

function outline(events: readonly SessionEvent[]): string[] {
  const out: string[] = [];
  let chunks = 0;
  for (const event of events) {
    if (event.type === 'assistant/chunk') {
      chunks += 1;
      continue;
    }
    if (chunks > 0) out.push(`chunk×${chunks}`);
    chunks = 0;
    out.push(event.type);
  }
  return out;
}
