/**
 * `palimpsest demo [--store URL]`: a realistic agent session recorded end to end — streaming,
 * tool calls, a tool-result prune, a compaction, a writer killed with SIGKILL in the middle of
 * a tool, and the repair on reopen — narrated step by step. Offline with the scripted model;
 * against the real model when a provider key is set.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { LanguageModelV3 } from '@ai-sdk/provider';
import { defineTool, runTurn, type TurnResult } from '../../agent/index.js';
import { compact } from '../../compaction/compact.js';
import { pruneToolResults } from '../../compaction/prune.js';
import { isElidedChunkData } from '../../core/elided.js';
import { checkInvariants, type SessionEvent } from '../../core/index.js';
import { type LiveSession, openSession } from '../../store/index.js';
import { builtinTools } from '../builtin-tools.js';
import type { CliContext } from '../context.js';
import { CliError, EXIT } from '../failure.js';
import { announce, resolveModel } from '../model.js';
import { safe } from '../terminal.js';
import { DEMO_SCRIPT, PROMPTS, writeWorkspace } from './demo-script.js';

const SYSTEM = 'You are a careful coding agent. Use the tools to look before you answer. Be brief.';

/** The tool the crashed turn runs: it never returns, like a test suite that hangs. */
function runTestsTool(onStart: () => void) {
  return defineTool({
    name: 'run_tests',
    description: 'Runs the project’s test suite.',
    parameters: { type: 'object', properties: { filter: { type: 'string' } } },
    execute: () => {
      onStart();
      return new Promise<string>(() => {});
    },
  });
}

export async function demoCommand(
  context: CliContext,
  options: { model?: string },
): Promise<number> {
  const { terminal } = context;
  const picked = await resolveModel(options.model, DEMO_SCRIPT);
  const model = announce(picked, (text) => terminal.note(text));
  const id = `demo-${crypto.randomUUID().slice(0, 8)}`;
  const workspace = mkdtempSync(join(tmpdir(), 'palimpsest-demo-'));
  writeWorkspace(workspace);
  const tools = [...builtinTools(workspace), runTestsTool(() => {})];
  const step = numbering(terminal.line.bind(terminal));
  let summarySeq = 0;
  terminal.line(terminal.style('bold', `palimpsest demo — ${picked.description}`));
  terminal.line(`store ${context.printableStoreUrl}, session ${id}, project files in ${workspace}`);
  try {
    const store = await context.open(context.storeUrl, { create: true });
    let session: LiveSession;
    try {
      session = await openSession(store, id, { header: { metadata: { demo: true } } });
      for (const [index, prompt] of PROMPTS.slice(0, 3).entries()) {
        step(`Turn ${index + 1}: "${prompt}"`);
        const result = await turn(context, session, model, tools, prompt);
        terminal.line(
          `   recorded events #${result.startSeq}–#${result.endSeq} (${chunksBetween(session, result)} stream chunks, ${result.steps} model calls)`,
        );
      }

      const pruned = pruneToolResults(session, { keepRecentTurns: 1, minChars: 1000 });
      step(
        pruned.prunedSeqs.length === 0
          ? 'Prune: no old tool result was large enough'
          : `Prune: ${pruned.prunedSeqs.length} old tool result(s) cut to an excerpt, ${pruned.charsBefore.toLocaleString('en-US')} → ${pruned.charsAfter.toLocaleString('en-US')} characters; the original stays in the log (#${pruned.prunedSeqs.join(', #')})`,
      );

      const compaction = await compact(session, { model, keepRecentTokens: 200 });
      summarySeq = compaction.summarySeq ?? compaction.startSeq ?? 0;
      step(
        compaction.replaced
          ? `Compaction: ${compaction.shadowedSeqs.length} surface entries replaced by summary #${compaction.summarySeq}, ~${compaction.tokensBefore} → ~${compaction.tokensAfter} tokens; the log keeps all of them`
          : `Compaction: nothing replaced (${compaction.skipped}${compaction.error === undefined ? '' : `: ${compaction.error.message}`})`,
      );
      await session.close();
    } finally {
      await store.close();
    }

    step(
      `Crash: a child process starts turn 4 ("${PROMPTS[3]}") and is killed with SIGKILL while its tool runs`,
    );
    const crash = await crashChild(context, id, workspace, options.model);
    terminal.line(`   ${crash}`);

    const reopenedStore = await context.open(context.storeUrl, { create: true });
    try {
      const reopened = await openSession(reopenedStore, id);
      const repaired = reopened.events.slice(reopened.seq - reopened.openReport.repairedEvents);
      step(
        reopened.openReport.repairedEvents === 0
          ? 'Reopen: nothing to repair'
          : `Reopen: openSession repaired the interrupted turn durably with ${repaired.length} events: ${repaired.map(describeRepair).join(', ')}`,
      );
      step(`Turn 5: "${PROMPTS[4]}"`);
      await turn(context, reopened, model, tools, PROMPTS[4]);
      const violations = checkInvariants(reopened.events, { requireClosed: true });
      step(
        violations.length === 0
          ? `Verified: all ${reopened.seq} events pass checkInvariants; the model now sees ${reopened.surface.size} surface entries`
          : `Verification found ${violations.length} problem(s): ${violations[0]?.message}`,
      );
      await reopened.close();
      if (violations.length > 0) return EXIT.invalid;
    } finally {
      await reopenedStore.close();
    }
  } finally {
    rmSync(workspace, { recursive: true, force: true });
  }
  const store =
    context.storeUrl === 'jsonl:./.palimpsest/sessions'
      ? ''
      : ` --store ${context.printableStoreUrl}`;
  terminal.line('');
  terminal.line('Look at it:');
  const hints = [
    [`show ${id}`, 'the transcript, with what was pruned and compacted'],
    [`surface ${id}`, 'what the model sees now'],
    [`surface ${id} --at 20`, 'what it saw right after event #20'],
    [`log ${id} --type tool`, 'the raw tool events, repair included'],
    [`why ${id} ${summarySeq}`, 'where the summary came from'],
    [`verify ${id}`, 'the log linter'],
  ].map(([command, what]) => [`  ${invocation()} ${command}${store}`, what ?? ''] as const);
  const width = Math.max(...hints.map(([command]) => command.length)) + 3;
  for (const [command, what] of hints)
    terminal.line(command.padEnd(width) + terminal.style('dim', what));
  return EXIT.ok;
}

