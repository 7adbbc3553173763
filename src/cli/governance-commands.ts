/**
 * The governance commands of the CLI: `redact`, `checkpoint`, `anchor` and `shred` (what they
 * do is in `commands/governance.ts`; `docs/cli.md` documents them).
 */
import type { Command } from 'commander';
import {
  anchorCommand,
  checkpointCommand,
  type RedactCommandOptions,
  redactCommand,
  shredCommand,
} from './commands/governance.js';
import type { CliContext } from './context.js';

/** Wraps a command's action: builds its context and records its exit code. */
export type ActionRunner = <A extends unknown[]>(
  action: (context: CliContext, ...args: A) => Promise<unknown>,
) => (...args: A) => Promise<void>;

/** Adds the governance commands to `root`. */
export function addGovernanceCommands(root: Command, run: ActionRunner): void {
  root
    .command('redact')
    .description(
      'erase content from sessions, keeping provenance: a log/redaction records what and why, the stored bytes are removed; exit 9 when nothing matched',
    )
    .argument('[ids...]')
    .option('--seq <list>', 'erase everything these events say (5,7,12)')
    .option(
      '--match <regex>',
      'erase every match of this regular expression, wherever content holds one',
    )
    .option('-i, --ignore-case', 'match --match without regard to case')
    .option(
      '--subject <id>',
      'erase everything tagged with this subject (a session header, or events as they were appended)',
    )
    .option(
      '--reason <text>',
      'why (a ticket, a policy): recorded, never erased, so no personal data',
    )
    .option('--all', 'every session of the store (with --match or --subject)')
    .option('--sign <pem>', 'sign the checkpoint that follows the redaction with this Ed25519 key')
    .action(
      run(async (context, ids: string[], options: RedactCommandOptions) =>
        redactCommand(context, await context.sessionIds(ids), options),
      ),
    );
  root
    .command('checkpoint')
    .description(
      "append a checkpoint of the session's hash chain now; exit 9 when one ends it already",
    )
    .argument('<ids...>')
    .option('--sign <pem>', 'sign it with this Ed25519 private key')
    .action(
      run(async (context, ids: string[], options: { sign?: string }) =>
        checkpointCommand(context, await context.sessionIds(ids), options),
      ),
    );
  root
    .command('anchor')
    .description(
      "print each session's chain head (JSON lines) to keep outside the store, or write it to --to",
    )
    .argument('[ids...]')
    .option('--all', 'every session of the store')
    .option('--to <file-or-url>', 'append to this file, or to the anchors session of this store')
    .action(
      run(async (context, ids: string[], options: { to?: string; all?: boolean }) =>
        anchorCommand(context, await context.sessionIds(ids), options),
      ),
    );
  root
    .command('shred')
    .description(
      'destroy the data keys of encrypted sessions: their payloads become unreadable in this store and every copy of it; needs --key-vault; exit 9 when no key was there',
    )
    .argument('<ids...>')
    .action(
      run(async (context, ids: string[]) => shredCommand(context, await context.sessionIds(ids))),
    );
}
