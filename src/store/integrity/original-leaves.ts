/**
 * The leaf each event had when it was appended: its own leaf, or, for an event a redaction
 * erased since, the leaf the redaction recorded. The chain is over these, so erasure never
 * breaks it, while an event altered after its redaction still shows.
 */
import type { ErasedEvent, SessionEvent } from '../../core/index.js';
import { type DigestText, isDigestText, leafDigest } from './chain.js';

/** How an event's original leaf was found. */
export type OriginalLeaf =
  | { readonly kind: 'own'; readonly leaf: DigestText }
  /** Erased: the leaf is the one the first redaction recorded as `before`. */
  | { readonly kind: 'redacted'; readonly leaf: DigestText }
  /** Named by a redaction whose erasure has not reached the stored bytes yet (a crash). */
  | { readonly kind: 'pending'; readonly leaf: DigestText; readonly redaction: number }
  /** Neither what the redactions recorded before nor after: altered since. */
  | { readonly kind: 'mismatch'; readonly redaction: number };

/** Each erased seq's redactions, in log order: `[redaction seq, what it recorded]`. */
export type RedactionIndex = ReadonlyMap<number, ReadonlyArray<readonly [number, ErasedEvent]>>;

/** The redactions of a log, by erased seq. */
export function indexRedactions(events: readonly SessionEvent[]): RedactionIndex {
  const index = new Map<number, Array<readonly [number, ErasedEvent]>>();
  for (const event of events) {
    if (event.type !== 'log/redaction') continue;
    for (const erased of event.data.erased) {
      const list = index.get(erased.seq) ?? [];
      list.push([event.seq, erased]);
      index.set(erased.seq, list);
    }
  }
  return index;
}

/**
 * The original leaf of `event`. Its redactions are undone from the last: the stored event must
 * be what the last one left (`after`), which is what the one before it erased, and so on back to
 * the first one's `before`. A stored event equal to a redaction's `before` is one whose erasure
 * a crash interrupted.
 */
export function originalLeaf(event: SessionEvent, index: RedactionIndex): OriginalLeaf {
  const own = leafDigest(event);
  const redactions = index.get(event.seq);
  if (redactions === undefined) return { kind: 'own', leaf: own };
  let current = own;
  let pending: number | undefined;
  for (let i = redactions.length - 1; i >= 0; i--) {
    const [at, erased] = redactions[i] as readonly [number, ErasedEvent];
    if (current === erased.after) current = erased.before;
    else if (current === erased.before) pending ??= at;
    else return { kind: 'mismatch', redaction: at };
  }
  const leaf = current;
  if (!isDigestText(leaf)) {
    return { kind: 'mismatch', redaction: (redactions[0] as readonly [number, ErasedEvent])[0] };
  }
  return pending === undefined
    ? { kind: 'redacted', leaf }
    : { kind: 'pending', leaf, redaction: pending };
}
