/**
 * The Session: an append-only event log, its surface and everything derived from them.
 */
import {
  type AdmissionMode,
  admitAppend,
  isAdmittedLog,
  markAdmittedLog,
  seedAdmission,
} from './admission.js';
import { deriveEventMessage } from './derive.js';
import { ElidedLog } from './elided-log.js';
import { describeValue, InvalidArgumentError, SessionValidationError } from './errors.js';
import type {
  AppendData,
  KnownEventType,
  LogEventType,
  ProvenanceIntent,
  SessionEvent,
  SessionEventMap,
  SurfaceEventType,
  SurfaceIntent,
} from './events.js';
import { SESSION_FORMAT_VERSION, type SessionHeader, validateHeader } from './header.js';
import { host, randomId } from './host.js';
import { DEFAULT_JSON_LIMITS, type JsonLimits, type JsonValue } from './json.js';
import { type MessageList, messageListOf } from './message-list.js';
import type { Message } from './messages.js';
import { replaySurface, type SessionSurface, SurfaceManager, seedLog } from './surface.js';
import { buildTranscript, type TranscriptEntry } from './transcript.js';

/** Called after each committed append, in subscription order. */
export type SessionListener = (event: SessionEvent, session: Session) => void | Promise<void>;

/** Options of {@link Session.create}. */
export interface SessionOptions {
  /** The session id; defaults to the header's id, else a random UUID. */
  readonly id?: string;
  /** A full header (for example a loaded one); synthesised when absent. */
  readonly header?: SessionHeader;
  /**
   * Events to start from (a loaded log, a fork prefix). They are validated exactly like appends;
   * any invalid event rejects the whole seed. A seed may hold elided chunks (stubs a store loads
   * in place of finished `assistant/chunk` events, see `elidedChunkData`), each of which a later
   * `assistant/message` of the seed must cite. A store's {@link ElidedLog} (`LoadedSession.log`)
   * seeds the same session without an object per elided chunk or held delta: the session builds
   * such an event only when it is read, and seals the log, which it keeps for that.
   */
  readonly seed?: readonly unknown[] | ElidedLog;
  /**
   * `copy` (default) snapshots the seed, so later changes by the caller are invisible.
   * `adopt` validates and freezes the seed's objects in place without copying: for events handed
   * over that nobody else references.
   * `parsed` is `adopt` for events that `JSON.parse` built (a store's freshly parsed lines, or
   * plain object literals around such values): the checks such values pass by construction
   * (no symbol or non-enumerable keys, no accessors) are skipped; everything JSON text can get
   * wrong is still checked. Do not use it for objects built any other way.
   */
  readonly seedMode?: 'copy' | 'adopt' | 'parsed';
  /** Source of event times (integer epoch ms); defaults to `Date.now`. */
  readonly clock?: () => number;
  /** Bounds on each event's data; defaults to {@link DEFAULT_JSON_LIMITS}. */
  readonly limits?: Partial<JsonLimits>;
  /**
   * Receives errors thrown (or promises rejected) by subscribers. Defaults to `console.error`.
   * Subscriber failures never undo or block an append.
   */
  readonly onListenerError?: (error: unknown, event: SessionEvent) => void;
  /**
   * Called before each append is validated; throwing rejects the append with that error and
   * changes nothing. A recorder uses it to refuse appends once its writer has failed.
   */
  readonly beforeAppend?: (type: string) => void;
}

/** Position in the derived messages, returned by {@link Session.deriveMessagesSince}. */
export interface MessageCursor {
  readonly replaceGeneration: number;
  readonly count: number;
}

/** Messages derived since a cursor. */
export interface MessageDelta {
  /** True when the surface was rewritten since the cursor: `messages` is then the full list. */
  readonly reset: boolean;
  /** New messages (or all messages when `reset`). */
  readonly messages: readonly Message[];
  /** Pass it to the next call. */
  readonly cursor: MessageCursor;
}

/**
 * An event-sourced agent session. The log is the only state: the surface, the derived
 * messages, the transcript and the views at any earlier seq are computed from it.
 *
 * `append` validates the event against every rule of the surface RFC before it commits
 * anything: a rejected append leaves the log, the surface, its generation, the caches and
 * `seq` exactly as they were. Accepted events are deeply frozen.
 */
