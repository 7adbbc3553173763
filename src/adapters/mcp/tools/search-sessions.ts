/**
 * `search_sessions`: the messages of the sessions in scope that hold the words asked for, best
 * first, each with the session and seq to read it by (`read_transcript`, `why`).
 */
import { z } from 'zod';
import type { SearchHit } from '../../../store/index.js';
import { serverTool } from '../server-tool.js';
import { time } from './shared.js';

const hit = z.object({
  session: z.string(),
  seq: z.number().int().describe('the event the message comes from'),
  role: z.string(),
  time: z.string().describe('ISO time'),
  model: z.string().optional(),
  tools: z.string().optional().describe('the tools it calls or answers, space-separated'),
  snippet: z.string().describe('words around the match, each matched word inside « and »'),
});

type Hit = z.infer<typeof hit>;

/** The `search_sessions` tool. */
export const searchSessionsTool = serverTool({
  name: 'search_sessions',
  title: 'Search sessions',
  description:
    'Finds messages across the recorded sessions this server shows (user, assistant, tool calls and results, compaction summaries) that hold every word of the query; "quoted phrases" must occur as written. Best match first, each with its session and seq: read_transcript reads around it, why explains where it came from.',
  input: {
    query: z.string().min(1).describe('words and "quoted phrases", all of which must occur'),
    since: z.iso.datetime({ offset: true }).optional().describe('only messages from then on'),
    until: z.iso.datetime({ offset: true }).optional().describe('only messages before then'),
    model: z.string().optional().describe('only messages written under this model'),
    tool: z.string().optional().describe('only messages that call this tool or hold its result'),
    includeForks: z.boolean().default(false).describe('search forks too'),
    includeChildren: z.boolean().default(false).describe("search subagents' sessions too"),
    limit: z.number().int().min(1).max(100).default(20).describe('hits at most'),
  },
  output: {
    hits: z.array(hit),
    method: z.enum(['index', 'scan']).describe('whether a search index answered'),
  },
  async run(args, { sessions, maxChars }) {
    const { hits, method } = await sessions.search(args.query, {
      ...(args.since === undefined ? {} : { since: Date.parse(args.since) }),
      ...(args.until === undefined ? {} : { until: Date.parse(args.until) }),
      ...(args.model === undefined ? {} : { model: args.model }),
      ...(args.tool === undefined ? {} : { tool: args.tool }),
      includeForks: args.includeForks,
      includeChildren: args.includeChildren,
      limit: args.limit,
    });
    const shown: Hit[] = [];
    const lines: string[] = [];
    let used = 0;
    for (const found of hits) {
      const entry = hitOf(found);
      const text = line(entry);
      if (used + text.length > maxChars && shown.length > 0) break;
      shown.push(entry);
      lines.push(text);
      used += text.length + 1;
    }
    const cut = hits.length - shown.length;
    const heading =
      hits.length === 0
        ? 'No message matches.'
        : `${hits.length} matching message(s), best first${cut === 0 ? '' : ` (the last ${cut} left out to keep this short: ask with a lower limit or a narrower query)`}:`;
    return { text: [heading, ...lines].join('\n'), structured: { hits: shown, method } };
  },
});

function hitOf(found: SearchHit): Hit {
  return {
    session: found.session,
    seq: found.seq,
    role: found.role,
    time: time(found.time),
    ...(found.model === '' ? {} : { model: found.model }),
    ...(found.tools === '' ? {} : { tools: found.tools }),
    snippet: found.snippet,
  };
}

function line(found: Hit): string {
  return `- ${found.session} #${found.seq} ${found.role} (${found.time}${found.model === undefined ? '' : `, ${found.model}`}): ${found.snippet}`;
}
