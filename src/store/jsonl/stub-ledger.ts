/**
 * The stubs of finished chunks a load elides (see `scan.ts`): the ledger of those no committed
 * `assistant/message` cites yet, with where their lines are, and the read-back that restores the
 * ones no message ever cites (the stream of a turn a crash left open, chunks a writer never
 * cited) to whole chunks.
 */

import { CitedSeqs } from '../../core/elided.js';
import type { ElidedLog } from '../../core/elided-log.js';
import type { SessionEvent } from '../../core/index.js';
import { CorruptLogError } from '../contract/errors.js';
import { coalesce } from '../contract/store-rules.js';
import { runEvents, runOf } from './chunk-run-line.js';
import type { FsFileHandle } from './fs.js';
import { readFully } from './line-reader.js';

/** The type of the events a load may elide. */
export const CHUNK_TYPE = 'assistant/chunk';

/** Whether `value` is an event record (a JSON object) at `seq`. */
export function isEventRecord(value: unknown, seq: number): value is SessionEvent {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    (value as { seq?: unknown }).seq === seq
  );
}

/**
 * The stubs that no committed message has cited yet, with where their lines are, so that the
 * ones no message ever cites can be read back. An entry is a line's stubs: `counts[i]` chunks
 * from `seqs[i]` on (one for a chunk line, a run's length for a run line). Citations are taken
 * at each commit, and entries whose stubs are all cited dropped then, so the ledger holds little
 * more than the open stream's lines.
 */
export class StubLedger {
  seqs: number[] = [];
  counts: number[] = [];
  offsets: number[] = [];
  lengths: number[] = [];
  /** What the committed messages cite. */
  readonly #cited = new CitedSeqs();
  /** The messages of the open batch, cited from once it commits. */
  #pendingMessages: SessionEvent[] = [];
  /** Ledger length after the last compaction (compactions are amortized O(1) per entry). */
  #compacted = 0;

  /** How many entries (lines) the ledger holds. */
  get length(): number {
    return this.seqs.length;
  }

  add(seq: number, count: number, offset: number, length: number): void {
    this.seqs.push(seq);
    this.counts.push(count);
    this.offsets.push(offset);
    this.lengths.push(length);
  }

  /** An assistant/message of the open batch. */
  noteMessage(message: SessionEvent): void {
    this.#pendingMessages.push(message);
  }

  /** The open batch committed: its messages' citations count. */
  commit(): void {
    for (const message of this.#pendingMessages) this.cite(message);
    this.#pendingMessages.length = 0;
    if (this.seqs.length >= 2 * this.#compacted + 1024) this.#compact();
  }

  /** The open batch did not commit: forgets its entries and messages. */
  drop(entries: number): void {
    this.seqs.length = entries;
    this.counts.length = entries;
    this.offsets.length = entries;
    this.lengths.length = entries;
    this.#pendingMessages.length = 0;
  }

  /** Counts the citations of a committed assistant/message. */
  cite(message: SessionEvent): void {
    this.#cited.cite(message);
  }

  isCited(seq: number): boolean {
    return this.#cited.has(seq);
  }

  /** Drops the entries whose stubs a committed message has all cited: they stay stubs for good. */
  #compact(): void {
    let kept = 0;
    for (let i = 0; i < this.seqs.length; i++) {
      const seq = this.seqs[i] as number;
      const count = this.counts[i] as number;
      let cited = 0;
      while (cited < count && this.isCited(seq + cited)) cited++;
      if (cited === count) continue;
      this.seqs[kept] = seq;
      this.counts[kept] = count;
      this.offsets[kept] = this.offsets[i] as number;
      this.lengths[kept] = this.lengths[i] as number;
      kept++;
    }
    this.drop(kept);
    this.#compacted = kept;
  }
}

/** Gaps up to this many bytes between unfinished chunks are read rather than skipped. */
const RESTORE_GAP_BYTES = 64 * 1024;
/** The most bytes one read-back covers (a single longer line is read on its own). */
const RESTORE_SPAN_BYTES = 4 * 1024 * 1024;

/**
 * Replaces the stubs that no `assistant/message` of the log cites by their chunks, read back
 * from the file (the committed part of a log never changes) in a few large reads.
 */
export async function restoreUnfinished(
  handle: FsFileHandle,
  file: string,
  events: ElidedLog,
  stubs: StubLedger,
): Promise<void> {
  const seqs: number[] = [];
  const starts: number[] = [];
  const ends: number[] = [];
  for (let i = 0; i < stubs.length; i++) {
    const first = stubs.seqs[i] as number;
    const offset = stubs.offsets[i] as number;
    const end = offset + (stubs.lengths[i] as number);
    for (let seq = first; seq < first + (stubs.counts[i] as number); seq++) {
      if (stubs.isCited(seq)) continue;
      seqs.push(seq);
      starts.push(offset);
      ends.push(end);
    }
  }
  for (const { first, last } of coalesce(starts, RESTORE_GAP_BYTES, ends, RESTORE_SPAN_BYTES)) {
    const spanStart = starts[first] as number;
    const span = Buffer.allocUnsafe((ends[last] as number) - spanStart);
    const read = await readFully(handle, span, spanStart);
    // The stubs of one run share its line: it is parsed once for all of them.
    let runLine = -1;
    let runChunks: readonly SessionEvent[] = [];
    for (let k = first; k <= last; k++) {
      const seq = seqs[k] as number;
      const from = (starts[k] as number) - spanStart;
      const to = (ends[k] as number) - spanStart;
      let value: unknown;
      try {
        if (from === runLine) value = runChunks[seq - (runChunks[0]?.seq ?? 0)];
        else value = to <= read ? JSON.parse(span.toString('utf8', from, to)) : undefined;
      } catch {
        value = undefined;
      }
      if (value !== undefined && from !== runLine && !isEventRecord(value, seq)) {
        const run = runOf(value, (value as { run?: { seq?: unknown } }).run?.seq as number);
        const chunks = run === undefined || typeof run === 'string' ? undefined : runEvents(run);
        if (chunks !== undefined && typeof chunks !== 'string') {
          runLine = from;
          runChunks = chunks;
          value = chunks[seq - (chunks[0]?.seq ?? 0)];
        }
      }
      if (!isEventRecord(value, seq) || value.type !== CHUNK_TYPE) {
        throw new CorruptLogError({
          file,
          offset: spanStart + from,
          reason: `the chunk at seq ${seq} read back differently than it was scanned (the log changed while it was loaded)`,
        });
      }
      events.restore(seq, value);
    }
  }
}
