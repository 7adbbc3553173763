/**
 * `palimpsest export ID --format markdown|json|openai|anthropic|html|pi|claude-code|codex
 * [--at SEQ]`: the transcript as Markdown, or the messages the model sees, in palimpsest's own
 * JSON or as the body of an OpenAI chat-completions or Anthropic messages request, the web viewer
 * as one HTML file, or the session as a file a harness resumes (pi, Claude Code, Codex), with
 * what it could not hold on stderr.
 */

import { toolCallInput } from '../../agent/index.js';
import {
  type ContentBlock,
  formatMessage,
  type JsonValue,
  type Message,
  type RequestHeaderData,
  requestHeaderAt,
  type Session,
  type ToolResultBlock,
} from '../../core/index.js';
import { exportClaudeCode, exportCodex, exportPi } from '../../import/index.js';
import { inspectSession } from '../../store/index.js';
import { exportHtml } from '../../viewer/index.js';
import { type CliContext, parseCount } from '../context.js';
import { CliError, EXIT } from '../failure.js';
import { codeBlock, inertProse } from '../markdown.js';
import { timeText } from '../render.js';
import { escapedJson, jsonText, safe } from '../terminal.js';

const FORMATS = [
  'markdown',
  'json',
  'openai',
  'anthropic',
  'html',
  'pi',
  'claude-code',
  'codex',
] as const;
type Format = (typeof FORMATS)[number];

export async function exportCommand(
  context: CliContext,
  id: string,
  options: { format?: string; at?: string },
): Promise<void> {
  const format = (options.format ?? 'markdown') as Format;
  if (!FORMATS.includes(format)) {
    throw new CliError(
      `--format expects one of ${FORMATS.join(', ')}; found '${options.format}'`,
      EXIT.usage,
    );
  }
  if (format === 'html') return htmlExport(context, id, options.at);
  if (format === 'pi' || format === 'claude-code' || format === 'codex') {
    return harnessExport(context, id, format, options.at);
  }
  const session = await context.withReader((store) => inspectSession(store, id));
  const at = parseCount('--at', options.at) ?? session.seq - 1;
  if (at >= session.seq) {
    throw new CliError(
      `--at ${at} is past the end of session '${id}' (its last event is #${session.seq - 1})`,
      EXIT.usage,
    );
  }
  const messages = session.seq === 0 ? [] : session.messagesAt(at);
  const header = requestHeaderAt(session, at);
  // Exports are data for other programs, and documents for people: JSON escapes every control,
  // C1 and bidi character (losslessly), Markdown shows them as visible escapes.
  const out = context.terminal.out;
  switch (format) {
    case 'markdown':
      out.write(safe(markdown(session)));
      return;
    case 'json':
      out.write(`${jsonText({ id, at, header: header ?? null, messages })}\n`);
      return;
    case 'openai':
      out.write(`${jsonText(openaiBody(header, messages))}\n`);
      return;
    case 'anthropic':
      out.write(`${jsonText(anthropicBody(header, messages))}\n`);
      return;
  }
}

/**
 * The viewer page with the session as stored embedded: one file, opened from `file://`. It has
 * time travel of its own, so `--at` does not apply.
 */
async function htmlExport(context: CliContext, id: string, at: string | undefined): Promise<void> {
  if (at !== undefined) {
    throw new CliError(
      '--at does not apply to --format html: the page travels to any event itself',
      EXIT.usage,
    );
  }
  const loaded = await context.withReader((store) => store.load(id));
  context.terminal.out.write(exportHtml(loaded.header, loaded.events));
}

/**
 * The session as a file its harness resumes, on stdout (its whole log: a harness resumes from the
 * end), a crashed turn closed as repair would close it; what the format cannot hold, and where
 * Claude Code looks for the file, on stderr.
 */
async function harnessExport(
  context: CliContext,
  id: string,
  format: 'pi' | 'claude-code' | 'codex',
  at: string | undefined,
): Promise<void> {
  if (at !== undefined) {
    throw new CliError(
      `--at does not apply to --format ${format}: the harness resumes a whole session`,
      EXIT.usage,
    );
  }
  const session = await context.withReader((store) => inspectSession(store, id));
  const file =
    format === 'pi'
      ? exportPi(session)
      : format === 'codex'
        ? exportCodex(session)
        : exportClaudeCode(session);
  context.terminal.out.write(escapedJson(file.text));
  for (const loss of file.losses) {
    context.terminal.note(`not carried over to ${format}: ${loss.count} × ${loss.what}`);
  }
  if (format === 'codex' && 'path' in file && 'sessionId' in file) {
    context.terminal.note(
      `save it as ~/.codex/${file.path} (under $CODEX_HOME if you set it), then run codex resume ${file.sessionId}`,
    );
  } else if ('sessionId' in file) {
    context.terminal.note(
      `save it as ${file.sessionId}.jsonl in the folder of ~/.claude/projects that holds the project's other sessions, then run claude --resume ${file.sessionId} from the project`,
    );
  }
}

