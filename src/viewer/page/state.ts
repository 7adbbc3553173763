/**
 * One session as the page holds it: a core `Session` seeded with the loaded events (every
 * surface rule checked by core, the same code the writer ran) and grown by each live batch,
 * plus the row lists of the three views, derived from it and rebuilt only when they must be.
 */
import { admitStored } from '../../core/admission.js';
import {
  DEFAULT_JSON_LIMITS,
  deriveEventMessage,
  isElidedChunk,
  isEventOfType,
  type JsonValue,
  type Message,
  type ProvenanceIntent,
  redactedSeqs,
  replaceOpOf,
  Session,
  type SessionEvent,
  type SessionHeader,
  type SurfaceIntent,
  type SurfaceReplacement,
} from '../../core/index.js';
import { applySurfaceOp } from '../../core/surface.js';
import { MARKS } from '../protocol.js';

/** Which of the three views a row belongs to. */
export type ViewName = 'model' | 'transcript' | 'raw';

/** One row of a view. Rows are small; their text is computed when they scroll into sight. */
export interface Row {
  /** Unique in its view, stable across live updates: what selection and expansion remember. */
  readonly key: string;
  /** The event the row stands for (a chunk run: its first chunk). */
  readonly seq: number;
  /** Indentation: 0 for the view's own rows, 1 and more for expanded originals. */
  readonly depth: number;
  readonly kind: 'message' | 'replacement' | 'marker' | 'event' | 'chunks';
  readonly expandable: boolean;
  /** A chunk run's seqs. */
  readonly seqs?: readonly number[];
}

/** The surface in force after one event: what time travel shows. */
export interface SurfaceAt {
  readonly at: number;
  readonly seqs: readonly number[];
}

function intentOf(event: SessionEvent): SurfaceIntent | ProvenanceIntent {
  return {
    ...(event.surfaceOp === undefined ? {} : { surfaceOp: event.surfaceOp }),
    ...(event.sourceEventSeqs === undefined ? {} : { sourceEventSeqs: event.sourceEventSeqs }),
  };
}

/** What {@link ViewedSession} indexes of its log on first use (see its `logIndex`). */
interface LogIndex {
  readonly headerSeqs: number[];
  repairs: number;
  readonly redactions: Map<number, number>;
}

/** A session being viewed. */
export class ViewedSession {
  readonly session: Session;
  /** Size of the events as JSON: what the stream carried. */
  bytes: number;
  private nextTime = 0;
  /**
   * `Session.append` by type name: a stored event's type is a runtime string, and core checks the
   * data against the type at runtime exactly as it does for the seed.
   */
  private readonly append: (
    type: string,
    data: unknown,
    intent: SurfaceIntent | ProvenanceIntent,
  ) => SessionEvent;
  private replacementIndex: Map<number, SurfaceReplacement> | undefined;
  /**
   * Seqs of the `request/header` events, ascending (time travel asks for one per move), the
   * turns a crash left open that a repair closed (`turn/end` interrupted), and which
   * `log/redaction` erased each erased event: indexed on first use, then kept up by each batch.
   */
  private logIndex: LogIndex | undefined;
  /** The transcript's rows so far, and the seq the events they were built from reach. */
  private readonly transcript: { readonly rows: Row[]; upTo: number } = { rows: [], upTo: 0 };

  constructor(header: SessionHeader, events: readonly SessionEvent[], bytes: number) {
    // The stream's events were built by JSON.parse, which is what `parsed` seeding is for.
    this.session = Session.create({
      header,
      seed: events,
      seedMode: 'parsed',
      clock: () => this.nextTime,
    });
    performance.mark(MARKS.seeded);
    this.bytes = bytes;
    this.append = this.session.append.bind(this.session) as typeof this.append;
  }

  /** The log index, built from the whole log the first time it is asked for. */
  private indexed(): LogIndex {
    if (this.logIndex === undefined) {
      this.logIndex = { headerSeqs: [], repairs: 0, redactions: new Map() };
      for (let seq = 0; seq < this.session.seq; seq++) {
        // A stream chunk indexes nothing: a stub stays unbuilt.
        if (this.session.eventType(seq) === 'assistant/chunk') continue;
        this.index(this.session.event(seq) as SessionEvent);
      }
    }
    return this.logIndex;
  }

  /** Adds `event` to the log index, once it exists (until then, building it will see it). */
  private index(event: SessionEvent): void {
    const index = this.logIndex;
    if (index === undefined) return;
    if (event.type === 'request/header') index.headerSeqs.push(event.seq);
    else if (event.type === 'log/redaction') {
      for (const [erased, by] of redactedSeqs([event])) index.redactions.set(erased, by);
    } else if (
      event.type === 'turn/end' &&
      (event.data as { reason?: { kind?: unknown } }).reason?.kind === 'interrupted'
    ) {
      index.repairs++;
    }
  }