export class Session {
  /** The session id (equal to `header.id`). */
  readonly id: string;
  /** The frozen session header. */
  readonly header: SessionHeader;

  /**
   * The events; a hole is a chunk of {@link Session.holeSource} (an elided chunk's stub or a held
   * delta's chunk), built when first read.
   */
  private readonly log: (SessionEvent | undefined)[] = [];
  /** Where the holes' events come from, until every one has been built. */
  private holeSource: ElidedLog | undefined;
  private holes = 0;
  private readonly manager: SurfaceManager;
  /** The bounds this session applies to each event's data. */
  readonly limits: JsonLimits;
  private readonly clock: () => number;
  /** Replaced, never changed, on (un)subscribe: publishing iterates it without a copy. */
  private listeners: readonly SessionListener[] = [];
  private readonly onListenerError: (error: unknown, event: SessionEvent) => void;
  private readonly beforeAppend: ((type: string) => void) | undefined;
  private publishing = false;
  private eventsSnapshot: readonly SessionEvent[] | undefined;

  private elided = 0;

  /**
   * The derived messages; only pushed to until a replace, which starts a new array, so the
   * message lists handed out keep reading theirs unchanged.
   */
  private derived: Message[] = [];
  private derivedGeneration = 0;
  private derivedEntries = 0;
  private derivedSnapshot: readonly Message[] | undefined;
  private derivedList: MessageList | undefined;

  protected constructor(options: SessionOptions) {
    this.clock = options.clock ?? Date.now;
    this.limits = Object.freeze({ ...DEFAULT_JSON_LIMITS, ...options.limits });
    this.onListenerError = options.onListenerError ?? reportListenerError;
    this.beforeAppend = options.beforeAppend;
    if (options.header !== undefined) {
      this.header = validateHeader(options.header, options.id);
      this.id = this.header.id;
    } else {
      this.id = options.id ?? randomId();
      this.header = validateHeader({
        version: SESSION_FORMAT_VERSION,
        id: this.id,
        createdAt: this.now(),
      });
    }
    this.manager = new SurfaceManager(this.log);
    if (options.seed !== undefined) this.seedWith(options.seed, options.seedMode ?? 'copy');
  }

  /**
   * Creates a session, empty or from a seed.
   *
   * @throws SessionValidationError when the header or any seed event is invalid; the message
   *   names the seed index, seq and type.
   */
  static create(options: SessionOptions = {}): Session {
    return new Session(options);
  }

  /**
   * A frozen snapshot of the log; it never grows (read it again after appending). The first read
   * after an append copies the n event pointers: use {@link Session.event} in hot loops.
   */
  get events(): readonly SessionEvent[] {
    if (this.eventsSnapshot === undefined) {
      this.fillHoles();
      this.eventsSnapshot = markAdmittedLog(this.log.slice() as SessionEvent[]);
    }
    return this.eventsSnapshot;
  }

  /** The seq the next appended event will get (the number of events in the log). */
  get seq(): number {
    return this.log.length;
  }

  /**
   * How many events of the log are elided chunks: finished `assistant/chunk` events a store
   * loaded without their bodies (0 unless the session was seeded from such a load). Appends
   * never add any.
   */
  get elidedChunkCount(): number {
    return this.elided;
  }

  /** The session's one surface, read-only. */
  get surface(): SessionSurface {
    return this.manager;
  }

  /** The event with `seq`, or `undefined` (O(1), no snapshot). */
  event(seq: number): SessionEvent | undefined {
    if (!Number.isInteger(seq) || seq < 0 || seq >= this.log.length) return undefined;
    return this.log[seq] ?? this.fillHole(seq);
  }

  /**
   * The type of the event with `seq`, or `undefined`, without building it: a walk that only
   * needs the types of a loaded session's chunks (which a fast load holds without their
   * bodies) reads them at no cost.
   */
  eventType(seq: number): string | undefined {
    if (!Number.isInteger(seq) || seq < 0 || seq >= this.log.length) return undefined;
    // Only finished stream chunks are ever held unbuilt.
    return this.log[seq]?.type ?? 'assistant/chunk';
  }

