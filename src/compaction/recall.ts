/**
 * The recall tool: lets a model read what a summary or a pruned result replaced. The summary
 * names the range of log events it replaced; the tool returns the original messages of that
 * range from the log, which never loses them.
 */
import { deriveEventMessage, formatMessage, type JsonObject, type Session } from '../core/index.js';
import { parseToolArguments, TOOL_NAME, type Tool } from '../model/index.js';
import { CompactionError } from './errors.js';

/** Options of {@link recallTool}. */
export interface RecallOptions {
  /** The tool name (default `recall`). */
  readonly name?: string;
  /** At most this many characters are returned (default 20,000); the rest is cut with a note. */
  readonly maxChars?: number;
}

/** A tool that returns the original messages of a range of log events. */
export function recallTool(options: RecallOptions = {}): Tool {
  const maxChars = options.maxChars ?? 20_000;
  const name = options.name ?? 'recall';
  if (!TOOL_NAME.test(name)) {
    throw new CompactionError(
      'INVALID_OPTIONS',
      `expected a tool name matching [a-zA-Z0-9_-]{1,64}, found ${JSON.stringify(name) ?? String(name)}`,
    );
  }
  // Built on the model layer's tool contract, not `defineTool`, so compaction does not depend
  // on the agent; the arguments are two integers, checked by `recall` itself.
  const tool: Tool = {
    name,
    description:
      'Returns the original messages of log events from..to (inclusive) of this session: use it to read what an earlier summary or a pruned tool result replaced. The summary or the pruning marker names the event numbers.',
    parameters: {
      type: 'object',
      properties: {
        from: { type: 'integer', minimum: 0, description: 'first event number' },
        to: { type: 'integer', minimum: 0, description: 'last event number' },
      },
      required: ['from', 'to'],
    },
    run: async (argumentsText, { session }) => {
      const parsed = parseToolArguments(name, argumentsText);
      if ('refused' in parsed) return parsed.refused;
      return { content: [{ type: 'text' as const, text: recall(parsed.args, session, maxChars) }] };
    },
  };
  return Object.freeze(tool);
}

function recall(args: JsonObject, session: Session, maxChars: number): string {
  const from = Number(args.from);
  const to = Number(args.to);
  if (!Number.isSafeInteger(from) || !Number.isSafeInteger(to) || from < 0 || to < from) {
    return `Give two event numbers with 0 ≤ from ≤ to; found from=${String(args.from)}, to=${String(args.to)}.`;
  }
  const last = Math.min(to, session.seq - 1);
  const lines: string[] = [];
  let length = 0;
  for (let seq = from; seq <= last; seq++) {
    const event = session.event(seq);
    const message = event === undefined ? null : deriveEventMessage(event);
    if (message === null) continue;
    const line = `#${seq} ${message.role}: ${formatMessage(message, { callIds: true })}`;
    if (length + line.length > maxChars) {
      lines.push(
        `[… cut at ${maxChars.toLocaleString('en-US')} characters; ask for a range starting at #${seq} …]`,
      );
      break;
    }
    lines.push(line);
    length += line.length + 1;
  }
  if (lines.length === 0)
    return `No messages between events #${from} and #${to} (the log has ${session.seq} events).`;
  return lines.join('\n');
}
