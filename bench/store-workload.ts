/**
 * The store benchmark's workload: turns of a streamed agent conversation as the agent loop
 * appends them. A turn is a `user/message` (~460 B), K `assistant/chunk` events (~150 B each),
 * the final `assistant/message` (the concatenated deltas plus one tool call, ~8.4 KB, citing its
 * chunks), the `tool/call` (~165 B, citing the message that requested it) and the `tool/result`
 * (~2.2 KB, citing the call): K + 4 events, 204 at K = 200, as in the research anchors.
 *
 * Deterministic: the texts come from the seeded pool of `workload.ts`, and {@link benchClock}
 * stamps times from a counter, so two runs (and two backends) store byte-identical events.
 */
import {
  type AssistantChunkData,
  type AssistantMessageData,
  type ProvenanceIntent,
  Session,
  type SessionEvent,
  type SurfaceIntent,
  type ToolCallData,
  type ToolResultData,
  type UserMessage,
} from '../src/core/index.js';
import {
  assistantData,
  chunkData,
  DELTA_CHARS,
  TextSource,
  toolCallData,
  toolResultData,
  userMessage,
} from './workload.js';

/** Stream chunks per turn (K). */
export const CHUNKS_PER_TURN = 200;
/** Events per turn: user message, K chunks, assistant message, tool call, tool result. */
export const EVENTS_PER_TURN = CHUNKS_PER_TURN + 4;
/** The seed of every store benchmark run's texts. */
export const STORE_SEED = 11;

/** One append of a turn, as the agent loop issues it. */
export type TurnAppend =
  | { readonly type: 'user/message'; readonly data: UserMessage; readonly intent: SurfaceIntent }
  | { readonly type: 'assistant/chunk'; readonly data: AssistantChunkData }
  | {
      readonly type: 'assistant/message';
      readonly data: AssistantMessageData;
      readonly intent: SurfaceIntent;
    }
  | { readonly type: 'tool/call'; readonly data: ToolCallData; readonly intent: ProvenanceIntent }
  | { readonly type: 'tool/result'; readonly data: ToolResultData; readonly intent: SurfaceIntent };

/**
 * A string with its own storage. Slices of the text pool would be V8 sliced strings that share
 * the pool; text arriving from a provider is parsed, so every delta owns its characters.
 */
function fresh(text: string): string {
  return JSON.parse(JSON.stringify(text)) as string;
}

/** Hands out the appends of consecutive turns. */
export class TurnSource {
  private readonly text: TextSource;

  constructor(seed = STORE_SEED) {
    this.text = new TextSource(seed);
  }

  /** The appends of turn `turn`, whose first event will get seq `firstSeq`. */
  turn(turn: number, firstSeq: number): TurnAppend[] {
    const out: TurnAppend[] = [
      {
        type: 'user/message',
        data: userMessage(`u${turn}`, fresh(this.text.take(300))),
        intent: { surfaceOp: 'append' },
      },
    ];
    const deltas: string[] = [];
    const chunkSeqs: number[] = [];
    for (let i = 0; i < CHUNKS_PER_TURN; i++) {
      const delta = fresh(this.text.take(DELTA_CHARS));
      deltas.push(delta);
      chunkSeqs.push(firstSeq + 1 + i);
      out.push({ type: 'assistant/chunk', data: chunkData(turn, 0, delta) });
    }
    const messageSeq = firstSeq + 1 + CHUNKS_PER_TURN;
    out.push(
      {
        type: 'assistant/message',
        data: assistantData(turn, 0, `a${turn}`, deltas.join(''), `c${turn}`),
        intent: { surfaceOp: 'append', sourceEventSeqs: chunkSeqs },
      },
      {
        type: 'tool/call',
        data: toolCallData(turn, 0, `c${turn}`),
        intent: { sourceEventSeqs: [messageSeq] },
      },
      {
        type: 'tool/result',
        data: toolResultData(turn, 0, `r${turn}`, `c${turn}`, fresh(this.text.take(2048))),
        intent: { surfaceOp: 'append', sourceEventSeqs: [messageSeq + 1] },
      },
    );
    return out;
  }
}

/** Appends one event of a turn (the switch picks the overload of `append`). */
export function appendTurnEvent(session: Session, append: TurnAppend): void {
  switch (append.type) {
    case 'user/message':
      session.append(append.type, append.data, append.intent);
      return;
    case 'assistant/chunk':
      session.append(append.type, append.data);
      return;
    case 'assistant/message':
      session.append(append.type, append.data, append.intent);
      return;
    case 'tool/call':
      session.append(append.type, append.data, append.intent);
      return;
    case 'tool/result':
      session.append(append.type, append.data, append.intent);
      return;
  }
}

/** Epoch ms of the first stamp of {@link benchClock}. */
export const BENCH_TIME0 = 1_700_000_000_000;

/** A deterministic session clock: one ms per call, so every event has its own time. */
export function benchClock(): () => number {
  let time = BENCH_TIME0;
  return () => time++;
}

/**
 * `turns` turns as the events a session makes of them (admitted by a core `Session`, so they
 * are exactly what a live session hands its store), grouped per turn.
 */
export function turnEvents(turns: number, seed = STORE_SEED): SessionEvent[][] {
  const source = new TurnSource(seed);
  const session = Session.create({ id: 'bench', clock: benchClock() });
  const out: SessionEvent[][] = [];
  for (let turn = 0; turn < turns; turn++) {
    const first = session.seq;
    for (const append of source.turn(turn, first)) appendTurnEvent(session, append);
    const events: SessionEvent[] = [];
    for (let seq = first; seq < session.seq; seq++) events.push(session.event(seq) as SessionEvent);
    out.push(events);
  }
  return out;
}
