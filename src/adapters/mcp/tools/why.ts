/**
 * `why`: the provenance of one event (so of one message, by its seq): what it was derived from,
 * what replaced it, what cites it, and whether the model still sees it. The same answer as the
 * CLI's `why` and the viewer's "why is this here" pane (`eventProvenance`).
 */
import { z } from 'zod';
import { deriveEventMessage, type Session, type SessionEvent } from '../../../core/index.js';
import { eventProvenance, type ProvenanceNode } from '../../../core/provenance.js';
import { clip } from '../results.js';
import { serverTool } from '../server-tool.js';
import { eventNotFound, messageText, sessionArgument } from './shared.js';

const source = z.object({
  seq: z.number().int(),
  type: z.string(),
  depth: z.number().int().describe('1 for a direct source, 2 for its source...'),
  summary: z.string(),
});

type Source = z.infer<typeof source>;

/** The `why` tool. */
export const whyTool = serverTool({
  name: 'why',
  title: 'Why is this here',
  description:
    "Explains one event of a session (a message's seq from read_surface or read_transcript): the events it was derived from (a summary's summarized messages, a pruned result's original), the replace that removed it from what the model sees, the events that cite it, and whether the model still sees it.",
  input: {
    session: sessionArgument,
    seq: z.number().int().min(0).describe('the event seq'),
  },
  output: {
    session: z.string(),
    seq: z.number().int(),
    type: z.string(),
    summary: z.string(),
    recordsSources: z.boolean().describe('false when the event names no sources'),
    derivedFrom: z.array(source).describe('the source tree in order, depth first'),
    shadowedBy: z.array(z.number().int()),
    citedBy: z.array(z.number().int()),
    onSurface: z.boolean(),
  },
  async run(args, context) {
    const session = await context.sessions.load(args.session);
    const found = eventProvenance(session, args.seq);
    if (found === undefined) throw eventNotFound(session, args.seq);
    const derivedFrom: Source[] = [];
    flatten(session, found.derivedFrom ?? [], 1, derivedFrom);
    const summary = summaryOf(found.event);
    const lines = [`#${args.seq} ${found.event.type}: ${summary}`];
    if (found.derivedFrom === undefined) lines.push('derived from: (no sources recorded)');
    else if (derivedFrom.length === 0) lines.push('derived from: nothing (an empty model stream)');
    else lines.push('derived from:', ...sourceLines(derivedFrom));
    for (const by of found.shadowedBy) lines.push(`replaced on the surface by #${by}`);
    lines.push(
      `cited by: ${found.citedBy.length === 0 ? '(none)' : found.citedBy.map((seq) => `#${seq}`).join(', ')}`,
    );
    lines.push(`the model sees it now: ${found.onSurface ? 'yes' : 'no'}`);
    return {
      text: lines.join('\n'),
      structured: {
        session: session.id,
        seq: args.seq,
        type: found.event.type,
        summary,
        recordsSources: found.derivedFrom !== undefined,
        derivedFrom,
        shadowedBy: [...found.shadowedBy],
        citedBy: [...found.citedBy],
        onSurface: found.onSurface,
      },
    };
  },
});

function flatten(
  session: Session,
  nodes: readonly ProvenanceNode[],
  depth: number,
  into: Source[],
): void {
  for (const node of nodes) {
    const event = session.event(node.seq);
    into.push({
      seq: node.seq,
      type: node.type,
      depth,
      summary: event === undefined ? '' : clip(summaryOf(event), 300),
    });
    if (node.derivedFrom !== undefined) flatten(session, node.derivedFrom, depth + 1, into);
  }
}

/** Lines of the source tree; a run of stream chunks at one depth is one line. */
function sourceLines(sources: readonly Source[]): string[] {
  const lines: string[] = [];
  let chunks: Source[] = [];
  const flush = (): void => {
    const first = chunks[0];
    const last = chunks[chunks.length - 1];
    if (first !== undefined && last !== undefined) {
      lines.push(
        `${'  '.repeat(first.depth)}${chunks.length} stream chunk(s) #${first.seq}–#${last.seq}`,
      );
    }
    chunks = [];
  };
  for (const item of sources) {
    if (item.type === 'assistant/chunk' && (chunks[0]?.depth ?? item.depth) === item.depth) {
      chunks.push(item);
      continue;
    }
    flush();
    if (item.type === 'assistant/chunk') chunks.push(item);
    else lines.push(`${'  '.repeat(item.depth)}#${item.seq} ${item.type}: ${item.summary}`);
  }
  flush();
  return lines;
}

function summaryOf(event: SessionEvent): string {
  const message = deriveEventMessage(event);
  if (message !== null) return messageText(message);
  return clip(JSON.stringify(event.data) ?? '', 1_000);
}
