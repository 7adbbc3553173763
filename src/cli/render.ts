/**
 * Human renderings of messages and events, for show, surface, log and why. Everything from the
 * log passes through `safe`/`safeLine` before it reaches the terminal.
 */
import { isElidedChunkData } from '../core/elided.js';
import {
  dataAsJson,
  formatMessage,
  type Message,
  type SessionEvent,
  type TranscriptEntry,
} from '../core/index.js';
import { safe, safeLine, type Terminal } from './terminal.js';

const ROLE_STYLE = { user: 'cyan', assistant: 'green', tool: 'yellow' } as const;

/** One message as `#seq role  text` (multi-line text indented). */
export function messageBlock(
  terminal: Terminal,
  seq: number,
  message: Message,
  maxLines = 0,
): string {
  const label = terminal.style(ROLE_STYLE[message.role], message.role.padEnd(9));
  const lines = clipped(safe(`${queuedMark(message)}${formatMessage(message)}`), maxLines);
  const indent = ' '.repeat(8 + 10);
  return `${terminal.style('dim', `#${seq}`.padEnd(8))}${label} ${lines.join(`\n${indent}`)}`;
}

/** Says how a message typed while a turn ran reached the model (`Agent.steer`, `followUp`). */
function queuedMark(message: Message): string {
  if (message.role !== 'user') return '';
  if (message.source.kind === 'steer') return '(steered into the running turn) ';
  if (message.source.kind === 'follow-up') return '(follow-up) ';
  return '';
}

/** Longest line a clipped block shows: a 10 MB single-line tool output is one line too. */
const MAX_LINE_CHARS = 400;

/** `text` as lines, at most `maxLines` of at most {@link MAX_LINE_CHARS} (0: all of it). */
function clipped(text: string, maxLines: number): string[] {
  const lines = text.split('\n');
  if (maxLines <= 0) return lines;
  const shown = lines.slice(0, maxLines).map((line) => {
    if (line.length <= MAX_LINE_CHARS) return line;
    // Never cut between the two halves of a surrogate pair.
    const end = /[\ud800-\udbff]/.test(line.charAt(MAX_LINE_CHARS - 1))
      ? MAX_LINE_CHARS - 1
      : MAX_LINE_CHARS;
    return `${line.slice(0, end)}… (${line.length - end} more characters)`;
  });
  if (lines.length > maxLines) shown.push(`… (${lines.length - maxLines} more lines)`);
  return shown;
}

/** One transcript entry. */
export function transcriptBlock(terminal: Terminal, entry: TranscriptEntry, maxLines = 0): string {
  if (entry.kind === 'message') {
    const text = messageBlock(terminal, entry.seq, entry.message, maxLines);
    return entry.onSurface
      ? text
      : `${text}\n${' '.repeat(18)}${terminal.style('dim', `(no longer seen by the model: replaced by #${entry.shadowedBy})`)}`;
  }
  const what = entry.type === 'tool/result' ? 'tool result rewritten' : 'history replaced';
  const range =
    entry.shadowedSeqs.length === 1
      ? `#${entry.shadowedSeqs[0]}`
      : `${entry.shadowedSeqs.length} entries (#${entry.start} … #${entry.end})`;
  const header = terminal.style('magenta', `── #${entry.seq} ${what}: ${range} ──`);
  return entry.message === null
    ? header
    : `${header}\n${messageBlock(terminal, entry.seq, entry.message, 12)}`;
}

/** A one-line summary of an event, for log and why. */
export function eventLine(event: SessionEvent, width = 100): string {
  return safeLine(`${event.type} ${dataSummary(event)}`, width);
}

function dataSummary(event: SessionEvent): string {
  switch (event.type) {
    case 'assistant/chunk': {
      if (isElidedChunkData(event.data))
        return `(body not loaded: ${event.data.elided.bytes} bytes)`;
      const { chunk } = event.data;
      const delta = typeof chunk.delta === 'string' ? ` ${JSON.stringify(chunk.delta)}` : '';
      return `${chunk.type}${delta}`;
    }
    case 'user/message':
    case 'context/message':
      return JSON.stringify(formatMessage(event.data));
    case 'assistant/message':
    case 'tool/result':
      return JSON.stringify(formatMessage(event.data.message));
    case 'turn/end':
      return `turn ${event.data.turn} ${JSON.stringify(event.data.reason)}`;
    default:
      return JSON.stringify(dataAsJson(event));
  }
}

/** `#a–#b` for a sorted run of seqs, or a comma list. */
export function seqList(seqs: readonly number[]): string {
  if (seqs.length === 0) return '(none)';
  const sorted = [...seqs].sort((a, b) => a - b);
  const runs: string[] = [];
  let start = sorted[0] ?? 0;
  let previous = start;
  for (const seq of [...sorted.slice(1), Number.NaN]) {
    if (seq === previous + 1) {
      previous = seq;
      continue;
    }
    runs.push(start === previous ? `#${start}` : `#${start}–#${previous}`);
    start = seq;
    previous = seq;
  }
  return runs.join(', ');
}

/** An ISO-like local time, to the second. */
export function timeText(ms: number | undefined): string {
  if (ms === undefined || !Number.isFinite(ms)) return '-';
  return new Date(ms).toISOString().replace('T', ' ').slice(0, 19);
}
