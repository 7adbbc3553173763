/**
 * The CLI's commands over many sessions at once: `search` (words across every session) and `mcp`
 * (the store served read-only to MCP clients). What they do is in `commands/search.ts` and
 * `commands/mcp.ts`; `docs/cli.md` documents them.
 */
import type { Command } from 'commander';
import { type McpCommandOptions, mcpCommand } from './commands/mcp.js';
import { type SearchCommandOptions, searchCommand } from './commands/search.js';
import type { ActionRunner } from './governance-commands.js';

/** Adds `search` and `mcp` to `root`. */
export function addCrossSessionCommands(root: Command, run: ActionRunner): void {
  root
    .command('mcp')
    .description(
      'serve the store read-only to MCP clients (list, search, transcript, surface, why, cost, diff) on stdio, or with --http on loopback behind a bearer token, until the client leaves or Ctrl-C',
    )
    .option('--http <host:port>', 'streamable HTTP on this loopback address instead of stdio')
    .option(
      '--token-file <file>',
      'the bearer token (or $PALIMPSEST_MCP_TOKEN; else one is generated and shown once)',
    )
    .option('--project <dir>', 'only sessions recorded at or under this directory')
    .option('--session <id...>', 'only these sessions')
    .option('--max-chars <n>', 'characters of text one tool result holds at most (default 20000)')
    .action(run((context, options: McpCommandOptions) => mcpCommand(context, options)));
  root
    .command('search')
    .description('find messages across sessions by their words ("quoted phrases" too), best first')
    .argument('[query...]', 'words and "quoted phrases", all of which must occur')
    .option('--since <when>', 'only messages from then on (2026-12-01, or 7d back from now)')
    .option('--until <when>', 'only messages before then')
    .option('--model <name>', 'only messages written under this model')
    .option('--tool <name>', 'only messages that call this tool or hold its result')
    .option('--project <dir>', 'only sessions whose header names this project or working directory')
    .option('--forks', 'search forks too')
    .option('--children', "search subagents' sessions too")
    .option('--limit <n>', 'at most this many hits (default 20)')
    .option('--rebuild', 'make the search index anew from the logs first')
    .action(
      run((context, words: string[], options: SearchCommandOptions) =>
        searchCommand(context, words.length === 0 ? undefined : words.join(' '), options),
      ),
    );
}
