/**
 * Where the log's last turn stands, read from its tail: the middleware keeps no state of its
 * own between calls, so a middleware made per request (a server's route handler) continues the
 * turn an earlier one left open.
 */
import type { Session, ToolCallBlock } from '../../core/index.js';

/** A turn without its `turn/end`. */
export interface OpenTurn {
  readonly turn: number;
  /** The last step begun in the turn (0 before the first). */
  readonly step: number;
  /** The last step has no `step/end`. */
  readonly stepOpen: boolean;
  /**
   * The open step's message asked for tools and waits for their results: the calls that have
   * none yet. Undefined when the open step has no message (a stream cut by a crash).
   */
  readonly waiting: readonly ToolCallBlock[] | undefined;
  /** The seq of the open step's message, which a result for a call that never ran cites. */
  readonly messageSeq?: number;
}

/** The session's open turn, or `undefined` when its last turn ended (or it has none). */
export function openTurnOf(session: Session): OpenTurn | undefined {
  const answered = new Set<string>();
  let step: number | undefined;
  let stepOpen = false;
  let calls: ToolCallBlock[] | undefined;
  let messageSeq: number | undefined;
  for (let seq = session.seq - 1; seq >= 0; seq--) {
    const event = session.event(seq);
    if (event === undefined) continue;
    switch (event.type) {
      case 'turn/end':
        return undefined;
      case 'turn/start': {
        const waiting = calls?.filter((call) => !answered.has(call.id));
        return {
          turn: event.data.turn,
          step: step ?? 0,
          stepOpen,
          waiting: stepOpen ? waiting : undefined,
          ...(stepOpen && messageSeq !== undefined ? { messageSeq } : {}),
        };
      }
      case 'step/end':
      case 'step/start':
        if (step === undefined) {
          step = event.data.step;
          stepOpen = event.type === 'step/start';
        }
        break;
      case 'assistant/message':
        if (step === undefined && calls === undefined) {
          const { message } = event.data;
          calls = message.content.filter((block) => block.type === 'tool-call');
          messageSeq = seq;
        }
        break;
      case 'tool/result':
        if (step === undefined) {
          const { message } = event.data;
          answered.add(message.content[0].toolCallId);
        }
        break;
    }
  }
  return undefined;
}
