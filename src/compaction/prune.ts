/**
 * Tool-result pruning: old, large tool results are replaced on the surface by a head/tail
 * excerpt with a marker saying how much was cut and which event holds the original. One
 * `tool/result` replace per result (`start === end`, citing the original), every other data
 * field kept. No model call. Idempotent: only results that entered by appending are pruned, so a
 * result already rewritten (by a prune or anything else) is never pruned again.
 */

import { lastTurnNumber, type Session, type ToolResultData } from '../core/index.js';
import { textChars as blockChars, excerptBlocks } from '../model/index.js';
import { countOption } from './errors.js';
import { priceSurface } from './surface-entries.js';

/** Options of {@link pruneToolResults}. */
export interface PruneOptions {
  /** Results of the last this-many turns are never pruned (default 2). */
  readonly keepRecentTurns?: number;
  /** Only results whose text is longer than this, in characters, are pruned (default 2,000). */
  readonly minChars?: number;
  /** Characters kept from the start of the text (default 600). */
  readonly headChars?: number;
  /** Characters kept from the end of the text (default 300). */
  readonly tailChars?: number;
}

/** What {@link pruneToolResults} did. */
export interface PruneResult {
  /** The bracket id (absent when nothing was pruned, and nothing appended). */
  readonly id?: string;
  /** Seqs of the original results that were pruned, and of their replacements. */
  readonly prunedSeqs: readonly number[];
  readonly replacementSeqs: readonly number[];
  readonly charsBefore: number;
  readonly charsAfter: number;
  /** Estimated tokens of the whole surface before and after. */
  readonly tokensBefore: number;
  readonly tokensAfter: number;
}

/** Prunes old, large tool results of `session`; see the module notes. */
export function pruneToolResults(session: Session, options: PruneOptions = {}): PruneResult {
  const keepRecentTurns = countOption('keepRecentTurns', options.keepRecentTurns, 2);
  const minChars = countOption('minChars', options.minChars, 2000);
  const headChars = countOption('headChars', options.headChars, 600);
  const tailChars = countOption('tailChars', options.tailChars, 300);
  const oldestKeptTurn = lastTurnNumber(session) - keepRecentTurns + 1;

  const before = priceSurface(session);
  const candidates: { seq: number; data: ToolResultData; chars: number }[] = [];
  for (const entry of before.entries) {
    const { event } = entry;
    if (event.type !== 'tool/result' || event.surfaceOp !== 'append') continue;
    const data = event.data;
    if (typeof data.turn !== 'number' || data.turn >= oldestKeptTurn) continue;
    const chars = blockChars(data.message.content[0].content);
    if (chars > minChars && chars > headChars + tailChars)
      candidates.push({ seq: entry.seq, data, chars });
  }
  if (candidates.length === 0) {
    return {
      prunedSeqs: [],
      replacementSeqs: [],
      charsBefore: 0,
      charsAfter: 0,
      tokensBefore: before.totalTokens,
      tokensAfter: before.totalTokens,
    };
  }

  const id = crypto.randomUUID();
  session.append('compaction/start', {
    id,
    kind: 'prune',
    results: candidates.length,
    keepRecentTurns,
    minChars,
    tokensBefore: before.totalTokens,
  });
  const replacementSeqs: number[] = [];
  let charsBefore = 0;
  let charsAfter = 0;
  for (const { seq, data, chars } of candidates) {
    const block = data.message.content[0];
    const content = excerptBlocks(block.content, chars, {
      headChars,
      tailChars,
      marker: (cut, total) =>
        `\n[… ${cut.toLocaleString('en-US')} of ${total.toLocaleString('en-US')} characters pruned from this tool result; the full result is event #${seq} of the session log (the recall tool returns it) …]\n`,
    });
    const replacement: ToolResultData = {
      ...data,
      message: { ...data.message, content: [{ ...block, content }] },
    };
    const event = session.append('tool/result', replacement, {
      surfaceOp: { op: 'replace', start: seq, end: seq },
      sourceEventSeqs: [seq],
    });
    replacementSeqs.push(event.seq);
    charsBefore += chars;
    charsAfter += blockChars(content);
  }
  const tokensAfter = priceSurface(session).totalTokens;
  session.append('compaction/end', {
    id,
    kind: 'prune',
    pruned: candidates.length,
    charsBefore,
    charsAfter,
    tokensBefore: before.totalTokens,
    tokensAfter,
  });
  return {
    id,
    prunedSeqs: candidates.map((candidate) => candidate.seq),
    replacementSeqs,
    charsBefore,
    charsAfter,
    tokensBefore: before.totalTokens,
    tokensAfter,
  };
}
