/**
 * The steering and follow-up queue of a session. The queue lives in the log, not in memory: a
 * message is a `queue/steer` or `queue/follow-up` event the moment it is queued (so a crash never
 * loses it), and it is delivered by appending a `user/message` that cites that event (so a
 * reload never delivers it twice). Pending = queued and not yet cited.
 */
import type { Session, SessionEvent, UserContentBlock, UserMessage } from '../core/index.js';
import { userSource } from './requests.js';

/** Which queue a message waits in: `steer` enters the running turn, `follow-up` starts a new one. */
export type QueueKind = 'steer' | 'follow-up';

/** A message waiting in a session's queue. */
export interface QueuedMessage {
  readonly kind: QueueKind;
  /** The seq of its `queue/steer` or `queue/follow-up` event. */
  readonly seq: number;
  /** The message as it will enter the surface (same `id` and content). */
  readonly message: UserMessage;
}

/** The messages of a session's queue that no `user/message` has delivered yet, oldest first. */
export interface PendingMessages {
  readonly steers: readonly QueuedMessage[];
  readonly followUps: readonly QueuedMessage[];
}

interface QueueState {
  /** Every event below this seq has been looked at. */
  scannedTo: number;
  readonly steers: Map<number, QueuedMessage>;
  readonly followUps: Map<number, QueuedMessage>;
}

/**
 * Per session, what the scan found so far: each step boundary looks only at the events appended
 * since the last look, so asking is O(new events), not O(log).
 */
const queues = new WeakMap<Session, QueueState>();

const QUEUE_TYPE: Readonly<Record<QueueKind, 'queue/steer' | 'queue/follow-up'>> = {
  steer: 'queue/steer',
  'follow-up': 'queue/follow-up',
};

/**
 * The queued messages of `session` not yet delivered, found from the log (so a session loaded
 * after a crash knows its queue).
 *
 * @example
 * ```ts
 * import { Session } from 'palimpsest';
 * import { Agent, pendingMessages } from 'palimpsest/agent';
 * import { scriptedModel } from 'palimpsest/testing';
 *
 * const session = Session.create({ id: 'queue-example' });
 * const agent = new Agent({ session, model: scriptedModel([{ text: 'ok' }], { loop: true }) });
 * await agent.followUp('and then summarise it');
 * console.log(pendingMessages(session).followUps.length); // 1
 * await agent.resume(); // runs the follow-up as its own turn
 * console.log(pendingMessages(session).followUps.length); // 0
 * ```
 */
export function pendingMessages(session: Session): PendingMessages {
  const state = scan(session);
  return {
    steers: Object.freeze([...state.steers.values()]),
    followUps: Object.freeze([...state.followUps.values()]),
  };
}

/**
 * Appends a queue event for `content` (naming `requestId` in its source when given); the message
 * is pending from here on.
 */
export function enqueue(
  session: Session,
  kind: QueueKind,
  content: readonly UserContentBlock[],
  requestId?: string,
): { readonly queued: QueuedMessage; readonly event: SessionEvent } {
  const message: UserMessage = {
    id: crypto.randomUUID(),
    role: 'user',
    content,
    source: userSource(requestId),
  };
  const event = session.append(QUEUE_TYPE[kind], message);
  return { queued: { kind, seq: event.seq, message }, event };
}

/**
 * Delivers one queued message: the `user/message` that puts it on the surface, with the queued
 * message's id and content, citing the queue event.
 */
export function deliver(session: Session, queued: QueuedMessage): SessionEvent<'user/message'> {
  return session.append(
    'user/message',
    {
      id: queued.message.id,
      role: 'user',
      content: queued.message.content,
      source: { kind: queued.kind, queued: queued.seq },
    },
    { surfaceOp: 'append', sourceEventSeqs: [queued.seq] },
  );
}

/** Whether steering messages wait for the next step boundary. */
export function hasPendingSteers(session: Session): boolean {
  return scan(session).steers.size > 0;
}

/** Delivers every pending steering message, oldest first, calling `emit` for each event. */
export function deliverSteers(session: Session, emit: (event: SessionEvent) => void): number {
  const state = scan(session);
  if (state.steers.size === 0) return 0;
  const waiting = [...state.steers.values()];
  for (const queued of waiting) emit(deliver(session, queued));
  return waiting.length;
}

/** The oldest pending follow-up, if any. */
export function nextFollowUp(session: Session): QueuedMessage | undefined {
  for (const queued of scan(session).followUps.values()) return queued;
  return undefined;
}

function scan(session: Session): QueueState {
  let state = queues.get(session);
  if (state === undefined) {
    state = { scannedTo: 0, steers: new Map(), followUps: new Map() };
    queues.set(session, state);
  }
  const end = session.seq;
  for (let seq = state.scannedTo; seq < end; seq++) {
    const event = session.event(seq);
    if (event === undefined) continue;
    // Comparisons on the type first: almost every event is a chunk, and this is a step's hot path.
    switch (event.type) {
      case 'queue/steer':
      case 'queue/follow-up': {
        const kind: QueueKind = event.type === 'queue/steer' ? 'steer' : 'follow-up';
        const queued = { kind, seq, message: event.data };
        (kind === 'steer' ? state.steers : state.followUps).set(seq, queued);
        break;
      }
      case 'user/message':
        for (const source of event.sourceEventSeqs ?? []) {
          state.steers.delete(source);
          state.followUps.delete(source);
        }
        break;
    }
  }
  state.scannedTo = end;
  return state;
}
