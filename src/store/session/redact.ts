/**
 * Erasure that keeps provenance: `redact` replaces content of chosen events with placeholders,
 * appends a `log/redaction` that says which, why, and what each event's leaf digest was, and has
 * the store write the log anew so the erased bytes are gone. The chain stays verifiable, the
 * session still loads, folds and verifies, and every reader shows where content was erased.
 */
import {
  contentMatches,
  dataAsJson,
  type ErasedEvent,
  InvalidArgumentError,
  type JsonObject,
  type JsonValue,
  jsonEqual,
  type RedactionData,
  redactedData,
  Session,
  type SessionEvent,
} from '../../core/index.js';
import type { SessionStore } from '../contract/session-store.js';
import { leafDigest } from '../integrity/chain.js';
import { ChainTracker } from '../integrity/checkpoint.js';
import type { CheckpointSigner } from '../integrity/signature.js';
import { openSession } from './open-session.js';
import { forgetInSearchIndex } from './search.js';

/** Which events to erase: by seq, every event whose content matches, or a tagged subject's. */
export type RedactTarget =
  /** Erase everything these events say. */
  | { readonly seqs: readonly number[] }
  /** Erase each match (a `g` pattern) wherever content holds one. */
  | { readonly match: RegExp }
  /**
   * Erase everything tagged with this subject: the whole session when its header tags it
   * (`metadata.subject` or one of `metadata.subjects`), else each event tagged when it was
   * appended (`subject` or `subjects` in its data, or in its message's `source`).
   */
  | { readonly subject: string };

/** Options of {@link redact}. */
export interface RedactOptions {
  /** Why (a ticket, a policy): recorded in the redaction, never erased, so no personal data. */
  readonly reason: string;
  /** The redaction's time (default `Date.now`). */
  readonly clock?: () => number;
  /**
   * Append a checkpoint right after the redaction, so it is covered by the chain at once:
   * `true` (the default when the session holds a checkpoint already), `false`, or a signer.
   */
  readonly checkpoint?: boolean | CheckpointSigner;
}

/** What {@link redact} did. */
export interface RedactReport {
  readonly session: string;
  /** The seq of the `log/redaction` appended; `undefined` when nothing matched (nothing written). */
  readonly redaction: number | undefined;
  /** The seqs whose content was erased. */
  readonly erased: readonly number[];
  /**
   * Events that cite an erased one and still hold content of their own (a compaction summary,
   * say): they may repeat what was erased. Erase them too if they do.
   */
  readonly derived: readonly number[];
}

/** The types whose events are the chain's own record: never erased. */
const RECORD_TYPES: ReadonlySet<string> = new Set(['log/redaction', 'log/checkpoint']);
/** Types that hold a copy of what the event citing them says: erased with it. */
const COPY_TYPES: ReadonlySet<string> = new Set([
  'assistant/chunk',
  'queue/steer',
  'queue/follow-up',
]);

/**
 * Erases content from a stored session and records the erasure: takes the writer lock (a live
 * writer holding the session is a `LockedError`), repairs a turn a crash left open, replaces the
 * content of the chosen events with `[redacted]` placeholders (see `redactedData`), and writes
 * the log anew with a `log/redaction` appended, in one atomic store write. With each erased
 * assistant message go the stream chunks it was built from and the tool calls it made; with
 * each erased tool result, the pruned versions of it.
 *
 * @example
 * ```ts
 * import { MemoryStore, openSession, redact } from 'palimpsest/store';
 *
 * const store = new MemoryStore();
 * const live = await openSession(store, 'support-1');
 * live.append('turn/start', { turn: 1 });
 * live.append(
 *   'user/message',
 *   { id: 'u1', role: 'user', content: [{ type: 'text', text: 'I am ada@example.com' }], source: { kind: 'user' } },
 *   { surfaceOp: 'append' },
 * );
 * live.append('turn/end', { turn: 1, reason: { kind: 'completed' } });
 * await live.close();
 * const report = await redact(store, 'support-1', { match: /[\w.]+@[\w.]+/g }, { reason: 'GDPR request 17' });
 * console.log(report.erased); // [1]
 * const { events } = await store.load('support-1');
 * console.log(JSON.stringify(events[1]?.data).includes('ada@')); // false
 * console.log(events[3]?.type); // 'log/redaction'
 * ```
 */