  /**
   * Appends an event and returns it, frozen. Surface-eligible types require an intent saying
   * how the event enters the surface; other types accept only provenance.
   *
   * @throws SessionValidationError when the event breaks a rule; nothing changes then.
   *
   * @example
   * ```ts
   * import { Session } from 'palimpsest';
   *
   * const session = Session.create({ id: 'append-example' });
   * const user = (id: string, text: string) =>
   *   ({ id, role: 'user', content: [{ type: 'text', text }], source: { kind: 'user' } }) as const;
   * const first = session.append('user/message', user('u1', 'The build failed.'), { surfaceOp: 'append' });
   * const log = session.append('user/message', user('u2', 'Log: 180 modules, 1 type error.'), {
   *   surfaceOp: 'append',
   * });
   * // History is rewritten for the model by a replace that shadows a surface range and cites it.
   * session.append('user/message', user('s1', 'Summary: one type error broke the build.'), {
   *   surfaceOp: { op: 'replace', start: first.seq, end: log.seq },
   *   sourceEventSeqs: [first.seq, log.seq],
   * });
   * console.log(session.deriveMessages().length); // 1: the model sees the summary
   * console.log(session.events.length); // 3: the log keeps every layer
   * ```
   */
  append<T extends SurfaceEventType>(
    type: T,
    data: AppendData<T>,
    intent: SurfaceIntent,
  ): SessionEvent<T>;
  append<T extends LogEventType>(
    type: T,
    data: AppendData<T>,
    intent?: ProvenanceIntent,
  ): SessionEvent<T>;
  append<T extends KnownEventType>(
    type: IsUnion<T> extends true ? T : never,
    data: AppendData<T>,
    intent?: SurfaceIntent | ProvenanceIntent,
  ): SessionEvent<T>;
  append<T extends string>(
    type: T extends KnownEventType ? never : T,
    data: JsonValue | SessionEventMap[KnownEventType],
    intent?: SurfaceIntent | ProvenanceIntent,
  ): SessionEvent;
  append(type: string, data: unknown, intent?: SurfaceIntent | ProvenanceIntent): SessionEvent {
    return this.admit(type, data, intent, 'copy');
  }

  /**
   * {@link Session.append} without the copy: `data` is validated and deep-frozen in place and
   * becomes the event's data. The same rules, errors and atomicity as `append` (a rejected event
   * changes nothing in the session, though parts of `data` may be left frozen). Only for writers
   * that build `data` for this one event and keep no other reference to it, such as the agent
   * loop recording stream chunks, where the copy is a measurable share of the cost.
   */
  appendAdopted<T extends SurfaceEventType>(
    type: T,
    data: AppendData<T>,
    intent: SurfaceIntent,
  ): SessionEvent<T>;
  appendAdopted<T extends LogEventType>(
    type: T,
    data: AppendData<T>,
    intent?: ProvenanceIntent,
  ): SessionEvent<T>;
  appendAdopted<T extends KnownEventType>(
    type: IsUnion<T> extends true ? T : never,
    data: AppendData<T>,
    intent?: SurfaceIntent | ProvenanceIntent,
  ): SessionEvent<T>;
  appendAdopted<T extends string>(
    type: T extends KnownEventType ? never : T,
    data: JsonValue | SessionEventMap[KnownEventType],
    intent?: SurfaceIntent | ProvenanceIntent,
  ): SessionEvent;
  appendAdopted(
    type: string,
    data: unknown,
    intent?: SurfaceIntent | ProvenanceIntent,
  ): SessionEvent {
    return this.admit(type, data, intent, 'adopt');
  }

  private admit(
    type: string,
    data: unknown,
    intent: SurfaceIntent | ProvenanceIntent | undefined,
    mode: 'copy' | 'adopt',
  ): SessionEvent {
    const seq = this.log.length;
    if (this.publishing) {
      throw new SessionValidationError(
        'REENTRANT_APPEND',
        'a subscriber appended while the session was publishing; append after the listener returns (for example in a microtask)',
        { seq, eventType: typeof type === 'string' ? type : undefined },
      );
    }
    this.beforeAppend?.(type);
    const event = admitAppend(type, data, intent, seq, this.now(seq, type), this.limits, mode);
    this.manager.validateNext(event);
    this.log.push(event);
    this.eventsSnapshot = undefined;
    this.publish(event);
    return event;
  }

