/**
 * A turn as a typed async iterable: `streamTurn` runs `runTurn` and hands each event the loop
 * appends, translated by `turnStreamEvent`, to every iterator. The loop never waits for a reader:
 * the log is written at the provider's pace, and events wait in the stream's buffer until read,
 * so a slow or departed reader can neither stall the turn nor lose anything from the log.
 */
import type { SessionEvent } from '../core/index.js';
import { type TurnStreamEvent, turnStreamEvent } from './stream-events.js';
import { runTurn } from './turn.js';
import type { RunTurnOptions, TurnResult } from './types.js';

/**
 * A running turn: iterate it for its events (each iterator starts at the first event), await
 * `result` for what it did. Iteration ends after `turn-end`; when the turn throws (misuse, a
 * throwing hook, a failing store) iteration throws that error after the events before it, and
 * `result` rejects with it. Breaking out of a loop stops reading only: the turn goes on; call
 * `abort()` (or fire the `signal` you passed) to cancel it.
 */
export interface TurnStream extends AsyncIterable<TurnStreamEvent> {
  /** The turn's result; rejects when `runTurn` would throw. */
  readonly result: Promise<TurnResult>;
  /** Cancels the turn, as firing its signal does (`turn/end {kind: 'aborted', cause}`). */
  abort(reason?: unknown): void;
}

/**
 * Runs one turn like {@link runTurn} and streams its events as they are recorded.
 *
 * @example
 * ```ts
 * import { Session } from 'palimpsest';
 * import { streamTurn } from 'palimpsest/agent';
 * import { scriptedModel } from 'palimpsest/testing';
 *
 * const session = Session.create({ id: 'stream-example' });
 * const stream = streamTurn({ session, model: scriptedModel([{ text: 'Hello!' }]), input: 'hi' });
 * let shown = '';
 * for await (const event of stream) {
 *   if (event.type === 'text-delta') shown += event.delta; // a UI would print it here
 * }
 * console.log(shown); // 'Hello!'
 * console.log((await stream.result).reason.kind); // 'completed'
 * ```
 */
export function streamTurn(options: RunTurnOptions): TurnStream {
  const controller = new AbortController();
  const signal =
    options.signal === undefined
      ? controller.signal
      : AbortSignal.any([options.signal, controller.signal]);
  const buffer = new EventBuffer();
  const onEvent = options.hooks?.onEvent;
  const result = runTurn({
    ...options,
    signal,
    hooks: {
      ...options.hooks,
      onEvent: (event: SessionEvent) => {
        onEvent?.(event);
        const streamed = turnStreamEvent(event);
        if (streamed !== undefined) buffer.push(streamed);
      },
    },
  });
  result.then(
    () => buffer.close(undefined),
    (error: unknown) => buffer.close({ error }),
  );
  return {
    result,
    abort: (reason?: unknown) => controller.abort(reason),
    [Symbol.asyncIterator]: () => buffer.reader(),
  };
}

/** Events in arrival order, read by any number of independent readers. */
class EventBuffer {
  private readonly events: TurnStreamEvent[] = [];
  private closed: { readonly failure: { readonly error: unknown } | undefined } | undefined;
  private wake: (() => void) | undefined;
  private arrived: Promise<void> | undefined;

  push(event: TurnStreamEvent): void {
    this.events.push(event);
    this.signal();
  }

  close(failure: { readonly error: unknown } | undefined): void {
    this.closed = { failure };
    this.signal();
  }

  reader(): AsyncIterator<TurnStreamEvent> {
    let index = 0;
    let finished = false;
    const done = (): IteratorResult<TurnStreamEvent> => ({ done: true, value: undefined });
    return {
      next: async () => {
        for (;;) {
          if (finished) return done();
          const event = this.events[index];
          if (event !== undefined) {
            index += 1;
            return { done: false, value: event };
          }
          if (this.closed !== undefined) {
            finished = true;
            if (this.closed.failure !== undefined) throw this.closed.failure.error;
            return done();
          }
          await this.next();
        }
      },
      return: async () => {
        finished = true;
        return done();
      },
    };
  }

  /** Resolves when something arrives; one promise shared by every waiting reader. */
  private next(): Promise<void> {
    this.arrived ??= new Promise<void>((resolve) => {
      this.wake = resolve;
    });
    return this.arrived;
  }

  private signal(): void {
    const wake = this.wake;
    this.wake = undefined;
    this.arrived = undefined;
    wake?.();
  }
}