  /**
   * The bodies of the stubs the snapshot held (finished chunks, elided), by seq, as they came
   * from the server after the first render. Kept beside the session, whose log holds the stubs.
   */
  private readonly bodies = new Map<number, JsonValue>();

  /** Stubs still without their body. */
  get missingBodies(): number {
    return this.session.elidedChunkCount - this.bodies.size;
  }

  /**
   * The data of event `seq` in full: a stub's body once it came, else `undefined` for a stub
   * (the raw log and the detail pane say so until it comes), and any other event's own data.
   */
  dataOf(seq: number): JsonValue | undefined {
    const event = this.session.event(seq);
    if (event === undefined) return undefined;
    return isElidedChunk(event) ? this.bodies.get(seq) : event.data;
  }

  /**
   * Takes the bodies of the session's stubs (`GET …/chunks`): each one admitted by core as the
   * chunk event of its seq (an invalid one is left out, and its stub stays), and kept only where
   * the session holds a stub with the same time. Returns how many were taken.
   */
  takeBodies(chunks: readonly unknown[], bytes: number): number {
    let taken = 0;
    for (const raw of chunks) {
      const seq = (raw as { seq?: unknown } | null)?.seq;
      if (typeof seq !== 'number') continue;
      const stub = this.session.event(seq);
      if (stub === undefined || !isElidedChunk(stub) || this.bodies.has(seq)) continue;
      let chunk: SessionEvent;
      try {
        chunk = admitStored(raw, seq, 'parsed', DEFAULT_JSON_LIMITS);
      } catch {
        continue;
      }
      if (chunk.type !== 'assistant/chunk' || chunk.time !== stub.time || isElidedChunk(chunk)) {
        continue;
      }
      this.bodies.set(seq, chunk.data);
      taken++;
    }
    this.bytes += bytes;
    return taken;
  }

  /** Erased seq → the last `log/redaction` that erased it; grows with the log. */
  get redactions(): ReadonlyMap<number, number> {
    return this.indexed().redactions;
  }

  /** Turns a crash left open that a repair closed (`turn/end` interrupted). */
  get repairs(): number {
    return this.indexed().repairs;
  }

  /** The last `request/header` at or before `at`. */
  headerAt(at: number): SessionEvent<'request/header'> | undefined {
    const headerSeqs = this.indexed().headerSeqs;
    let low = 0;
    let high = headerSeqs.length - 1;
    let found: number | undefined;
    while (low <= high) {
      const middle = (low + high) >> 1;
      const seq = headerSeqs[middle] as number;
      if (seq <= at) {
        found = seq;
        low = middle + 1;
      } else high = middle - 1;
    }
    const event = found === undefined ? undefined : this.session.event(found);
    return event !== undefined && isEventOfType(event, 'request/header') ? event : undefined;
  }

  /**
   * Appends a committed batch through `Session.append`, so core validates it as it validated the
   * seed. Returns whether the surface was rewritten (a replace), which invalidates more.
   */
  appendEvents(events: readonly SessionEvent[], bytes: number): boolean {
    let rewritten = false;
    for (const event of events) {
      if (event.seq < this.session.seq) continue; // a batch the snapshot already held
      this.nextTime = event.time;
      const appended = this.append(event.type, event.data, intentOf(event));
      this.index(appended);
      if (replaceOpOf(event) !== undefined) rewritten = true;
    }
    this.bytes += bytes;
    if (rewritten) this.replacementIndex = undefined;
    return rewritten;
  }

  /**
   * Every replace of the log, by the seq of the replacing event: core's replay of the validated
   * log (the one the transcript uses), without validating it a second time.
   */
  replacements(): Map<number, SurfaceReplacement> {
    if (this.replacementIndex === undefined) {
      const index = new Map<number, SurfaceReplacement>();
      this.replay(this.session.seq - 1, (replacement) => index.set(replacement.seq, replacement));
      this.replacementIndex = index;
    }
    return this.replacementIndex;
  }

  /** The surface right after event `at` (time travel): the replay `messagesAt` makes. */
  surfaceAt(at: number): SurfaceAt {
    return { at, seqs: this.replay(at) };
  }

  /**
   * Core's replay of the validated log up to `at` (`replaySurface`, step by step), passing over
   * the stream chunks unread: `session.events` would build every stub first.
   */
  private replay(at: number, onReplace?: (replacement: SurfaceReplacement) => void): number[] {
    const order: number[] = [];
    for (let seq = 0; seq <= at; seq++) {
      if (this.session.eventType(seq) === 'assistant/chunk') continue;
      applySurfaceOp(order, this.session.event(seq) as SessionEvent, onReplace);
    }
    return order;
  }

