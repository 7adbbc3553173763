/**
 * `diff_surfaces`: what two sessions' models see differently, from the end of their common
 * prefix (a fork and its parent, two forks of one session, a session and its salvage): the
 * messages both surfaces share, then each side's own.
 */
import { z } from 'zod';
import type { Session, SessionEvent } from '../../../core/index.js';
import { fitLines } from '../results.js';
import { serverTool } from '../server-tool.js';
import {
  charsFor,
  maxCharsArgument,
  messageText,
  sessionArgument,
  surfaceEntries,
  surfaceLine,
  surfaceMessage,
} from './shared.js';

const side = z.object({
  session: z.string(),
  total: z.number().int().describe('messages only this side has'),
  messages: z.array(surfaceMessage).describe('the first of them, as many as fit'),
});

type Side = z.infer<typeof side>;

/** The `diff_surfaces` tool. */
export const diffSurfacesTool = serverTool({
  name: 'diff_surfaces',
  title: 'Compare two surfaces',
  description:
    'Compares what the models of two sessions see (e.g. a fork and its parent): the length of the event log they share, how many leading messages both surfaces share, then the messages only one side has.',
  input: {
    a: sessionArgument,
    b: sessionArgument,
    limit: z.number().int().min(1).max(200).default(20).describe('messages per side at most'),
    maxChars: maxCharsArgument,
  },
  output: {
    commonEvents: z.number().int().describe('leading events the two logs share'),
    sharedMessages: z.number().int().describe('leading surface messages both models see'),
    a: side,
    b: side,
  },
  async run(args, context) {
    const a = await context.sessions.load(args.a);
    const b = await context.sessions.load(args.b);
    const commonEvents = commonPrefix(a, b);
    const left = surfaceEntries(a);
    const right = surfaceEntries(b);
    let shared = 0;
    while (
      shared < left.length &&
      shared < right.length &&
      left[shared]?.seq === right[shared]?.seq &&
      (left[shared]?.seq ?? commonEvents) < commonEvents
    ) {
      shared++;
    }
    const budget = Math.floor(charsFor(args.maxChars, context.maxChars) / 2);
    const sideOf = (session: Session, entries: typeof left): { side: Side; lines: string[] } => {
      const rest = entries.slice(shared);
      const range = rest.slice(0, args.limit).map(({ seq, message }) => ({
        seq,
        role: message.role,
        text: messageText(message),
      }));
      const { taken, lines } = fitLines(range, surfaceLine, budget);
      const heading = `Only ${session.id} (${rest.length} message(s)${taken.length < rest.length ? `, the first ${taken.length} shown` : ''}):`;
      return {
        side: { session: session.id, total: rest.length, messages: [...taken] },
        lines: rest.length === 0 ? [`Only ${session.id}: nothing.`] : [heading, ...lines],
      };
    };
    const sideA = sideOf(a, left);
    const sideB = sideOf(b, right);
    return {
      text: [
        `${a.id} and ${b.id} share their first ${commonEvents} event(s); both models see the same first ${shared} message(s).`,
        ...sideA.lines,
        ...sideB.lines,
      ].join('\n'),
      structured: { commonEvents, sharedMessages: shared, a: sideA.side, b: sideB.side },
    };
  },
});

/** How many leading events two logs hold alike (a fork's copied prefix is equal to its parent's). */
function commonPrefix(a: Session, b: Session): number {
  const length = Math.min(a.seq, b.seq);
  let index = 0;
  while (index < length && sameEvent(a.event(index), b.event(index))) index++;
  return index;
}

function sameEvent(x: SessionEvent | undefined, y: SessionEvent | undefined): boolean {
  if (x === y) return true;
  if (x === undefined || y === undefined) return false;
  return (
    x.type === y.type &&
    x.time === y.time &&
    JSON.stringify([x.data, x.surfaceOp, x.sourceEventSeqs]) ===
      JSON.stringify([y.data, y.surfaceOp, y.sourceEventSeqs])
  );
}