  /**
   * The messages the model sees now: the projection of every surface entry, in surface order.
   * Derivation is incremental (only new surface entries are projected unless a replace rewrote
   * the surface). The result is a frozen array holding the events' own frozen messages; it is
   * the same array until the messages change. A new array is a copy of the n message pointers,
   * and V8 allocates each array of 16,384 or more elements as a large object of its own, so the
   * first call after a change costs O(messages), and more per message past that size (about 40×
   * from 16,000 to 20,000 messages in figure 4 of docs/benchmarks.md). Per-step readers should use
   * {@link Session.deriveMessageList} (the same messages, O(new messages) at any size) or
   * {@link Session.deriveMessagesSince}.
   */
  deriveMessages(): readonly Message[] {
    this.syncDerived();
    if (this.derivedSnapshot === undefined)
      this.derivedSnapshot = Object.freeze(this.derived.slice());
    return this.derivedSnapshot;
  }

  /**
   * The messages of {@link Session.deriveMessages} as a {@link MessageList}: a view that no later
   * append or replace changes, taken without copying the messages, so a call costs O(new
   * messages) at any size (the same list until the messages change).
   *
   * @example
   * ```ts
   * import { Session } from 'palimpsest';
   *
   * const session = Session.create({ id: 'derive-list-example' });
   * const user = (id: string, text: string) =>
   *   ({ id, role: 'user', content: [{ type: 'text', text }], source: { kind: 'user' } }) as const;
   * const first = session.append('user/message', user('u1', 'The build failed.'), {
   *   surfaceOp: 'append',
   * });
   * const held = session.deriveMessageList();
   * session.append('user/message', user('s1', 'Summary: the build failed.'), {
   *   surfaceOp: { op: 'replace', start: first.seq, end: first.seq },
   *   sourceEventSeqs: [first.seq],
   * });
   * console.log(held.at(0)?.id); // 'u1': a list never changes
   * console.log(session.deriveMessageList().at(0)?.id); // 's1'
   * ```
   */
  deriveMessageList(): MessageList {
    this.syncDerived();
    if (this.derivedList === undefined) {
      this.derivedList = messageListOf(this.derived, this.derived.length);
    }
    return this.derivedList;
  }

  /**
   * The messages derived since `cursor` (all of them without a cursor or after a replace), for
   * consumers that keep their own incremental state: O(new messages) per call.
   */
  deriveMessagesSince(cursor?: MessageCursor): MessageDelta {
    this.syncDerived();
    const next: MessageCursor = Object.freeze({
      replaceGeneration: this.derivedGeneration,
      count: this.derived.length,
    });
    const reset =
      cursor === undefined ||
      cursor.replaceGeneration !== this.derivedGeneration ||
      cursor.count > this.derived.length;
    const messages = reset ? this.derived.slice() : this.derived.slice(cursor.count);
    return Object.freeze({ reset, messages: Object.freeze(messages), cursor: next });
  }

  /**
   * The messages the model would have seen right after event `seq` was appended: equal to
   * `deriveMessages()` of a session seeded with `events[0..seq]`.
   *
   * @throws InvalidArgumentError when `seq` is not the seq of an event of this log.
   */
  messagesAt(seq: number): readonly Message[] {
    if (!Number.isInteger(seq) || seq < 0 || seq >= this.log.length) {
      throw new InvalidArgumentError(
        `messagesAt expects the seq of an event (0..${this.log.length - 1}), found ${describeValue(seq)}`,
      );
    }
    if (seq === this.log.length - 1) return this.deriveMessages();
    const messages: Message[] = [];
    for (const surfaceSeq of replaySurface(this.log, seq)) {
      const message = deriveEventMessage(this.log[surfaceSeq] as SessionEvent);
      if (message !== null) messages.push(message);
    }
    return Object.freeze(messages);
  }

  /**
   * The human view of the session: every message that entered by appending, in log order, with
   * a marker entry wherever a replace shadowed history. Unlike the surface, it never hides
   * what a reader has already seen.
   */
  transcript(): readonly TranscriptEntry[] {
    return buildTranscript(this.log, this.manager);
  }

