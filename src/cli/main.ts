#!/usr/bin/env node
/**
 * The `palimpsest` command line: a thin layer over the library. Each command is a function in
 * commands/; this file declares them, their options and their help, and turns failures into one
 * line and an exit code.
 */
import { createRequire } from 'node:module';
import { Command, CommanderError, Option } from 'commander';
import { cacheCommand } from './commands/cache.js';
import { convertCommand } from './commands/convert.js';
import { costCommand } from './commands/cost.js';
import { demoCommand, demoWriterCommand } from './commands/demo.js';
import { exportCommand } from './commands/export.js';
import { exportEvalsCommand } from './commands/export-evals.js';
import { type ImportCommandOptions, importCommand } from './commands/import.js';
import {
  listCommand,
  logCommand,
  showCommand,
  surfaceCommand,
  whyCommand,
} from './commands/inspect.js';
import {
  compactCommand,
  forkCommand,
  pruneCommand,
  repairCommand,
  salvageCommand,
  unlockCommand,
} from './commands/modify.js';
import { type OtelCommandOptions, otelCommand } from './commands/otel.js';
import { replayCommand } from './commands/replay.js';
import { requestCommand } from './commands/request.js';
import { archiveCommand, type GcOptions, gcCommand, restoreCommand } from './commands/retention.js';
import { type RunOptions, runCommand } from './commands/run.js';
import { type VerifyOptions, verifyCommand } from './commands/verify.js';
import { viewCommand } from './commands/view.js';
import { CliContext, type GlobalOptions } from './context.js';
import { addCrossSessionCommands } from './cross-session-commands.js';
import { describeFailure, EXIT } from './failure.js';
import { addGovernanceCommands } from './governance-commands.js';
import { storeUrlOf } from './store-url.js';
import { safe, safeLine } from './terminal.js';

// Both src/cli/main.ts and the built dist/cli/main.js sit two levels below package.json, which
// the package also exports, so the published tree always has it there.
const VERSION = packageVersion();

function packageVersion(): string {
  const manifest: unknown = createRequire(import.meta.url)('../../package.json');
  const version = (manifest as { version?: unknown } | null)?.version;
  return typeof version === 'string' ? version : '0.0.0';
}

