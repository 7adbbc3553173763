/**
 * `read_transcript`: what happened in a session, in log order, a range at a time: every message
 * that entered by appending, and a marker where a replace (a compaction summary, a pruned tool
 * result) rewrote what the model sees. Unlike the surface, it hides nothing a reader saw.
 */
import { z } from 'zod';
import type { TranscriptEntry } from '../../../core/index.js';
import { serverTool } from '../server-tool.js';
import {
  charsFor,
  maxCharsArgument,
  messageText,
  moreNote,
  pageOf,
  sessionArgument,
  time,
} from './shared.js';

const entry = z.object({
  seq: z.number().int(),
  time: z.string(),
  kind: z.enum(['message', 'replacement']),
  type: z.string(),
  role: z.string().optional(),
  text: z.string(),
  onSurface: z.boolean().describe('whether the model still sees it'),
  shadowedBy: z.number().int().optional().describe('the replace that removed it'),
  replaced: z.array(z.number().int()).optional().describe('the seqs a replacement removed'),
});

type Entry = z.infer<typeof entry>;

/** The `read_transcript` tool. */
export const readTranscriptTool = serverTool({
  name: 'read_transcript',
  title: 'Read a transcript',
  description:
    "Reads a session's transcript in log order: user, assistant and tool messages, and markers where a compaction or prune replaced messages (with what they were replaced by). Starts at entry `from`; pass `next` back as `from` for more. Each entry names its event seq, which `why` explains.",
  input: {
    session: sessionArgument,
    from: z.string().optional().describe('the entry to start at: `next` of a previous call'),
    limit: z.number().int().min(1).max(500).default(50).describe('entries at most'),
    maxChars: maxCharsArgument,
  },
  output: {
    session: z.string(),
    total: z.number().int().describe('entries in the whole transcript'),
    entries: z.array(entry),
    next: z.string().optional().describe('pass as `from` for the entries after these'),
  },
  async run(args, context) {
    const session = await context.sessions.load(args.session);
    const transcript = session.transcript();
    const page = pageOf(
      transcript,
      { cursor: args.from, limit: args.limit, maxChars: charsFor(args.maxChars, context.maxChars) },
      entryOf,
      transcriptLine,
    );
    const heading =
      transcript.length === 0
        ? `Session ${session.id} has no messages yet.`
        : `Session ${session.id}, transcript entries ${page.first}–${page.last} of ${transcript.length}${moreNote(page, 'from')}:`;
    return {
      text: [heading, ...page.lines].join('\n'),
      structured: {
        session: session.id,
        total: transcript.length,
        entries: page.entries,
        ...(page.next === undefined ? {} : { next: page.next }),
      },
    };
  },
});

/** A transcript entry as the tool and the transcript resource show it. */
export function entryOf(item: TranscriptEntry): Entry {
  const common = {
    seq: item.seq,
    time: time(item.time),
    kind: item.kind,
    type: item.type,
    onSurface: item.onSurface,
    ...(item.shadowedBy === undefined ? {} : { shadowedBy: item.shadowedBy }),
  };
  if (item.kind === 'message') {
    return { ...common, role: item.message.role, text: messageText(item.message) };
  }
  return {
    ...common,
    ...(item.message === null ? {} : { role: item.message.role }),
    text: item.message === null ? '' : messageText(item.message),
    replaced: [...item.shadowedSeqs],
  };
}

/** One transcript entry as a line of text. */
export function transcriptLine(entry: Entry): string {
  const state = entry.onSurface
    ? ''
    : entry.shadowedBy === undefined
      ? ' (off the surface)'
      : ` (replaced by #${entry.shadowedBy})`;
  if (entry.kind === 'replacement') {
    const seqs = entry.replaced ?? [];
    return `#${entry.seq} [replaced ${seqs.length} message(s) #${seqs.join(', #')}]${state} ${entry.role ?? ''}: ${entry.text}`;
  }
  return `#${entry.seq} ${entry.role}${state}: ${entry.text}`;
}
