/**
 * Small builders for events and their data, used across the tests: `event` for a stored event
 * made by hand, the message builders for its data, and whole turns recorded through a Session.
 */
import { elidedChunkData } from '../../src/core/backend.js';
import {
  type AssistantMessageData,
  type EventData,
  type EventEnvelope,
  type JsonValue,
  Session,
  type SessionEvent,
  type SurfaceOp,
  type ToolResultData,
  type UserMessage,
} from '../../src/core/index.js';

/** The envelope fields of a hand-made event beyond its seq, type and data. */
export interface EventFields {
  /** Default 0. */
  readonly time?: number | undefined;
  readonly surfaceOp?: SurfaceOp | undefined;
  readonly sourceEventSeqs?: readonly number[] | undefined;
}

/**
 * An event as a store or a seed hands it over, made without a Session: nothing is checked, so
 * it may break a rule a Session enforces (a store test's data need not be a valid chunk). Fields
 * come in a Session's order; absent ones are left out, not set to undefined.
 */
export function event<T extends string>(
  seq: number,
  type: T,
  data: EventData<T> | JsonValue,
  fields: EventFields = {},
): SessionEvent<T> {
  return rawEvent({
    seq,
    time: fields.time ?? 0,
    type,
    data: data as JsonValue,
    ...(fields.surfaceOp === undefined ? {} : { surfaceOp: fields.surfaceOp }),
    ...(fields.sourceEventSeqs === undefined ? {} : { sourceEventSeqs: fields.sourceEventSeqs }),
  }) as SessionEvent<T>;
}

export function user(id: string, text: string): UserMessage {
  return { id, role: 'user', content: [{ type: 'text', text }], source: { kind: 'user' } };
}

export function context(id: string, text: string): UserMessage {
  return { id, role: 'user', content: [{ type: 'text', text }], source: { kind: 'context' } };
}

export function assistant(
  id: string,
  text: string,
  toolCalls: readonly { id: string; name: string; arguments?: string }[] = [],
  at: { turn: number; step: number } = { turn: 1, step: 1 },
): AssistantMessageData {
  return {
    ...at,
    finishReason: toolCalls.length > 0 ? 'tool-calls' : 'stop',
    message: {
      id,
      role: 'assistant',
      content: [
        ...(text === '' ? [] : [{ type: 'text' as const, text }]),
        ...toolCalls.map((call) => ({
          type: 'tool-call' as const,
          id: call.id,
          name: call.name,
          arguments: call.arguments ?? '{}',
        })),
      ],
      source: { kind: 'model', provider: 'test', model: 'scripted' },
    },
  };
}

export function toolResult(
  id: string,
  callId: string,
  text: string,
  at: { turn: number; step: number } = { turn: 1, step: 1 },
): ToolResultData {
  return {
    ...at,
    message: {
      id,
      role: 'tool',
      content: [{ type: 'tool-result', toolCallId: callId, content: [{ type: 'text', text }] }],
    },
  };
}

/** A clock that starts at `start` and ticks by one millisecond per call. */
export function tickingClock(start = 1_700_000_000_000): () => number {
  let now = start;
  return () => now++;
}

/**
 * Records one complete turn with a tool round trip: turn/start, user/message, step 1 (chunks,
 * assistant/message with one tool call, tool/call, tool/result), step 2 (a chunk, the final
 * answer), turn/end. Returns the seqs of the interesting events.
 */