function markdown(session: Session): string {
  const lines = [
    `# Session ${inertProse(session.id.replace(/\s+/g, ' '))}`,
    '',
    `Created ${timeText(session.header.createdAt)} · ${session.seq} events`,
    '',
  ];
  for (const entry of session.transcript()) {
    if (entry.kind === 'replacement') {
      const what = entry.type === 'tool/result' ? 'Tool result rewritten' : 'History replaced';
      lines.push(
        `> **${what}** at #${entry.seq} (replaces ${entry.shadowedSeqs.length} entries)`,
        '',
      );
      if (entry.message !== null) lines.push(quote(inertProse(formatMessage(entry.message))), '');
      continue;
    }
    const role = { user: 'User', assistant: 'Assistant', tool: 'Tool' }[entry.message.role];
    lines.push(
      `### ${role} · #${entry.seq}`,
      '',
      entry.message.role === 'tool'
        ? codeBlock(formatMessage(entry.message))
        : inertProse(formatMessage(entry.message)),
      '',
    );
  }
  return `${lines.join('\n')}\n`;
}

function quote(text: string): string {
  return text
    .split('\n')
    .map((line) => `> ${line}`)
    .join('\n');
}

/** The body of an OpenAI chat-completions request. */
export function openaiBody(
  header: RequestHeaderData | undefined,
  messages: readonly Message[],
): JsonValue {
  const out: JsonValue[] = [];
  if (header?.system !== undefined) out.push({ role: 'system', content: header.system });
  for (const message of messages) {
    if (message.role === 'user') {
      out.push({ role: 'user', content: message.content.map(openaiPart) });
    } else if (message.role === 'assistant') {
      const text = message.content
        .filter((block) => block.type === 'text')
        .map((block) => block.text)
        .join('');
      const calls = message.content.flatMap((block) =>
        block.type === 'tool-call'
          ? [
              {
                id: block.id,
                type: 'function',
                function: { name: block.name, arguments: block.arguments },
              },
            ]
          : [],
      );
      out.push({
        role: 'assistant',
        content: text === '' ? null : text,
        ...(calls.length === 0 ? {} : { tool_calls: calls }),
      });
    } else {
      const result = message.content[0];
      out.push({ role: 'tool', tool_call_id: result.toolCallId, content: resultText(result) });
    }
  }
  return {
    ...(header === undefined ? {} : { model: header.model }),
    messages: out,
    ...(header?.tools === undefined
      ? {}
      : {
          tools: header.tools.map((tool) => ({
            type: 'function',
            function: {
              name: tool.name,
              ...(tool.description === undefined ? {} : { description: tool.description }),
              parameters: tool.parameters,
            },
          })),
        }),
  };
}

function openaiPart(block: ContentBlock): JsonValue {
  if (block.type === 'image') {
    return {
      type: 'image_url',
      image_url: { url: block.url ?? `data:${block.mediaType};base64,${block.data ?? ''}` },
    };
  }
  return { type: 'text', text: block.type === 'text' ? block.text : '' };
}

/** The body of an Anthropic messages request (consecutive tool results merged into one user turn). */
export function anthropicBody(
  header: RequestHeaderData | undefined,
  messages: readonly Message[],
): JsonValue {
  const out: { role: 'user' | 'assistant'; content: JsonValue[] }[] = [];
  const push = (role: 'user' | 'assistant', content: JsonValue[]): void => {
    const last = out[out.length - 1];
    if (last?.role === role) last.content.push(...content);
    else out.push({ role, content });
  };
  for (const message of messages) {
    if (message.role === 'assistant') {
      push(
        'assistant',
        message.content.flatMap((block): JsonValue[] => {
          switch (block.type) {
            case 'reasoning': {
              // Anthropic accepts thinking only with the signature it issued; reasoning from
              // other providers has none and is left out.
              const signature = (
                block.providerMetadata?.anthropic as { signature?: string } | undefined
              )?.signature;
              return signature === undefined
                ? []
                : [{ type: 'thinking', thinking: block.text, signature }];
            }
            case 'tool-call':
              return [
                {
                  type: 'tool_use',
                  id: block.id,
                  name: block.name,
                  input: toolCallInput(block.arguments),
                },
              ];
            default:
              return [anthropicPart(block)];
          }
        }),
      );
    } else if (message.role === 'tool') {
      const result = message.content[0];
      push('user', [
        {
          type: 'tool_result',
          tool_use_id: result.toolCallId,
          content: resultText(result),
          ...(result.isError === true ? { is_error: true } : {}),
        },
      ]);
    } else {
      push('user', message.content.map(anthropicPart));
    }
  }
  return {
    ...(header === undefined ? {} : { model: header.model }),
    ...(header?.system === undefined ? {} : { system: header.system }),
    messages: out,
    ...(header?.tools === undefined
      ? {}
      : {
          tools: header.tools.map((tool) => ({
            name: tool.name,
            ...(tool.description === undefined ? {} : { description: tool.description }),
            input_schema: tool.parameters,
          })),
        }),
  };
}

function anthropicPart(block: ContentBlock): JsonValue {
  if (block.type === 'image') {
    return block.url !== undefined
      ? { type: 'image', source: { type: 'url', url: block.url } }
      : {
          type: 'image',
          source: { type: 'base64', media_type: block.mediaType, data: block.data ?? '' },
        };
  }
  return { type: 'text', text: block.type === 'text' ? block.text : '' };
}

function resultText(result: ToolResultBlock): string {
  return result.content
    .map((item) => (item.type === 'text' ? item.text : `[image ${item.mediaType}]`))
    .join('\n');
}