  /**
   * Calls `listener` after every committed append. A listener that throws (or rejects) is
   * reported to `onListenerError`; the append stands. Returns the unsubscribe function.
   */
  subscribe(listener: SessionListener): () => void {
    this.listeners = [...this.listeners, listener];
    return () => {
      const index = this.listeners.indexOf(listener);
      if (index !== -1) this.listeners = this.listeners.toSpliced(index, 1);
    };
  }

  private seedWith(seed: readonly unknown[] | ElidedLog, mode: AdmissionMode): void {
    if (seed instanceof ElidedLog) {
      this.elided = seedLog(
        seed,
        seedAdmission(mode, this.limits),
        this.limits,
        this.manager,
        this.log,
      );
      seed.seal();
      this.holes = seed.holeCount;
      if (this.holes > 0) this.holeSource = seed;
      return;
    }
    if (!Array.isArray(seed)) {
      throw new SessionValidationError(
        'INVALID_ENVELOPE',
        `expected the seed as an array of events, found ${describeValue(seed)}`,
      );
    }
    // A throw here aborts construction, so an invalid event rejects the whole seed.
    // Another session's log (a fork's prefix): its events were admitted there, so only the
    // surface rules are applied again.
    const admit = isAdmittedLog(seed)
      ? (raw: unknown) => raw as SessionEvent
      : seedAdmission(mode, this.limits);
    this.elided = seedLog(seed, admit, this.limits, this.manager, this.log);
  }

  /** Builds the event of the hole at `seq` (a stub, or a held delta's chunk) and keeps it. */
  private fillHole(seq: number): SessionEvent {
    const event = (this.holeSource as ElidedLog).at(seq) as SessionEvent;
    this.log[seq] = event;
    if (--this.holes === 0) this.holeSource = undefined;
    return event;
  }

  private fillHoles(): void {
    const log = this.log;
    for (let seq = 0; this.holes > 0 && seq < log.length; seq++) {
      if (log[seq] === undefined) this.fillHole(seq);
    }
  }

  private syncDerived(): void {
    const manager = this.manager;
    const generation = manager.replaceGeneration;
    const order = manager.borrowOrder();
    if (generation !== this.derivedGeneration) {
      this.derived = [];
      this.derivedEntries = 0;
      this.derivedGeneration = generation;
      this.derivedSnapshot = undefined;
      this.derivedList = undefined;
    }
    if (this.derivedEntries === order.length) return;
    const derived = this.derived;
    const count = derived.length;
    for (let i = this.derivedEntries; i < order.length; i++) {
      const message = deriveEventMessage(this.log[order[i] as number] as SessionEvent);
      if (message !== null) derived.push(message);
    }
    this.derivedEntries = order.length;
    if (derived.length === count) return;
    this.derivedSnapshot = undefined;
    this.derivedList = undefined;
  }

  private publish(event: SessionEvent): void {
    if (this.listeners.length === 0) return;
    this.publishing = true;
    try {
      // A listener that (un)subscribes replaces the array: this event still goes to these.
      const listeners = this.listeners;
      for (let i = 0; i < listeners.length; i++) {
        const listener = listeners[i] as SessionListener;
        try {
          const result = listener(event, this);
          if (isThenable(result)) {
            result.then(undefined, (error: unknown) => this.reportListener(error, event));
          }
        } catch (error) {
          this.reportListener(error, event);
        }
      }
    } finally {
      this.publishing = false;
    }
  }

  private reportListener(error: unknown, event: SessionEvent): void {
    try {
      this.onListenerError(error, event);
    } catch {
      // The error reporter itself failed; an append must still never be undone by a listener.
    }
  }

  private now(seq?: number, type?: string): number {
    const time = this.clock();
    if (typeof time !== 'number' || !Number.isSafeInteger(time) || Object.is(time, -0)) {
      throw new SessionValidationError(
        'INVALID_TIME',
        `the clock returned ${describeValue(time)}; expected integer epoch ms`,
        { seq, eventType: type },
      );
    }
    return time;
  }
}

type IsUnion<T, U = T> = T extends unknown ? ([U] extends [T] ? false : true) : never;

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { then?: unknown }).then === 'function'
  );
}

function reportListenerError(error: unknown, event: SessionEvent): void {
  host.console?.error(
    `palimpsest: a session listener failed on seq ${event.seq} (${event.type})`,
    error,
  );
}