  /** The event `seq`, as core froze it. */
  event(seq: number): SessionEvent | undefined {
    return this.session.event(seq);
  }

  /** The message event `seq` contributes (`null` for a log event or an empty answer). */
  message(seq: number): Message | null {
    const event = this.session.event(seq);
    return event === undefined ? null : deriveEventMessage(event);
  }

  /**
   * Model view rows for the surface `seqs`, with the originals of expanded replacements. Whether
   * a row is a replacement is its own event's surface op; the replay of the log that knows what
   * each replace shadowed runs only when an expanded one needs it.
   */
  modelRows(seqs: readonly number[], expanded: ReadonlySet<string>): Row[] {
    const rows: Row[] = [];
    const walk = (list: readonly number[], depth: number): void => {
      for (const seq of list) {
        const event = this.session.event(seq);
        if (event === undefined) continue;
        const replaces = replaceOpOf(event) !== undefined;
        if (!replaces && deriveEventMessage(event) === null) continue;
        const key = `m${seq}`;
        rows.push({
          key,
          seq,
          depth,
          kind: replaces ? 'replacement' : 'message',
          expandable: replaces,
        });
        if (replaces && expanded.has(key)) {
          walk(this.replacements().get(seq)?.shadowedSeqs ?? [], depth + 1);
        }
      }
    };
    walk(seqs, 0);
    return rows;
  }

  /** Model view rows for surface entries appended after `from` (a live batch without replaces). */
  appendedModelRows(from: number): Row[] {
    const rows: Row[] = [];
    for (let seq = from; seq < this.session.seq; seq++) {
      const event = this.session.event(seq);
      if (event?.surfaceOp === 'append' && this.message(seq) !== null) {
        rows.push({ key: `m${seq}`, seq, depth: 0, kind: 'message', expandable: false });
      }
    }
    return rows;
  }

  /**
   * Transcript rows: what the user saw, in log order, with a marker where history was replaced:
   * the entries of core's `Session.transcript()`, without building them (their messages, the
   * replay that says what each replace shadowed). Kept and extended from where the last call
   * stopped, so showing the transcript again, or a live batch, costs only the events since. A
   * row does not say whether the model still sees it, which a later replace changes: that is
   * the surface's now ({@link onSurface}), read when the row is painted.
   */
  transcriptRows(): readonly Row[] {
    const kept = this.transcript;
    const end = this.session.seq;
    for (let seq = kept.upTo; seq < end; seq++) {
      // A stream chunk (perhaps a stub not yet built) never enters the surface.
      if (this.session.eventType(seq) === 'assistant/chunk') continue;
      const event = this.session.event(seq) as SessionEvent;
      if (event.surfaceOp === undefined) continue;
      const replaces = replaceOpOf(event) !== undefined;
      if (!replaces && deriveEventMessage(event) === null) continue;
      kept.rows.push({
        key: `t${seq}`,
        seq,
        depth: 0,
        kind: replaces ? 'marker' : 'message',
        expandable: false,
      });
    }
    kept.upTo = end;
    return kept.rows;
  }

  /** Whether the model sees event `seq` now: what greys a transcript row that it no longer does. */
  onSurface(seq: number): boolean {
    return this.session.surface.has(seq);
  }

  /** Raw log rows from `from` on; runs of stream chunks are one expandable row. */
  rawRows(expanded: ReadonlySet<string>, from = 0, previous: Row[] = []): Row[] {
    const rows = previous;
    // Types only: a chunk's stub is built when its row is painted, not for the whole log.
    const session = this.session;
    const end = session.seq;
    let seq = from;
    while (seq < end) {
      if (session.eventType(seq) !== 'assistant/chunk') {
        rows.push({ key: `r${seq}`, seq, depth: 0, kind: 'event', expandable: false });
        seq++;
        continue;
      }
      const run: number[] = [];
      while (seq < end && session.eventType(seq) === 'assistant/chunk') {
        run.push(seq);
        seq++;
      }
      const key = `c${run[0]}`;
      rows.push({
        key,
        seq: run[0] as number,
        depth: 0,
        kind: 'chunks',
        expandable: true,
        seqs: run,
      });
      if (expanded.has(key)) {
        for (const chunk of run) {
          rows.push({ key: `r${chunk}`, seq: chunk, depth: 1, kind: 'event', expandable: false });
        }
      }
    }
    return rows;
  }
}