async function turn(
  context: CliContext,
  session: LiveSession,
  model: LanguageModelV3,
  tools: ReturnType<typeof builtinTools>,
  prompt: string,
): Promise<TurnResult> {
  const { terminal } = context;
  const live = terminal.interactive && terminal.out.isTTY === true;
  if (live) terminal.out.write('   ');
  const result = await runTurn({
    session,
    model,
    tools,
    system: SYSTEM,
    input: prompt,
    hooks: {
      onEvent: (event) => {
        if (event.type === 'tool/call') {
          const call = event.data;
          terminal.line(`${live ? '\n' : ''}   → ${safe(call.name)}(${safe(call.arguments)})`);
          if (live) terminal.out.write('   ');
        } else if (live && event.type === 'assistant/chunk') {
          if (isElidedChunkData(event.data)) return;
          const { chunk } = event.data;
          if (chunk.type === 'text-delta' && typeof chunk.delta === 'string')
            terminal.out.write(safe(chunk.delta));
        }
      },
    },
  });
  if (live) terminal.out.write('\n');
  else terminal.line(`   assistant: ${safe(result.text)}`);
  if (result.reason.kind !== 'completed') {
    throw new CliError(
      `turn ${result.turn} ended with ${JSON.stringify(result.reason)}`,
      result.reason.kind === 'error' ? EXIT.model : EXIT.failure,
    );
  }
  return result;
}

function chunksBetween(session: LiveSession, result: TurnResult): number {
  let chunks = 0;
  for (let seq = result.startSeq; seq <= result.endSeq; seq++) {
    if (session.event(seq)?.type === 'assistant/chunk') chunks++;
  }
  return chunks;
}

function describeRepair(event: SessionEvent): string {
  const code = event.type === 'tool/result' ? event.data.error?.code : undefined;
  if (code !== undefined) return `a tool/result ${code}`;
  if (event.type === 'turn/end') return 'turn/end interrupted';
  return event.type;
}

/**
 * Runs turn 4 in a child process (`palimpsest __demo-writer`) and kills it with SIGKILL once its
 * tool has started — after the loop made the tool call durable, before any result exists.
 */
function crashChild(
  context: CliContext,
  id: string,
  workspace: string,
  model: string | undefined,
): Promise<string> {
  const main = fileURLToPath(
    new URL(`../main${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`, import.meta.url),
  );
  const args = [
    ...process.execArgv,
    main,
    '__demo-writer',
    id,
    workspace,
    '--store',
    context.storeUrl,
    ...context.keyArguments(),
    ...(model === undefined ? [] : ['--model', model]),
  ];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    let stderr = '';
    child.stderr.on('data', (data: Buffer) => {
      stderr += data.toString();
    });
    child.stdout.on('data', (data: Buffer) => {
      output += data.toString();
      if (output.includes('TOOL_STARTED')) child.kill('SIGKILL');
    });
    child.on('exit', (code, signal) => {
      if (signal === 'SIGKILL')
        resolve(
          `killed (pid ${child.pid}) while run_tests was running; its tool/call was already durable`,
        );
      else if (output.includes('NO_TOOL_CALL'))
        resolve(
          'the model answered without calling run_tests, so the turn completed before the kill',
        );
      else
        reject(
          new CliError(
            `the demo writer exited with ${code}: ${stderr.trim().split('\n').at(-1) ?? ''}`,
            EXIT.failure,
          ),
        );
    });
  });
}

/** The hidden child of the demo: runs turn 4 and waits to be killed inside its tool. */
export async function demoWriterCommand(
  context: CliContext,
  id: string,
  workspace: string,
  options: { model?: string },
): Promise<number> {
  const model = (await resolveModel(options.model, DEMO_SCRIPT)).model;
  const store = await context.open(context.storeUrl, { create: true });
  const session = await openSession(store, id);
  const tools = [
    ...builtinTools(workspace),
    runTestsTool(() => process.stdout.write('TOOL_STARTED\n')),
  ];
  await runTurn({ session, model, tools, system: SYSTEM, input: PROMPTS[3] });
  process.stdout.write('NO_TOOL_CALL\n');
  await session.close();
  await store.close();
  return EXIT.ok;
}

/**
 * How the user can run the CLI again: `palimpsest` when it was started through its bin link,
 * otherwise the same `node path/to/main.js` (as `npm run demo` in a clone does).
 */
function invocation(): string {
  const script = process.argv[1] ?? '';
  if (basename(script) === 'palimpsest') return 'palimpsest';
  const path = relative(process.cwd(), script);
  return `node ${path.startsWith('..') ? script : path}`;
}

/** Prints numbered steps. */
function numbering(line: (text: string) => void): (text: string) => void {
  let step = 0;
  return (text) => {
    step += 1;
    line(`${String(step).padStart(2)}. ${text}`);
  };
}
