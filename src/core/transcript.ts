/**
 * The human transcript: what a reader saw, in log order. Built from the log, not the surface,
 * so a compaction never erases conversation a person already read.
 */
import { deriveEventMessage } from './derive.js';
import type { SessionEvent, SurfaceEventType } from './events.js';
import type { Message } from './messages.js';
import { replaySurface, type SessionSurface, type SurfaceReplacement } from './surface.js';

/** A message that entered the surface by appending. */
export interface TranscriptMessage {
  readonly kind: 'message';
  readonly seq: number;
  readonly time: number;
  readonly type: SurfaceEventType;
  readonly message: Message;
  /** Whether the model still sees this message. */
  readonly onSurface: boolean;
  /** The replace that removed it from the surface, when one did. */
  readonly shadowedBy?: number;
  readonly event: SessionEvent;
}

/** A marker where a replace rewrote history (a compaction summary, a pruned tool result). */
export interface TranscriptReplacement {
  readonly kind: 'replacement';
  readonly seq: number;
  readonly time: number;
  readonly type: SurfaceEventType;
  /** The message that took the range's place (`null` for an empty assistant message). */
  readonly message: Message | null;
  readonly start: number;
  readonly end: number;
  /** The seqs this replace removed from the surface, in surface order. */
  readonly shadowedSeqs: readonly number[];
  readonly onSurface: boolean;
  readonly shadowedBy?: number;
  readonly event: SessionEvent;
}

/** One entry of {@link Session.transcript}. */
export type TranscriptEntry = TranscriptMessage | TranscriptReplacement;

/**
 * Builds the transcript of a validated log whose current surface is `surface` (a hole is an
 * elided chunk, which is never in a transcript).
 */
export function buildTranscript(
  log: readonly (SessionEvent | undefined)[],
  surface: SessionSurface,
): readonly TranscriptEntry[] {
  const replacements = new Map<number, SurfaceReplacement>();
  const shadowedBy = new Map<number, number>();
  replaySurface(log, log.length - 1, (replacement) => {
    replacements.set(replacement.seq, replacement);
    for (const seq of replacement.shadowedSeqs) shadowedBy.set(seq, replacement.seq);
  });
  const entries: TranscriptEntry[] = [];
  for (const event of log) {
    if (event?.surfaceOp === undefined) continue;
    const common = {
      seq: event.seq,
      time: event.time,
      type: event.type as SurfaceEventType,
      onSurface: surface.has(event.seq),
      event,
    };
    const by = shadowedBy.get(event.seq);
    const extra = by === undefined ? {} : { shadowedBy: by };
    const replacement = replacements.get(event.seq);
    const message = deriveEventMessage(event);
    if (replacement !== undefined) {
      entries.push(
        Object.freeze({
          kind: 'replacement' as const,
          ...common,
          ...extra,
          message,
          start: replacement.start,
          end: replacement.end,
          shadowedSeqs: Object.freeze([...replacement.shadowedSeqs]),
        }),
      );
    } else if (message !== null) {
      entries.push(Object.freeze({ kind: 'message' as const, ...common, ...extra, message }));
    }
  }
  return Object.freeze(entries);
}