export async function redact(
  store: SessionStore,
  id: string,
  target: RedactTarget,
  options: RedactOptions,
): Promise<RedactReport> {
  if (typeof options.reason !== 'string' || options.reason.trim() === '') {
    throw new InvalidArgumentError(
      'expected a reason for the redaction (a ticket, a policy), found none',
    );
  }
  const live = await openSession(store, id, { create: false, durability: { mode: 'each' } });
  try {
    const events = live.events;
    const pattern = 'match' in target ? target.match : undefined;
    const chosen = chooseEvents(live, target);
    const { all: erasedSeqs, whole } = withCopies(events, chosen);
    const replaced = new Map<number, JsonValue>();
    for (const seq of erasedSeqs) {
      const event = events[seq] as SessionEvent;
      // A stream chunk or a pruned excerpt of what is erased goes whole: a match may be split
      // across two chunks, or cut by the excerpt, and then no pattern finds its pieces.
      const data = redactedData(event.data, whole.has(seq) ? undefined : pattern);
      if (!jsonEqual(data, event.data)) replaced.set(seq, data);
    }
    const erasedList = [...replaced.keys()].sort((a, b) => a - b);
    const derived = derivedFrom(events, replaced);
    if (erasedList.length === 0) {
      await live.close();
      return { session: id, redaction: undefined, erased: [], derived };
    }
    const erased: ErasedEvent[] = [];
    const rewritten = events.map((event) => {
      const data = replaced.get(event.seq);
      if (data === undefined) return event;
      // Checked below: the rewritten log is admitted as a seed before anything is written.
      const after = { ...event, data } as SessionEvent;
      erased.push({
        seq: event.seq,
        before: leafDigest(event),
        after: leafDigest(after),
      });
      return after;
    });
    // The rewritten log goes through a session's admission: a placeholder that broke a data
    // shape would be refused here, before anything is written.
    const check = Session.create({
      header: live.header,
      seed: rewritten,
      clock: options.clock ?? Date.now,
    });
    const data: RedactionData = {
      reason: options.reason,
      selector: 'seqs' in target ? 'seqs' : 'match' in target ? 'match' : 'subject',
      ...('subject' in target ? { subject: target.subject } : {}),
      erased,
    };
    const redaction = check.append('log/redaction', data, { sourceEventSeqs: erasedList });
    appendCheckpoint(check, options.checkpoint);
    await live.replaceStoredLog(check.events);
    await forgetInSearchIndex(store, [id]);
    return { session: id, redaction: redaction.seq, erased: erasedList, derived };
  } catch (error) {
    await live.close();
    throw error;
  }
}

/** The seqs the target names directly. */
function chooseEvents(session: Session, target: RedactTarget): Set<number> {
  const events = session.events;
  const chosen = new Set<number>();
  if ('seqs' in target) {
    for (const seq of target.seqs) {
      const event = events[seq];
      if (!Number.isSafeInteger(seq) || event === undefined) {
        throw new InvalidArgumentError(
          `expected seqs of session '${session.header.id}' (0 to ${events.length - 1}), found ${String(seq)}`,
        );
      }
      if (RECORD_TYPES.has(event.type)) {
        throw new InvalidArgumentError(
          `seq ${seq} is a ${event.type}, part of the chain's own record: it holds no content to erase`,
        );
      }
      chosen.add(seq);
    }
    return chosen;
  }
  if ('subject' in target) {
    const whole = isTagged(session.header.metadata, target.subject);
    for (const event of events) {
      if (RECORD_TYPES.has(event.type)) continue;
      if (whole || isEventTagged(event, target.subject)) chosen.add(event.seq);
    }
    return chosen;
  }
  if (!target.match.global) {
    throw new InvalidArgumentError(
      `expected a pattern with the g flag (every match is erased), found /${target.match.source}/${target.match.flags}`,
    );
  }
  for (const event of events) {
    if (!RECORD_TYPES.has(event.type) && contentMatches(event.data, target.match))
      chosen.add(event.seq);
  }
  return chosen;
}

