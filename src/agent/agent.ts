/**
 * An agent: one session and the configuration that stays the same across its turns, with the
 * session's steering and follow-up queue.
 */
import type { Session, TurnEndReason } from '../core/index.js';
import { isDurable } from '../core/index.js';
import { checkInput } from './checks.js';
import { AgentError } from './errors.js';
import { checkRequestId, checkResend, findRequest } from './requests.js';
import { resumableTurn, resumeOpening } from './resume.js';
import {
  deliver,
  enqueue,
  nextFollowUp,
  type PendingMessages,
  pendingMessages,
  type QueuedMessage,
} from './steering.js';
import { runTurn, startTurn, type TurnOpening } from './turn.js';
import { streamTurn, type TurnStream } from './turn-stream.js';
import type { TurnConfig, TurnInput, TurnResult } from './types.js';

/** What an {@link Agent} holds: the session it records to, and the turn configuration. */
export interface AgentOptions extends TurnConfig {
  readonly session: Session;
}

/** Options of {@link Agent.run} and {@link Agent.resume}. */
export interface AgentRunOptions {
  readonly signal?: AbortSignal;
}

/** Options of {@link Agent.run}: a prompt may carry the client's request id. */
export interface AgentPromptOptions extends AgentRunOptions {
  /** See {@link RunTurnOptions.requestId}: a resend with the same id is admitted once. */
  readonly requestId?: string;
}

/** Options of {@link Agent.steer} and {@link Agent.followUp}. */
export interface QueueOptions {
  /**
   * The client's id for this message: a resend with the same id queues nothing and resolves
   * with the message queued the first time.
   */
  readonly requestId?: string;
}

/**
 * Runs turns on one session with fixed model, tools, system prompt and settings, and takes
 * messages while a turn runs: {@link Agent.steer} enters the running turn at its next step
 * boundary, {@link Agent.followUp} runs after it as a turn of its own. Both are in the log from
 * the moment they are queued, so a crash loses neither; {@link Agent.resume} continues after one.
 *
 * ```ts
 * const agent = new Agent({ session, model, tools: [readFile], system: 'You are terse.' });
 * const running = agent.run('What is in README.md?');
 * await agent.steer('Only the first section, please.'); // seen before the next model call
 * const result = await running;
 * ```
 */
export class Agent {
  readonly session: Session;
  readonly config: TurnConfig;

  constructor(options: AgentOptions) {
    const { session, ...config } = options;
    this.session = session;
    this.config = config;
  }

  /**
   * Runs one turn with `input`, then each pending follow-up as a turn of its own (unless a turn
   * is cancelled or fails: then the follow-ups stay queued). Resolves with the result of the
   * last turn run; see {@link runTurn} for what is recorded.
   *
   * With `requestId`, a resent prompt is admitted once. A worker that takes over a session whose
   * last writer died answers the client's resend with the turn the prompt started, resuming it
   * first when the crash interrupted it:
   *
   * ```ts
   * const result = await agent.run(body.prompt, { requestId: request.headers['idempotency-key'] });
   * if (result.repeated) console.log(`request seen before: turn ${result.turn}`);
   * ```
   */
  async run(input: TurnInput, options: AgentPromptOptions = {}): Promise<TurnResult> {
    const result = await runTurn({
      ...this.turnOptions(options),
      input,
      ...(options.requestId === undefined ? {} : { requestId: options.requestId }),
    });
    return this.followUps(result, options);
  }

  /**
   * Queues `input` for the running turn: appended at once as `queue/steer`, delivered as a
   * `user/message` at the turn's next step boundary (after all tool results of the current
   * step, before the next model call; a turn whose model had finished answering takes one more
   * step for it). Queued while no turn runs, it enters the next turn's first step. Resolves with
   * the queued message once it is durable (at once for a session without a barrier).
   *
   * @throws AgentError `INVALID_INPUT` for empty input.
   */
  steer(input: TurnInput, options: QueueOptions = {}): Promise<QueuedMessage> {
    return this.queue('steer', input, options);
  }

  /**
   * Queues `input` to run after the current turn ends, as a new turn whose `user/message` cites
   * the `queue/follow-up` event. Queued while no turn runs, it waits for the next
   * {@link Agent.run} or {@link Agent.resume}. Resolves once it is durable.
   *
   * @throws AgentError `INVALID_INPUT` for empty input.
   */
  followUp(input: TurnInput, options: QueueOptions = {}): Promise<QueuedMessage> {
    return this.queue('follow-up', input, options);
  }

