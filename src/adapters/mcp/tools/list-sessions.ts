/**
 * `list_sessions`: the sessions in scope, newest first, a page at a time, with the filters the
 * store's own listing has.
 */
import { z } from 'zod';
import type { SessionSummary } from '../../../store/index.js';
import { workingDirectory } from '../scope.js';
import { serverTool } from '../server-tool.js';
import { moreNote, pageOf, time } from './shared.js';

const listed = z.object({
  id: z.string(),
  createdAt: z.string().describe('ISO time'),
  updatedAt: z.string().optional(),
  events: z.number().int().optional(),
  parentSession: z.string().optional(),
  project: z.string().optional(),
});

type Listed = z.infer<typeof listed>;

/** The `list_sessions` tool. */
export const listSessionsTool = serverTool({
  name: 'list_sessions',
  title: 'List sessions',
  description:
    'Lists the recorded agent sessions this server shows, newest first: id, creation time, last write, event count, the session it was forked from, its project directory. Pass nextCursor back as cursor for the next page.',
  input: {
    limit: z.number().int().min(1).max(200).default(50).describe('sessions per page'),
    cursor: z.string().optional().describe('nextCursor of the previous page'),
    idPrefix: z.string().optional().describe('only ids starting with this text'),
    parentSession: z.string().optional().describe('only sessions forked from this one'),
    createdAfter: z.iso.datetime({ offset: true }).optional().describe('ISO time'),
    createdBefore: z.iso.datetime({ offset: true }).optional().describe('ISO time'),
  },
  output: {
    sessions: z.array(listed),
    total: z.number().int().describe('sessions matching the filters'),
    nextCursor: z.string().optional(),
  },
  async run(args, { sessions, maxChars }) {
    const after = args.createdAfter === undefined ? undefined : Date.parse(args.createdAfter);
    const before = args.createdBefore === undefined ? undefined : Date.parse(args.createdBefore);
    const matching = (await sessions.list()).filter(({ header }) => {
      if (args.idPrefix !== undefined && !header.id.startsWith(args.idPrefix)) return false;
      if (args.parentSession !== undefined && header.parentSession !== args.parentSession) {
        return false;
      }
      if (after !== undefined && !(header.createdAt > after)) return false;
      return before === undefined || header.createdAt < before;
    });
    const page = pageOf(
      matching,
      { cursor: args.cursor, limit: args.limit, maxChars },
      listedOf,
      line,
    );
    const heading =
      matching.length === 0
        ? 'No session matches.'
        : `Sessions ${page.first}–${page.last} of ${matching.length}${moreNote(page, 'cursor')}:`;
    return {
      text: [heading, ...page.lines].join('\n'),
      structured: {
        sessions: page.entries,
        total: matching.length,
        ...(page.next === undefined ? {} : { nextCursor: page.next }),
      },
    };
  },
});

function listedOf({ header, ...summary }: SessionSummary): Listed {
  const project = workingDirectory(header);
  return {
    id: header.id,
    createdAt: time(header.createdAt),
    ...(summary.updatedAt === undefined ? {} : { updatedAt: time(summary.updatedAt) }),
    ...(summary.eventCount === undefined ? {} : { events: summary.eventCount }),
    ...(header.parentSession === undefined ? {} : { parentSession: header.parentSession }),
    ...(project === undefined ? {} : { project }),
  };
}

function line(session: Listed): string {
  const parts = [session.id, `created ${session.createdAt}`];
  if (session.updatedAt !== undefined) parts.push(`last write ${session.updatedAt}`);
  if (session.events !== undefined) parts.push(`${session.events} events`);
  if (session.parentSession !== undefined) parts.push(`forked from ${session.parentSession}`);
  if (session.project !== undefined) parts.push(`project ${session.project}`);
  return `- ${parts.join(' · ')}`;
}
