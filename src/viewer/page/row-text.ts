/**
 * What a row says: its label, its text, its note and its token estimate, computed from the
 * event when the row scrolls into sight (never for all 100,000 rows at once).
 */
import { estimateMessageTokens, replaceOpOf } from '../../core/index.js';
import { formatMessage } from '../../core/message-text.js';
import type { Row, ViewedSession } from './state.js';
import { excerpt, seqRange } from './text.js';

/** The words of one row. */
export interface RowText {
  readonly label: string;
  readonly text: string;
  readonly note?: string;
  readonly tokens?: number;
}

/** Text of the first chunks of a run: enough for a row, without joining 10,000 deltas. */
function chunkText(viewed: ViewedSession, seqs: readonly number[]): string {
  const parts: string[] = [];
  for (const seq of seqs.slice(0, 64)) {
    const chunk = (viewed.dataOf(seq) as { chunk?: { delta?: unknown; text?: unknown } })?.chunk;
    const delta = chunk?.delta ?? chunk?.text;
    if (typeof delta === 'string') parts.push(delta);
  }
  return parts.join('');
}

/** A replaced range, as its row says it: how many messages, which seqs. */
export function replacementNote(viewed: ViewedSession, seq: number): string | undefined {
  // Only a replace has a note: the replay behind `replacements()` waits until one is in sight.
  const event = viewed.event(seq);
  if (event === undefined || replaceOpOf(event) === undefined) return undefined;
  const replacement = viewed.replacements().get(seq);
  if (replacement === undefined) return undefined;
  const shadowed = [...replacement.shadowedSeqs].sort((a, b) => a - b);
  if (viewed.event(seq)?.type === 'tool/result') {
    return `pruned: excerpt of ${seqRange(shadowed)}`;
  }
  return `replaces ${shadowed.length} messages, ${seqRange(shadowed)}`;
}

function eventSummary(viewed: ViewedSession, seq: number): string {
  const data = viewed.dataOf(seq);
  if (data === undefined) return '(stream chunk: its body is loading)';
  const text = JSON.stringify(data) ?? '';
  return excerpt(text.length > 2000 ? text.slice(0, 2000) : text);
}

/** The words of `row`. */
export function rowText(viewed: ViewedSession, row: Row): RowText {
  const event = viewed.event(row.seq);
  if (event === undefined) return { label: '?', text: '' };
  if (row.kind === 'chunks') {
    const seqs = row.seqs ?? [row.seq];
    return {
      label: 'chunks',
      text: excerpt(chunkText(viewed, seqs)),
      note: `${seqs.length} stream chunks ${seqRange(seqs)}`,
    };
  }
  const message = viewed.message(row.seq);
  if (row.kind === 'marker') {
    const what = event.type === 'tool/result' ? 'tool result rewritten' : 'history replaced';
    return {
      label: what,
      text: message === null ? '' : excerpt(formatMessage(message)),
      ...noted(replacementNote(viewed, row.seq)),
    };
  }
  if (message === null || row.kind === 'event') {
    return {
      label: event.type,
      text: message === null ? eventSummary(viewed, row.seq) : excerpt(formatMessage(message)),
    };
  }
  return {
    label: message.role,
    text: excerpt(formatMessage(message)),
    tokens: estimateMessageTokens(message),
    ...noted(replacementNote(viewed, row.seq)),
  };
}

function noted(note: string | undefined): { note?: string } {
  return note === undefined ? {} : { note };
}
