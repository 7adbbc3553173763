/**
 * `palimpsest search QUERY`: the messages of every session that match, best first, each with
 * its session, seq and a snippet (`palimpsest show ID --from SEQ` opens it). `--rebuild` makes
 * the store's index anew first (alone, it only rebuilds).
 */
import { InvalidArgumentError } from '../../core/index.js';
import {
  parseDuration,
  rebuildSearchIndex,
  type SearchOptions,
  searchSessions,
} from '../../store/index.js';
import type { CliContext } from '../context.js';
import { CliError, EXIT } from '../failure.js';
import { safe, table } from '../terminal.js';

/** The options of `palimpsest search`, as commander gives them. */
export interface SearchCommandOptions {
  readonly since?: string;
  readonly until?: string;
  readonly model?: string;
  readonly tool?: string;
  readonly project?: string;
  readonly forks?: boolean;
  readonly children?: boolean;
  readonly limit?: string;
  readonly rebuild?: boolean;
}

/** `palimpsest search [QUERY]`: exit 9 when nothing matched. */
export async function searchCommand(
  context: CliContext,
  query: string | undefined,
  options: SearchCommandOptions,
): Promise<number> {
  if (query === undefined && options.rebuild !== true) {
    throw new CliError('expected a query (or --rebuild), found neither', EXIT.usage);
  }
  const now = Date.now();
  const searchOptions: SearchOptions = {
    ...(options.since === undefined ? {} : { since: timeOption('--since', options.since, now) }),
    ...(options.until === undefined ? {} : { until: timeOption('--until', options.until, now) }),
    ...(options.model === undefined ? {} : { model: options.model }),
    ...(options.tool === undefined ? {} : { tool: options.tool }),
    ...(options.project === undefined ? {} : { project: options.project }),
    ...(options.forks === true ? { includeForks: true } : {}),
    ...(options.children === true ? { includeChildren: true } : {}),
    ...(options.limit === undefined ? {} : { limit: limitOption(options.limit) }),
  };
  return context.withStore(async (store) => {
    if (options.rebuild === true) {
      const count = await rebuildSearchIndex(store);
      context.terminal.note(`search index rebuilt: ${count} session(s) indexed`);
      if (query === undefined) return EXIT.ok;
    }
    const result = await searchSessions(store, query as string, searchOptions);
    if (context.json) context.terminal.json(result);
    if (result.hits.length === 0) {
      context.terminal.note(`no message matches ${JSON.stringify(query)}`);
      return EXIT.unchanged;
    }
    if (context.json) return EXIT.ok;
    const rows = result.hits.map((hit) => [
      safe(hit.session),
      String(hit.seq),
      hit.role,
      new Date(hit.time).toISOString().slice(0, 16).replace('T', ' '),
      safe(hit.snippet),
    ]);
    context.terminal.out.write(`${table(['SESSION', 'SEQ', 'ROLE', 'TIME', 'MATCH'], rows)}\n`);
    return EXIT.ok;
  });
}

/** A time: an ISO date (`2026-12-01`, `2026-12-01T10:00Z`) or a duration back from now (`7d`). */
function timeOption(flag: string, text: string, now: number): number {
  if (/^\d+[mhdw]$/.test(text.trim())) return now - parseDuration(text);
  const time = Date.parse(text);
  if (Number.isNaN(time)) {
    throw new InvalidArgumentError(
      `expected ${flag} as an ISO date (2026-12-01) or a duration back from now (7d, 12h), found '${text.slice(0, 40)}'`,
    );
  }
  return time;
}

function limitOption(text: string): number {
  if (!/^\d+$/.test(text)) {
    throw new InvalidArgumentError(
      `expected --limit as a whole number, found '${text.slice(0, 40)}'`,
    );
  }
  return Number(text);
}
