/**
 * One session as the page holds it: a core `Session` seeded with the loaded events (every
 * surface rule checked by core, the same code the writer ran) and grown by each live batch,
 * plus the row lists of the three views, derived from it and rebuilt only when they must be.
 */
import {
  deriveEventMessage,
  foldSurface,
  type Message,
  type ProvenanceIntent,
  replaceOpOf,
  Session,
  type SessionEvent,
  type SessionHeader,
  type SurfaceFold,
  type SurfaceIntent,
  type SurfaceReplacement,
} from '../../core/index.js';

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
  /** In the transcript: a message the model no longer sees. */
  readonly hidden?: boolean;
}

/** The surface in force after one event: what time travel shows. */
export interface SurfaceAt {
  readonly at: number;
  readonly fold: SurfaceFold;
}

function intentOf(event: SessionEvent): SurfaceIntent | ProvenanceIntent {
  return {
    ...(event.surfaceOp === undefined ? {} : { surfaceOp: event.surfaceOp }),
    ...(event.sourceEventSeqs === undefined ? {} : { sourceEventSeqs: event.sourceEventSeqs }),
  };
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
  private fold: SurfaceFold | undefined;
  private replacementIndex: Map<number, SurfaceReplacement> | undefined;

  constructor(header: SessionHeader, events: readonly SessionEvent[], bytes: number) {
    // The stream's events were built by JSON.parse, which is what `parsed` seeding is for.
    this.session = Session.create({
      header,
      seed: events,
      seedMode: 'parsed',
      clock: () => this.nextTime,
    });
    this.bytes = bytes;
    this.append = this.session.append.bind(this.session) as typeof this.append;
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
      this.append(event.type, event.data, intentOf(event));
      if (replaceOpOf(event) !== undefined) rewritten = true;
    }
    this.bytes += bytes;
    this.fold = undefined;
    if (rewritten) this.replacementIndex = undefined;
    return rewritten;
  }

  /** The current surface with its replacement history. */
  currentFold(): SurfaceFold {
    this.fold ??= foldSurface(this.session.events);
    return this.fold;
  }

  /** Every replace of the log, by the seq of the replacing event. */
  replacements(): Map<number, SurfaceReplacement> {
    if (this.replacementIndex === undefined) {
      this.replacementIndex = new Map(
        this.currentFold().replacements.map((replacement) => [replacement.seq, replacement]),
      );
    }
    return this.replacementIndex;
  }

  /** The surface right after event `at` (time travel). */
  surfaceAt(at: number): SurfaceAt {
    return { at, fold: foldSurface(this.session.events.slice(0, at + 1)) };
  }

  event(seq: number): SessionEvent | undefined {
    return this.session.event(seq);
  }

  message(seq: number): Message | null {
    const event = this.session.event(seq);
    return event === undefined ? null : deriveEventMessage(event);
  }

  /** Model view rows for the surface `seqs`, with the originals of expanded replacements. */
  modelRows(seqs: readonly number[], expanded: ReadonlySet<string>): Row[] {
    const rows: Row[] = [];
    const replacements = this.replacements();
    const walk = (list: readonly number[], depth: number): void => {
      for (const seq of list) {
        const replacement = replacements.get(seq);
        if (replacement === undefined && this.message(seq) === null) continue;
        const key = `m${seq}`;
        rows.push({
          key,
          seq,
          depth,
          kind: replacement === undefined ? 'message' : 'replacement',
          expandable: replacement !== undefined,
        });
        if (replacement !== undefined && expanded.has(key))
          walk(replacement.shadowedSeqs, depth + 1);
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

  /** Transcript rows: what the user saw, in log order, with a marker where history was replaced. */
  transcriptRows(): Row[] {
    return this.session.transcript().map((entry) => ({
      key: `t${entry.seq}`,
      seq: entry.seq,
      depth: 0,
      kind: entry.kind === 'replacement' ? 'marker' : 'message',
      expandable: false,
      hidden: !entry.onSurface,
    }));
  }

  /** Raw log rows from `from` on; runs of stream chunks are one expandable row. */
  rawRows(expanded: ReadonlySet<string>, from = 0, previous: Row[] = []): Row[] {
    const rows = previous;
    const events = this.session.events;
    let seq = from;
    while (seq < events.length) {
      const event = events[seq] as SessionEvent;
      if (event.type !== 'assistant/chunk') {
        rows.push({ key: `r${seq}`, seq, depth: 0, kind: 'event', expandable: false });
        seq++;
        continue;
      }
      const run: number[] = [];
      while (seq < events.length && (events[seq] as SessionEvent).type === 'assistant/chunk') {
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