function program(): Command {
  const root = new Command('palimpsest')
    .description(
      'Record, import, inspect, verify, repair, fork, compact and convert event-sourced LLM agent sessions.',
    )
    .version(VERSION)
    .option(
      '--store <url>',
      'the session store: jsonl:DIR, sqlite:FILE, postgres://…, memory:, or a store directory or SQLite file path (default jsonl:./.palimpsest/sessions, or $PALIMPSEST_STORE)',
    )
    .option(
      '--key-vault <dir>',
      'an encrypted store: the directory keeping its session keys (or $PALIMPSEST_KEY_VAULT); new sessions are encrypted',
    )
    .option(
      '--key-file <file>',
      'the master key wrapping those keys (or $PALIMPSEST_MASTER_KEY_FILE, or the key itself in $PALIMPSEST_MASTER_KEY)',
    )
    .option('--json', 'print JSON instead of tables and text')
    .option('--no-color', 'never colour the output (also NO_COLOR=1)')
    .option('--debug', 'print the stack of an error')
    .showHelpAfterError(
      '(palimpsest --help lists the commands; palimpsest COMMAND --help explains one)',
    )
    .exitOverride();
  // Commander echoes what it was given (an unknown option, a bad argument): escaped like any output.
  root.configureOutput({ outputError: (text, write) => write(safe(text)) });

  let exitCode: number = EXIT.ok;
  const run =
    <A extends unknown[]>(action: (context: CliContext, ...args: A) => Promise<unknown>) =>
    async (...args: A): Promise<void> => {
      const context = new CliContext(root.opts<GlobalOptions>());
      const code = await action(context, ...args);
      if (typeof code === 'number') exitCode = code;
    };

  root
    .command('demo')
    .description(
      'record a realistic agent session offline (tools, streaming, prune, compaction, a crash and its repair) and say how to look at it',
    )
    .option(
      '--model <provider:name>',
      'use this model instead of the environment’s (deepseek, openai, openai-compatible, anthropic, scripted)',
    )
    .action(run(async (context, options: { model?: string }) => demoCommand(context, options)));
  root
    .command('__demo-writer', { hidden: true })
    .argument('<id>')
    .argument('<workspace>')
    .option('--model <provider:name>')
    .action(
      run(async (context, id: string, workspace: string, options: { model?: string }) =>
        demoWriterCommand(context, id, workspace, options),
      ),
    );
  root
    .command('run')
    .description(
      'run one turn with PROMPT, or a conversation without it (typing during a turn steers it); Ctrl-C cancels the running turn',
    )
    .argument('[prompt]', 'the message; omit it for an interactive conversation')
    .option('--session <id>', 'continue this session (created when new); a new id by default')
    .option(
      '--model <provider:name>',
      'for example deepseek:deepseek-chat, anthropic:claude-sonnet-4-5, openai-compatible:qwen3 (needs OPENAI_BASE_URL)',
    )
    .option(
      '--base-url <url>',
      'an OpenAI-compatible chat-completions server (Ollama, vLLM, LM Studio); sets OPENAI_BASE_URL for this run',
    )
    .option(
      '--system <text>',
      'the system prompt (by default: a concise assistant with file tools)',
    )
    .option(
      '--resume',
      'first continue what the session left unfinished (an interrupted turn, queued messages), then PROMPT or the conversation',
    )
    .action(
      run(async (context, prompt: string | undefined, options: RunOptions) =>
        runCommand(context, prompt, options),
      ),
    );
  root
    .command('ls')
    .description(
      'list the sessions of the store: id, created, turns, events, tokens used, last activity, parent (from summaries, never whole logs)',
    )
    .option('--limit <n>', 'at most this many sessions, newest first')
    .option(
      '--surface',
      'also the surface size and its estimated tokens (loads each session; slower on big logs)',
    )
    .option('--prices <file>', 'a JSON price table for the COST column instead of the shipped one')
    .option(
      '--tree',
      'subagent sessions and forks under their parents, cost rolled up over subagents',
    )
    .action(
      run(
        async (
          context,
          options: { limit?: string; surface?: boolean; prices?: string; tree?: boolean },
        ) => listCommand(context, options),
      ),
    );
  root
    .command('show')
    .description(
      'print the human transcript of a session (everything said, with markers where history was replaced)',
    )
    .argument('<id>')
    .option(
      '--full',
      'print long messages whole (by default each is cut after 40 lines of 400 characters)',
    )
    .option('--salvage', 'of a damaged session, show the acknowledged events before the damage')
    .action(
      run(async (context, id: string, options: { full?: boolean; salvage?: boolean }) =>
        showCommand(context, await context.sessionId(id), options),
      ),
    );
  root
    .command('surface')
    .description('print the messages the model sees, now or right after event SEQ')
    .argument('<id>')
    .option('--at <seq>', 'as of this event')
    .action(
      run(async (context, id: string, options: { at?: string }) =>
        surfaceCommand(context, await context.sessionId(id), options),
      ),
    );
  root
    .command('log')
    .description('print the raw events of a session (--json: one JSON event per line)')
    .argument('<id>')
    .option('--type <type>', 'only this type (tool/call) or area (tool)')
    .option('--from <seq>', 'from this event')
    .option('--to <seq>', 'up to this event')
    .option('--salvage', 'of a damaged session, print the acknowledged events before the damage')
    .option('-f, --follow', 'then print each event as it is committed, until Ctrl-C')
    .action(
      run(
        async (
          context,
          id: string,
          options: {
            type?: string;
            from?: string;
            to?: string;
            salvage?: boolean;
            follow?: boolean;
          },
        ) => logCommand(context, await context.sessionId(id), options),
      ),
    );
  root
    .command('why')
    .description(
      'print the provenance of one event: what it was derived from, what shadowed it, what cites it',
    )
    .argument('<id>')
    .argument('<seq>')
    .action(
      run(async (context, id: string, seq: string) =>
        whyCommand(context, await context.sessionId(id), seq),
      ),
    );
  root
    .command('verify')
    .description(
      'load, fold and lint sessions, and with --integrity check their hash chains; exit code 7 on any violation',
    )
    .argument('[ids...]')
    .option('--all', 'every session of the store')
    .option(
      '--integrity',
      'check the hash chain: nothing altered, reordered, inserted or removed up to the last checkpoint or anchor',
    )
    .option(
      '--key <pem>',
      'an Ed25519 key (PEM) whose checkpoint signatures are checked; repeatable',
      (value: string, previous: string[] = []) => [...previous, value],
    )
    .option(
      '--anchors <file-or-url>',
      'chain heads kept outside the store: a JSON-lines file, or a store holding an anchors session',
    )
    .action(
      run(async (context, ids: string[], options: VerifyOptions) =>
        verifyCommand(context, await context.sessionIds(ids), options),
      ),
    );
  addGovernanceCommands(root, run);
  addCrossSessionCommands(root, run);
  root
    .command('request')
    .description(
      "print the request a model call received, rebuilt from the log: palimpsest's canonical form with its digest, or a provider's request body",
    )
    .argument('<id>')
    .argument('[seq]', "an event inside the call's step (default: the last call)")
    .addOption(
      new Option('--wire <provider>', "print the provider's HTTP request body").choices([
        'openai',
        'anthropic',
      ]),
    )
    .action(
      run(async (context, id: string, seq: string | undefined, options: { wire?: string }) =>
        requestCommand(context, await context.sessionId(id), seq, options),
      ),
    );
  root
    .command('replay')
    .description(
      "send the exact request of a recorded call to another model, record its answer in a fork of the session that ends where the call's step began, and print both answers side by side with their usage",
    )
    .argument('<id>')
    .argument('[seq]', "an event inside the call's step (default: the last call)")
    .option('--at <seq>', 'the same as SEQ')
    .option('--model <provider:name>', 'the model to ask (scripted: the offline scripted model)')
    .option('--id <new>', "the fork's id (default: a random UUID)")
    .action(
      run(
        async (
          context,
          id: string,
          seq: string | undefined,
          options: { at?: string; model?: string; id?: string },
        ) => replayCommand(context, await context.sessionId(id), seq, options),
      ),
    );
  root
    .command('cache')
    .description(
      "for each model call, the prefix its request shared with the previous call's (what a prompt cache can serve) beside the cached tokens the provider reported, and the event that broke the prefix where it broke",
    )
    .argument('<id>')
    .action(run(async (context, id: string) => cacheCommand(context, await context.sessionId(id))));
  root
    .command('cost')
    .description(
      'what sessions cost: every model call priced at the rates in effect when it was made (the ones the session recorded, else the price table of its day), split by token kind, rolled up over forks and subagent children; --by entry shows which surface entries cost most (token rent)',
    )
    .argument('<ids...>')
    .option('--by <view>', 'session (default), turn, model or entry')
    .option('--prices <file>', 'a JSON price table instead of the shipped one (docs/cost.md)')
    .action(
      run(async (context, ids: string[], options: { by?: string; prices?: string }) =>
        costCommand(context, await context.sessionIds(ids), options),
      ),
    );
  root
    .command('otel')
    .description(
      'send sessions to an OpenTelemetry collector or trace backend over OTLP/HTTP, as traces following the GenAI semantic conventions: a span per turn, model call, tool execution and compaction; message content only with --content',
    )
    .argument('[ids...]')
    .option('--all', 'every session of the store')
    .option(
      '--endpoint <url>',
      'the OTLP/HTTP endpoint (/v1/traces is added unless the URL ends with it)',
    )
    .option(
      '--content',
      'add message content: prompts, answers, system instructions, tool arguments and results',
    )
    .option(
      '--header <name=value>',
      'a request header (an API key...); repeatable; never printed',
      (value: string, previous: string[] = []) => [...previous, value],
    )
    .option('--agent-name <name>', 'gen_ai.agent.name of the invoke_agent spans')
    .option('--service-name <name>', 'service.name of the resource (default palimpsest)')
    .action(
      run(async (context, ids: string[], options: OtelCommandOptions) =>
        otelCommand(context, await context.sessionIds(ids), options),
      ),
    );
  root
    .command('repair')
    .description(
      'durably close a turn a crashed writer left open, and drop a torn final batch; --adopt-ledger: pair a SQLite database with a ledger recording it as it is now',
    )
    .argument('[id]', 'the session to repair (optional with --adopt-ledger)')
    .option(
      '--adopt-ledger',
      'sqlite: only: after a ledger error (no ledger beside the database, another database’s, or an older one), record the database as it is in its ledger (a new one if needed; another database’s is moved aside); a loss before now can no longer be detected, and the report names the sessions this vouches for',
    )
    .action(
      run(async (context, id: string | undefined, options: { adoptLedger?: boolean }) =>
        repairCommand(context, id === undefined ? id : await context.sessionId(id), options),
      ),
    );
  root
    .command('unlock')
    .description(
      'remove the writer lock of a session whose writer is gone (killed, or on a host that stopped refreshing it)',
    )
    .argument('<id>')
    .option(
      '--force',
      'remove it even if its holder is alive or refreshed it recently (dangerous: two writers on one session)',
    )
    .action(
      run(async (context, id: string, options: { force?: boolean }) =>
        unlockCommand(context, await context.sessionId(id), options),
      ),
    );
  root
    .command('gc')
    .description(
      'show which sessions a retention policy removes (a dry run); --delete or --archive DIR removes them',
    )
    .option(
      '--older-than <duration>',
      'sessions last active longer ago than this (90d, 12h, 30m, 2w)',
    )
    .option('--keep <n>', 'keep only the newest n sessions (by last activity)')
    .option(
      '--max-size <size>',
      'remove the oldest until the rest take this much (10GiB, 500MB, bytes)',
    )
    .option(
      '--keep-forks',
      'keep a session from which a kept fork descends (its provenance; a fork works without it)',
    )
    .option(
      '--archive <dir>',
      'move the sessions to this archive directory (restore brings them back)',
    )
    .option('--delete', 'delete the sessions, every byte of them, for good')
    .action(run(async (context, options: GcOptions) => gcCommand(context, options)));
  root
    .command('archive')
    .description(
      'move sessions out of the store into an archive directory (a jsonl: store), whole or not at all',
    )
    .argument('<ids...>')
    .requiredOption('--to <dir>', 'the archive directory (created when missing)')
    .action(
      run(async (context, ids: string[], options: { to: string }) =>
        archiveCommand(context, await context.sessionIds(ids), options),
      ),
    );
  root
    .command('restore')
    .description('move archived sessions back into the store, whole or not at all')
    .argument('<ids...>')
    .requiredOption('--from <dir>', 'the archive directory')
    .action(
      run(async (context, ids: string[], options: { from: string }) =>
        restoreCommand(context, await context.sessionIds(ids, `jsonl:${options.from}`), options),
      ),
    );
  root
    .command('fork')
    .description('copy a session up to event SEQ (inclusive) into a new session')
    .argument('<id>')
    .requiredOption('--at <seq>', 'the last event to copy (not inside an open turn)')
    .option('--id <new-id>', 'the new session’s id (a random one by default)')
    .action(
      run(async (context, id: string, options: { at?: string; id?: string }) =>
        forkCommand(context, await context.sessionId(id), options),
      ),
    );
  root
    .command('salvage')
    .description(
      'copy the intact prefix of a damaged session (the acknowledged events before the damage) into a new session; the damaged one is left as it is',
    )
    .argument('<id>')
    .option('--id <new-id>', 'the new session’s id (a random one by default)')
    .action(
      run(async (context, id: string, options: { id?: string }) =>
        salvageCommand(context, await context.sessionId(id), options),
      ),
    );
  root
    .command('compact')
    .description('summarise old history with the model (the log keeps every original event)')
    .argument('<id>')
    .option('--keep-recent-tokens <n>', 'recent history kept verbatim (default 8000)')
    .option('--model <provider:name>', 'the summarizer (default: from the environment)')
    .action(
      run(async (context, id: string, options: { keepRecentTokens?: string; model?: string }) =>
        compactCommand(context, await context.sessionId(id), options),
      ),
    );
  root
    .command('prune')
    .description('replace old, large tool results with an excerpt (no model call)')
    .argument('<id>')
    .option('--keep-recent-turns <n>', 'results of the last n turns are kept (default 2)')
    .option('--min-chars <n>', 'only results longer than this are pruned (default 2000)')
    .action(
      run(async (context, id: string, options: { keepRecentTurns?: string; minChars?: string }) =>
        pruneCommand(context, await context.sessionId(id), options),
      ),
    );
  root
    .command('export')
    .description(
      'print the transcript as Markdown, the messages the model sees as JSON or as an OpenAI / Anthropic request body, the web viewer as one HTML file, or the session as a file pi, Claude Code or Codex resumes',
    )
    .argument('<id>')
    .addOption(
      new Option('--format <format>', 'output format')
        .choices(['markdown', 'json', 'openai', 'anthropic', 'html', 'pi', 'claude-code', 'codex'])
        .default('markdown'),
    )
    .option('--at <seq>', 'the messages as of this event (json, openai, anthropic)')
    .action(
      run(async (context, id: string, options: { format?: string; at?: string }) =>
        exportCommand(context, await context.sessionId(id), options),
      ),
    );
  root
    .command('export-evals')
    .description(
      "write eval cases cut from sessions as JSON lines: each call's exact request as OpenAI chat messages, the recorded answer last, and where it came from",
    )
    .argument('<ids...>')
    .option(
      '--at <which>',
      'turn-ends (the answer that ended each turn) or seqs, comma-separated',
      'turn-ends',
    )
    .action(
      run(async (context, ids: string[], options: { at?: string }) =>
        exportEvalsCommand(context, await context.sessionIds(ids), options),
      ),
    );
  root
    .command('view')
    .description(
      'serve the web viewer on 127.0.0.1 (model view, transcript, raw log, provenance, time travel, live updates) until Ctrl-C',
    )
    .argument('[id]', 'open on this session')
    .option('--port <n>', 'the port (default: a free one)')
    .option('--open', 'open the page in the browser')
    .action(
      run(async (context, id: string | undefined, options: { port?: string; open?: boolean }) =>
        viewCommand(context, id === undefined ? id : await context.sessionId(id), options),
      ),
    );
  root
    .command('convert')
    .description(
      'copy sessions between stores, verified by reading them back; resumes an interrupted copy',
    )
    .argument('[ids...]')
    .option('--from <url>', 'the source store (default: --store)')
    .requiredOption('--to <url>', 'the target store')
    .option('--all', 'every session of the source')
    .action(
      run(async (context, ids: string[], options: { from?: string; to?: string; all?: boolean }) =>
        convertCommand(
          context,
          await context.sessionIds(ids, storeUrlOf(options.from ?? context.storeUrl)),
          options,
        ),
      ),
    );

  root
    .command('import')
    .description(
      'import the sessions Claude Code, Codex or pi wrote (a file, or every .jsonl under a directory); a second run adds only what is new',
    )
    .argument('<file-or-dir>')
    .addOption(
      new Option('--from <harness>', 'the harness that wrote them')
        .choices(['claude-code', 'codex', 'pi'])
        .makeOptionMandatory(),
    )
    .option('--watch', 'keep importing as the source grows, until Ctrl-C')
    .action(
      run(async (context, path: string, options: ImportCommandOptions) =>
        importCommand(context, path, options),
      ),
    );

  root.hook('postAction', () => {
    process.exitCode = exitCode;
  });
  return root;
}

async function main(): Promise<void> {
  // A reader that stops early (palimpsest log ID | head) is not an error.
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw error;
  });
  const root = program();
  try {
    await root.parseAsync(process.argv);
  } catch (error) {
    if (error instanceof CommanderError) {
      // Help and version exit 0; usage mistakes were already printed by commander.
      process.exitCode = error.exitCode === 0 ? EXIT.ok : EXIT.usage;
      return;
    }
    const failure = describeFailure(error);
    process.stderr.write(`palimpsest: ${safeLine(failure.message, 2000)}\n`);
    if (root.opts<GlobalOptions>().debug === true && error instanceof Error) {
      process.stderr.write(`${safe(error.stack ?? '')}\n`);
    }
    process.exitCode = failure.code;
  }
}

await main();
