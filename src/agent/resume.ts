/**
 * Resuming an unfinished turn. A turn that crash repair closed (`interrupted`), or that was
 * cancelled, failed or ran out of steps, left the model mid-task: its surface ends with the
 * repaired tool outcomes (`TOOL_OUTCOME_UNKNOWN`, `TOOL_NOT_STARTED`) or a partial answer. A
 * resume is a new turn (a closed turn is never reopened: the log stays append-only and every
 * bracket well nested) that starts with no user input, only a `context/message` saying which
 * turn it continues and why, so the model reads the outcomes and decides what to do.
 */
import type { Session, TurnEndReason } from '../core/index.js';
import { endsInsideTurn } from '../core/index.js';
import type { TurnOpening } from './turn.js';

/** The turn a resume continues, and how it ended. */
export interface ResumableTurn {
  readonly turn: number;
  readonly reason: TurnEndReason['kind'];
}

/**
 * The last turn when it ended unfinished (any reason but `completed`, or no `turn/end` at all:
 * repair will close it as `interrupted`); `undefined` when there is nothing to resume.
 */
export function resumableTurn(session: Session): ResumableTurn | undefined {
  const inside = endsInsideTurn(session);
  for (let seq = session.seq - 1; seq >= 0; seq--) {
    const event = session.event(seq);
    if (event?.type === 'turn/start' && inside) {
      return { turn: event.data.turn, reason: 'interrupted' };
    }
    if (event?.type === 'turn/end') {
      const { turn, reason } = event.data;
      return reason.kind === 'completed' ? undefined : { turn, reason: reason.kind };
    }
  }
  return undefined;
}

const WHY: Readonly<Record<TurnEndReason['kind'], string>> = {
  completed: 'completed',
  interrupted: 'was interrupted (the session stopped unexpectedly)',
  aborted: 'was cancelled',
  error: 'ended with a provider error',
  'context-overflow': 'ended because the conversation no longer fit the context window',
  'max-tokens': 'stopped at the output token limit',
  'max-steps': 'stopped at the step limit',
};

/** The opening of a resume turn: `turn/start {resumes}` and the notice the model reads. */
export function resumeOpening(resumed: ResumableTurn): TurnOpening {
  const text = `[resumed: turn ${resumed.turn} ${WHY[resumed.reason]} before it finished. Continue the task from where it stopped. A tool result marked TOOL_OUTCOME_UNKNOWN may or may not have taken effect: check the current state before repeating it.]`;
  return {
    start: { resumes: resumed.turn },
    open: (session) =>
      session.append(
        'context/message',
        {
          id: crypto.randomUUID(),
          role: 'user',
          content: [{ type: 'text', text }],
          source: { kind: 'resume', turn: resumed.turn, reason: resumed.reason },
        },
        { surfaceOp: 'append' },
      ),
  };
}