/** Whether `record` tags `subject`: its `subject` is it, or its `subjects` hold it. */
function isTagged(record: JsonObject | undefined, subject: string): boolean {
  if (record?.subject === subject) return true;
  const subjects = record?.subjects;
  return Array.isArray(subjects) && subjects.includes(subject);
}

/**
 * Whether an event was tagged with `subject` when it was appended: in its data, or in the
 * source of the message it holds (`source: {kind: 'user', subject: 'customer-42'}`).
 */
function isEventTagged(event: SessionEvent, subject: string): boolean {
  const data = asRecord(dataAsJson(event));
  return (
    isTagged(data, subject) ||
    isTagged(asRecord(data?.source), subject) ||
    isTagged(asRecord(asRecord(data?.message)?.source), subject)
  );
}

function asRecord(value: JsonValue | undefined): JsonObject | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as JsonObject)
    : undefined;
}

/**
 * The chosen seqs and the events that copy them: the chunks and queued messages they were built
 * from, the tool calls an assistant message made, and the pruned versions of a tool result.
 * `whole` holds the copies no pattern can be trusted on (chunks, pruned excerpts).
 */
function withCopies(
  events: readonly SessionEvent[],
  chosen: ReadonlySet<number>,
): { all: Set<number>; whole: Set<number> } {
  const all = new Set(chosen);
  const whole = new Set<number>();
  const callIds = new Set<string>();
  for (const seq of chosen) {
    const event = events[seq] as SessionEvent;
    for (const source of event.sourceEventSeqs ?? []) {
      const type = (events[source] as SessionEvent).type;
      if (!COPY_TYPES.has(type)) continue;
      all.add(source);
      if (type === 'assistant/chunk') whole.add(source);
    }
    if (event.type === 'assistant/message') {
      for (const block of event.data.message.content)
        if (block.type === 'tool-call') callIds.add(block.id);
    }
  }
  for (const event of events) {
    if (event.type === 'tool/call' && callIds.has(event.data.callId)) all.add(event.seq);
    // A pruned result replaces one result and cites it: an excerpt of what is erased.
    if (event.type === 'tool/result' && typeof event.surfaceOp === 'object') {
      if (
        (event.sourceEventSeqs ?? []).some(
          (seq) => all.has(seq) && events[seq]?.type === 'tool/result',
        )
      ) {
        all.add(event.seq);
        whole.add(event.seq);
      }
    }
  }
  return { all, whole };
}

/** Events not erased that cite an erased one and hold content of their own. */
function derivedFrom(
  events: readonly SessionEvent[],
  replaced: ReadonlyMap<number, JsonValue>,
): number[] {
  const derived: number[] = [];
  for (const event of events) {
    if (replaced.has(event.seq) || RECORD_TYPES.has(event.type)) continue;
    if (!(event.sourceEventSeqs ?? []).some((seq) => replaced.has(seq))) continue;
    if (!jsonEqual(redactedData(event.data), event.data)) derived.push(event.seq);
  }
  return derived;
}

/** Appends a checkpoint after the redaction when asked, or when the session keeps them. */
function appendCheckpoint(session: Session, option: boolean | CheckpointSigner | undefined): void {
  const keeps = session.events.some((event) => event.type === 'log/checkpoint');
  if (option === false || (option === undefined && !keeps)) return;
  const signer = typeof option === 'object' ? option : undefined;
  session.append(
    'log/checkpoint',
    ChainTracker.resume(session.header, session.events, signer).checkpoint(),
  );
}
