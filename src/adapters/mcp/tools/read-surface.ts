/**
 * `read_surface`: what the model sees, the messages derived from the surface in the order they
 * are sent, now or right after any earlier event (time travel). Compacted or pruned history is
 * absent here by design; `read_transcript` shows it.
 */
import { z } from 'zod';
import { serverTool } from '../server-tool.js';
import {
  charsFor,
  maxCharsArgument,
  messageText,
  moreNote,
  pageOf,
  requireEvent,
  sessionArgument,
  surfaceEntries,
  surfaceLine,
  surfaceMessage,
} from './shared.js';

/** The `read_surface` tool. */
export const readSurfaceTool = serverTool({
  name: 'read_surface',
  title: 'Read what the model sees',
  description:
    "Reads the messages a session's model sees (its surface: after compactions and prunes), in request order, each with the seq of its event. With `at`, the messages as they were right after event `at`. Starts at message `from`; pass `next` back as `from` for more.",
  input: {
    session: sessionArgument,
    at: z.number().int().min(0).optional().describe('an event seq: the surface right after it'),
    from: z.string().optional().describe('the message to start at: `next` of a previous call'),
    limit: z.number().int().min(1).max(500).default(50).describe('messages at most'),
    maxChars: maxCharsArgument,
  },
  output: {
    session: z.string(),
    at: z.number().int().describe('the last event the surface includes'),
    total: z.number().int().describe('messages on the surface'),
    messages: z.array(surfaceMessage),
    next: z.string().optional(),
  },
  async run(args, context) {
    const session = await context.sessions.load(args.session);
    if (args.at !== undefined) requireEvent(session, args.at);
    const all = surfaceEntries(session, args.at);
    const page = pageOf(
      all,
      { cursor: args.from, limit: args.limit, maxChars: charsFor(args.maxChars, context.maxChars) },
      ({ seq, message }) => ({ seq, role: message.role, text: messageText(message) }),
      surfaceLine,
    );
    const at = args.at ?? session.seq - 1;
    const heading =
      all.length === 0
        ? `The model of session ${session.id} sees no message after event #${at}.`
        : `Session ${session.id}, the model's messages ${page.first}–${page.last} of ${all.length} after event #${at}${moreNote(page, 'from')}:`;
    return {
      text: [heading, ...page.lines].join('\n'),
      structured: {
        session: session.id,
        at,
        total: all.length,
        messages: page.entries,
        ...(page.next === undefined ? {} : { next: page.next }),
      },
    };
  },
});
