/**
 * `palimpsest export ID --format markdown|json|openai|anthropic|html|pi|claude-code|codex
 * [--at SEQ]`: the transcript as Markdown, or the messages the model sees, in palimpsest's own
 * JSON or as the body of an OpenAI chat-completions or Anthropic messages request, the web viewer
 * as one HTML file, or the session as a file a harness resumes (pi, Claude Code, Codex), with
 * what it could not hold on stderr.
 */

import { anthropicBody, openaiBody } from '../../agent/index.js';
import { formatMessage, requestHeaderAt, type Session } from '../../core/index.js';
import { exportClaudeCode, exportCodex, exportPi } from '../../import/index.js';
import { inspectSession } from '../../store/index.js';
import { exportHtml, sessionTree, verifyStatus } from '../../viewer/index.js';
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
  // What only the store can say (verify's checks, the forks and subagents around the session)
  // goes in as it is now, dated, so the file's session view has it without a server.
  const { loaded, verify, tree } = await context.withReader(async (store) => ({
    loaded: await store.load(id),
    verify: await verifyStatus(store, id),
    tree: await sessionTree(store, id),
  }));
  context.terminal.out.write(exportHtml(loaded.header, loaded.events, { verify, tree }));
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
