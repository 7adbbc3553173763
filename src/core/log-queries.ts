/**
 * Questions about a session's log that the loop, compaction, crash handling and the CLI all ask:
 * which turn came last, whether the log stops inside a turn, which request header is in effect.
 * Each scans backwards from the tail, where the answer almost always is.
 */
import type { RequestHeaderData } from './events.js';
import type { Session } from './session.js';

/** The turn number of the last `turn/start` in the log (0 for none). */
export function lastTurnNumber(session: Session): number {
  for (let seq = session.seq - 1; seq >= 0; seq--) {
    const event = session.event(seq);
    if (event?.type === 'turn/start') {
      const turn = (event.data as { turn?: unknown }).turn;
      return typeof turn === 'number' ? turn : 0;
    }
  }
  return 0;
}

/** True when the last `turn/start` has no `turn/end` after it (a crashed or running turn). */
export function endsInsideTurn(session: Session): boolean {
  for (let seq = session.seq - 1; seq >= 0; seq--) {
    const type = session.event(seq)?.type;
    if (type === 'turn/end') return false;
    if (type === 'turn/start') return true;
  }
  return false;
}

interface HeaderLook {
  /** Every event below this seq has been looked at. */
  readonly scannedTo: number;
  readonly header: RequestHeaderData | undefined;
  /** `header` serialized, computed once per logged header. */
  text: string | undefined;
}

/**
 * The header in effect at the tail, per session, so the loop's per-step lookup scans only the
 * events appended since its last look instead of the whole log.
 */
const tailHeaders = new WeakMap<Session, HeaderLook>();

/**
 * The request header in effect right after event `seq`: the last `request/header` at or before
 * it (`session.seq - 1` for the one in effect now).
 */
export function requestHeaderAt(session: Session, seq: number): RequestHeaderData | undefined {
  const last = session.seq - 1;
  if (seq >= last) return tailHeader(session).header;
  for (let at = seq; at >= 0; at--) {
    const event = session.event(at);
    if (event?.type === 'request/header') return event.data;
  }
  return undefined;
}

/**
 * Whether `header` equals the request header in effect now, so a writer logs a header only
 * when it changes.
 */
export function isHeaderInEffect(session: Session, header: RequestHeaderData): boolean {
  const look = tailHeader(session);
  if (look.header === undefined) return false;
  // Headers are built by one function, so equal headers serialize to equal text; a header some
  // other writer logged with its keys in another order only costs one repeated header event.
  look.text ??= JSON.stringify(look.header);
  return look.text === JSON.stringify(header);
}

function tailHeader(session: Session): HeaderLook {
  const cached = tailHeaders.get(session);
  const end = session.seq;
  if (cached !== undefined && cached.scannedTo === end) return cached;
  const from = cached?.scannedTo ?? 0;
  let look: HeaderLook | undefined;
  for (let seq = end - 1; seq >= from; seq--) {
    const event = session.event(seq);
    if (event?.type === 'request/header') {
      look = {
        scannedTo: end,
        header: event.data,
        text: undefined,
      };
      break;
    }
  }
  look ??= { scannedTo: end, header: cached?.header, text: cached?.text };
  tailHeaders.set(session, look);
  return look;
}