export function recordToolTurn(
  session: Session,
  turn: number,
  prompt = `question ${turn}`,
): { user: number; call: number; result: number; answer: number; first: number; last: number } {
  const first = session.append('turn/start', { turn }).seq;
  const userSeq = session.append('user/message', user(`u${turn}`, prompt), {
    surfaceOp: 'append',
  }).seq;
  session.append('step/start', { turn, step: 1 });
  const chunk = session.append('assistant/chunk', {
    turn,
    step: 1,
    chunk: { type: 'tool-input-delta', id: `c${turn}`, delta: '{}' },
  });
  const request = session.append(
    'assistant/message',
    assistant(`a${turn}.1`, 'let me look', [{ id: `c${turn}`, name: 'read_file' }], {
      turn,
      step: 1,
    }),
    { surfaceOp: 'append', sourceEventSeqs: [chunk.seq] },
  );
  const call = session.append('tool/call', {
    turn,
    step: 1,
    callId: `c${turn}`,
    name: 'read_file',
    arguments: '{}',
  });
  const result = session.append(
    'tool/result',
    toolResult(`r${turn}`, `c${turn}`, `contents of file ${turn}`, { turn, step: 1 }),
    { surfaceOp: 'append', sourceEventSeqs: [call.seq] },
  );
  session.append('step/end', { turn, step: 1 });
  session.append('step/start', { turn, step: 2 });
  const textChunk = session.append('assistant/chunk', {
    turn,
    step: 2,
    chunk: { type: 'text-delta', id: 't0', delta: `answer ${turn}` },
  });
  const answer = session.append(
    'assistant/message',
    assistant(`a${turn}.2`, `answer ${turn}`, [], { turn, step: 2 }),
    {
      surfaceOp: 'append',
      sourceEventSeqs: [textChunk.seq],
    },
  );
  session.append('step/end', { turn, step: 2 });
  const last = session.append('turn/end', { turn, reason: { kind: 'completed' } }).seq;
  void request;
  return { user: userSeq, call: call.seq, result: result.seq, answer: answer.seq, first, last };
}

/** A JSON round trip, as a store would do. */
export function roundTrip(events: readonly SessionEvent[]): unknown[] {
  return JSON.parse(JSON.stringify(events)) as unknown[];
}

/** An array of `length` zeros with a hole at index 1 (to test that holes are refused). */
export function withHole(length: number): number[] {
  const array = new Array<number>(length).fill(0);
  delete array[1];
  return array;
}

/** Two complete turns and a third that crashed while its model was streaming. */
export function crashedMidStream(id: string): Session {
  const session = Session.create({ id, clock: tickingClock() });
  recordToolTurn(session, 1);
  recordToolTurn(session, 2);
  session.append('turn/start', { turn: 3 });
  session.append('user/message', user('u3', 'and now?'), { surfaceOp: 'append' });
  session.append('step/start', { turn: 3, step: 1 });
  session.append('assistant/chunk', {
    turn: 3,
    step: 1,
    chunk: { type: 'text-delta', id: 't0', delta: 'stream cut by a cr' },
  });
  return session;
}

/** The seqs the `assistant/message` events of `events` cite: the finished chunks. */
export function finishedSeqs(events: readonly SessionEvent[]): Set<number> {
  const finished = new Set<number>();
  for (const event of events) {
    if (event.type === 'assistant/message')
      for (const seq of event.sourceEventSeqs ?? []) finished.add(seq);
  }
  return finished;
}

/** What a store's fast-path load hands over: finished chunks as stubs, JSON everywhere else. */
export function elidedLoad(events: readonly SessionEvent[]): SessionEvent[] {
  const finished = finishedSeqs(events);
  return events.map((event) =>
    event.type === 'assistant/chunk' && finished.has(event.seq)
      ? {
          seq: event.seq,
          time: event.time,
          type: event.type,
          data: elidedChunkData(Buffer.byteLength(JSON.stringify(event.data))),
        }
      : (JSON.parse(JSON.stringify(event)) as SessionEvent),
  );
}

/**
 * An event written as a store holds it, of any type and with any JSON data, for fixtures that
 * build a log by hand. Unchecked: only admission gives an event its typed data, and a fixture may
 * hold one admission refuses. (A literal of a type outside the vocabulary is no `SessionEvent`,
 * whose foreign member's data is `never`.)
 */
export function rawEvent(fields: EventEnvelope<string, JsonValue>): SessionEvent {
  return fields as SessionEvent;
}
