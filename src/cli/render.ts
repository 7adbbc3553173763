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
  // The range is a stretch of the surface, not of the log: an entry placed earlier on the
  // surface (a pruned result) may have a later seq, and the events between are not in it.
  const range =
    entry.shadowedSeqs.length === 1
      ? `#${entry.shadowedSeqs[0]}`
      : `${entry.shadowedSeqs.length} surface entries, #${entry.start} to #${entry.end} in surface order (${seqList(entry.shadowedSeqs)})`;
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

/** A turn of a session as `show` introduces it. */
export interface TurnSpan {
  readonly turn: number;
  readonly startSeq: number;
  readonly startTime: number;
  /** The seq and time of its `turn/end`; absent while the turn is open. */
  readonly endSeq?: number;
  readonly endTime?: number;
  /** How it ended (`completed`, `interrupted`, `cancelled`...). */
  readonly outcome?: string;
  /** `provider:model` of each model that answered in it, in the order they first did. */
  readonly models: readonly string[];
}

/** The turns of a log, in order, from their `turn/start` and `turn/end` events. */
export function turnSpans(events: readonly SessionEvent[]): TurnSpan[] {
  const spans: TurnSpan[] = [];
  let open: { turn: number; startSeq: number; startTime: number; models: string[] } | undefined;
  for (const event of events) {
    if (event.type === 'turn/start') {
      if (open !== undefined) spans.push(open);
      open = { turn: event.data.turn, startSeq: event.seq, startTime: event.time, models: [] };
    } else if (event.type === 'assistant/message' && open !== undefined) {
      const source = event.data.message.source;
      const model = source?.kind === 'model' ? `${source.provider}:${source.model}` : undefined;
      if (model !== undefined && !open.models.includes(model)) open.models.push(model);
    } else if (event.type === 'turn/end' && open !== undefined) {
      spans.push({
        ...open,
        endSeq: event.seq,
        endTime: event.time,
        outcome: event.data.reason.kind,
      });
      open = undefined;
    }
  }
  if (open !== undefined) spans.push(open);
  return spans;
}

/** The line that opens a turn in `show`: its number, models, start, duration and outcome. */
export function turnSeparator(terminal: Terminal, span: TurnSpan): string {
  const parts = [
    `turn ${span.turn}`,
    span.models.length === 0 ? 'no model call' : span.models.join(', '),
    timeText(span.startTime),
    span.endTime === undefined ? 'still open' : durationText(span.endTime - span.startTime),
    ...(span.outcome === undefined || span.outcome === 'completed' ? [] : [span.outcome]),
  ];
  return terminal.style('cyan', safeLine(`── ${parts.join(' · ')} ──`, 200));
}

/** A duration for people: `850 ms`, `4.2 s`, `12 min 5 s`, `3 h 20 min`, `2 d 4 h`. */
export function durationText(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '-';
  if (ms < 1_000) return `${Math.round(ms)} ms`;
  const seconds = ms / 1_000;
  if (seconds < 60) return `${seconds < 10 ? seconds.toFixed(1) : Math.round(seconds)} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min ${Math.floor(seconds % 60)} s`;
  const hours = Math.floor(minutes / 60);
  if (hours < 24) return `${hours} h ${minutes % 60} min`;
  return `${Math.floor(hours / 24)} d ${hours % 24} h`;
}
