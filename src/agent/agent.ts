/**
 * An agent: one session and the configuration that stays the same across its turns.
 */
import type { Session } from '../core/index.js';
import { runTurn } from './turn.js';
import { streamTurn, type TurnStream } from './turn-stream.js';
import type { TurnConfig, TurnInput, TurnResult } from './types.js';

/** What an {@link Agent} holds: the session it records to, and the turn configuration. */
export interface AgentOptions extends TurnConfig {
  readonly session: Session;
}

/**
 * Runs turns on one session with fixed model, tools, system prompt and settings.
 *
 * ```ts
 * const agent = new Agent({ session, model, tools: [readFile], system: 'You are terse.' });
 * const result = await agent.run('What is in README.md?');
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

  /** Runs one turn with `input`; see {@link runTurn} for what is recorded and returned. */
  run(input: TurnInput, options: { readonly signal?: AbortSignal } = {}): Promise<TurnResult> {
    return runTurn({
      ...this.config,
      session: this.session,
      input,
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    });
  }

  /**
   * Runs one turn with `input` and streams its events as they are recorded; see
   * {@link streamTurn}.
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
}