  /** The queued messages not delivered yet, read from the log. */
  get pending(): PendingMessages {
    return pendingMessages(this.session);
  }

  /**
   * Continues what was left unfinished, without new user input: first the last turn if it
   * ended unfinished (crash repair's `interrupted`, or `aborted`, `error`, `context-overflow`,
   * `max-tokens`, `max-steps`) as a new turn `turn/start {resumes}` whose model sees the
   * repaired tool outcomes and decides; or, after a completed turn, pending steering messages as
   * a turn of their own; then pending follow-ups. Resolves with the last turn's result.
   *
   * @throws AgentError `NOTHING_TO_RESUME` when the last turn completed and nothing is queued.
   */
  async resume(options: AgentRunOptions = {}): Promise<TurnResult> {
    const resumed = resumableTurn(this.session);
    const pending = pendingMessages(this.session);
    let opening: TurnOpening | undefined;
    if (resumed !== undefined) opening = resumeOpening(resumed);
    else if (pending.steers.length > 0) opening = { open: () => undefined };
    else {
      const followUp = nextFollowUp(this.session);
      if (followUp === undefined) {
        throw new AgentError(
          'NOTHING_TO_RESUME',
          `expected an unfinished last turn or a queued message to resume in session ${this.session.header.id}, found ${describeLast(this.session)} and an empty queue`,
        );
      }
      opening = followUpOpening(followUp);
    }
    const result = await startTurn(this.turnOptions(options), opening);
    return this.followUps(result, options);
  }

  /**
   * Runs one turn with `input` and streams its events as they are recorded; see
   * {@link streamTurn}. Steering messages enter it as they do a {@link Agent.run} turn;
   * follow-ups stay queued for the next `run` or `resume` (a stream is one turn).
   *
   * ```ts
   * const stream = agent.stream('What is in README.md?');
   * for await (const event of stream) if (event.type === 'text-delta') process.stdout.write(event.delta);
   * const { reason, usage } = await stream.result;
   * ```
   */
  stream(input: TurnInput, options: { readonly signal?: AbortSignal } = {}): TurnStream {
    return streamTurn({
      ...this.config,
      session: this.session,
      input,
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    });
  }

  /** A copy of this agent with some configuration replaced (same session). */
  with(changes: Partial<TurnConfig>): Agent {
    return new Agent({ ...this.config, ...changes, session: this.session });
  }

  private async queue(
    kind: 'steer' | 'follow-up',
    input: TurnInput,
    options: QueueOptions,
  ): Promise<QueuedMessage> {
    const content = checkInput(input);
    const requestId =
      options.requestId === undefined ? undefined : checkRequestId(options.requestId);
    const admitted = requestId === undefined ? undefined : findRequest(this.session, requestId);
    if (admitted !== undefined && requestId !== undefined) {
      const type = kind === 'steer' ? 'queue/steer' : 'queue/follow-up';
      checkResend(admitted, [type], content, requestId);
      return { kind, seq: admitted.seq, message: admitted.message };
    }
    const { queued, event } = enqueue(this.session, kind, content, requestId);
    this.config.hooks?.onEvent?.(event);
    const barrier = this.config.barrier ?? (isDurable(this.session) ? this.session : undefined);
    await barrier?.flush();
    return queued;
  }

  private async followUps(first: TurnResult, options: AgentRunOptions): Promise<TurnResult> {
    let last = first;
    while (!stopsTheQueue(last.reason) && options.signal?.aborted !== true) {
      const next = nextFollowUp(this.session);
      if (next === undefined) break;
      last = await startTurn(this.turnOptions(options), followUpOpening(next));
    }
    return last;
  }

  private turnOptions(options: AgentRunOptions) {
    return {
      ...this.config,
      session: this.session,
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    };
  }
}

/** A follow-up turn opens with the queued message itself, delivered. */
function followUpOpening(queued: QueuedMessage): TurnOpening {
  return { open: (session) => deliver(session, queued) };
}

/** After a cancelled or failed turn the user decides what comes next: follow-ups wait. */
function stopsTheQueue(reason: TurnEndReason): boolean {
  return reason.kind === 'aborted' || reason.kind === 'error' || reason.kind === 'context-overflow';
}

function describeLast(session: Session): string {
  for (let seq = session.seq - 1; seq >= 0; seq--) {
    const event = session.event(seq);
    if (event?.type === 'turn/end') return `turn ${event.data.turn} completed`;
  }
  return 'no turn';
}
