/**
 * Checkpoints a live session appends by itself: a `log/checkpoint` after each turn, or every
 * so many events, each hashing only the events since the one before (see `ChainTracker`).
 */
import { InvalidArgumentError, type Session } from '../../core/index.js';
import { ChainTracker } from '../integrity/checkpoint.js';
import type { CheckpointSigner } from '../integrity/signature.js';

/** When a live session appends checkpoints of its hash chain, and who signs them. */
export interface CheckpointPolicy {
  /** After each `turn/end` (`'turn'`), or once this many events followed the last checkpoint. */
  readonly every: 'turn' | number;
  /** Signs each checkpoint (Ed25519), so one who can rewrite the store cannot forge them. */
  readonly signer?: CheckpointSigner;
}

/**
 * Has `session` append a checkpoint whenever `policy` says one is due. The checkpoint is appended
 * in a microtask after the event that made it due (a listener may not append while the session
 * publishes), before any later await of the writer.
 */
export function keepCheckpoints(
  session: Session,
  policy: CheckpointPolicy,
  report: (error: unknown) => void,
): void {
  const every = policy.every;
  if (every !== 'turn' && !(Number.isSafeInteger(every) && every > 0)) {
    throw new InvalidArgumentError(
      `expected checkpoints every 'turn' or every n > 0 events, found ${String(every)}`,
    );
  }
  const tracker = ChainTracker.resume(session.header, session.events, policy.signer);
  let since = 0;
  let queued = false;
  session.subscribe((event) => {
    tracker.feed(event);
    since = event.type === 'log/checkpoint' ? 0 : since + 1;
    const due = every === 'turn' ? event.type === 'turn/end' : since >= every;
    if (!due || queued) return;
    queued = true;
    queueMicrotask(() => {
      queued = false;
      try {
        session.append('log/checkpoint', tracker.checkpoint());
      } catch (error) {
        report(error);
      }
    });
  });
}
