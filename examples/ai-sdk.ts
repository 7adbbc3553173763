/**
 * palimpsest under the AI SDK's own loop, offline (the scripted model stands in for a provider;
 * any AI SDK model works the same). `streamText` runs a tool loop through the recording
 * middleware into a JSONL store, with automatic compaction before each model call; the request
 * of every step is rebuilt from the log; a second `streamText` continues the session from
 * `toModelMessages`; and a reopened session holds it all.
 *
 * Run with `npm run example:ai-sdk`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stepCountIs, streamText, tool, wrapLanguageModel } from 'ai';
import { checkInvariants, type SessionEvent } from 'palimpsest';
import { rebuildRequest } from 'palimpsest/agent';
import { sessionMiddleware, toModelMessages } from 'palimpsest/ai-sdk';
import { autoCompaction } from 'palimpsest/compaction';
import { openSession, openStore } from 'palimpsest/store';
import { scriptedModel } from 'palimpsest/testing';
import { z } from 'zod';

// Both files start with a long license header: two reads fill the (small) context window.
const header = '// Licensed under the MIT license; see LICENSE for the full text.\n'.repeat(30);
const files: Record<string, string> = {
  'src/config.ts': `${header}export const retries = 3;\n`,
  'src/build.ts': `${header}import { retries } from './config';\nexport const build = () => retries;\n`,
};

// What the scripted model answers: two tool steps, an answer, then the follow-up's answer.
const model = scriptedModel([
  { toolCalls: [{ name: 'read_file', args: { path: 'src/config.ts' } }] },
  {
    reasoning: 'The config alone does not say who reads it.',
    toolCalls: [{ name: 'read_file', args: { path: 'src/build.ts' } }],
  },
  { text: 'The build reads `retries` (3) from src/config.ts.' },
  { text: 'Set `retries` in src/config.ts; the build picks it up.' },
]);
// Summaries are written by a model of their own: pass the unwrapped one, never the recorded.
const writer = scriptedModel([{ text: 'Summary: src/config.ts sets retries = 3.' }]);

const dir = mkdtempSync(join(tmpdir(), 'palimpsest-ai-sdk-'));
try {
  const store = await openStore(`jsonl:${dir}`);
  const session = await openSession(store, 'ai-sdk-example');
  const middleware = sessionMiddleware(session, {
    // A small window, so that the second file read triggers a compaction inside the SDK's loop
    // (without pruning first, to show the summary).
    beforeStep: autoCompaction({
      model: writer,
      contextWindow: 1_300,
      keepRecentTokens: 300,
      pruneFirst: false,
      onAction: (action) =>
        console.log(
          action.kind === 'compact'
            ? `[compaction at ${action.before.tokens} tokens: ${action.result.replaced ? 'replaced' : action.result.skipped}]`
            : `[pruned ${action.result.prunedSeqs.length} tool results]`,
        ),
    }),
  });
  const recorded = wrapLanguageModel({ model, middleware });
  const tools = {
    read_file: tool({
      description: 'Reads a file of the project.',
      inputSchema: z.object({ path: z.string() }),
      execute: async ({ path }) => files[path] ?? `no such file: ${path}`,
    }),
  };
  const system = 'You answer questions about the project.';

  const first = streamText({
    model: recorded,
    system,
    prompt: 'Where does the build get its retry count?',
    tools,
    stopWhen: stepCountIs(5),
  });
  for await (const text of first.textStream) process.stdout.write(text);
  console.log();
  await middleware.finish((await first.response).messages);

  console.log('\nthe log of turn 1:');
  console.log(`  ${outline(session.events).join(' ')}`);

  // Every step's request, rebuilt from the log alone, is what the model was sent.
  for (const [index, call] of model.calls.entries()) {
    const rebuilt = rebuildRequest(session, 1, index + 1).callOptions.prompt;
    console.log(
      `  step ${index + 1}: rebuilt request equals the sent one: ${same(rebuilt, call.prompt)}`,
    );
  }

  // The next call continues from the surface: compacted history and all.
  const second = streamText({
    model: recorded,
    system,
    messages: [...toModelMessages(session), { role: 'user', content: 'How do I change it?' }],
  });
  console.log(`\n${await second.text}`);
  await middleware.finish();
  await session.close();

  const reopened = await openSession(store, 'ai-sdk-example');
  const roles = reopened.deriveMessages().map((message) => message.role);
  console.log(`\nreopened: ${reopened.events.length} events, the model sees ${roles.join(', ')}`);
  console.log(`log problems: ${checkInvariants(reopened.events, { requireClosed: true }).length}`);
  await reopened.close();
  await store.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}

/** Event types, with runs of chunks collapsed. */
function outline(events: readonly SessionEvent[]): string[] {
  const out: string[] = [];
  for (const event of events) {
    const last = out.at(-1);
    if (event.type === 'assistant/chunk' && last?.startsWith('chunk×')) {
      out[out.length - 1] = `chunk×${Number(last.slice(6)) + 1}`;
    } else out.push(event.type === 'assistant/chunk' ? 'chunk×1' : event.type);
  }
  return out;
}

/** Equal as JSON, leaving out palimpsest's own `providerOptions` entry (no provider reads it). */
function same(a: unknown, b: unknown): boolean {
  const json = (value: unknown) =>
    JSON.stringify(value, (key, inner) => {
      if (key !== 'providerOptions' || inner === undefined) return inner;
      const { palimpsest: _stash, ...rest } = inner as Record<string, unknown>;
      return Object.keys(rest).length === 0 ? undefined : rest;
    });
  return json(a) === json(b);
}
