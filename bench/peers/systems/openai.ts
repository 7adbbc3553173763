/**
 * The OpenAI Agents SDK's `MemorySession` (@openai/agents-core, pinned in bench/package.json),
 * called per turn as the runner's session persistence calls it: `getItems()` to build the input,
 * then `addItems` for the input and for the turn's output (assistant message, function call,
 * its result). RAM only: the SDK ships no file or database session, so there is no resume.
 */
import { PreparedPeerTurns } from '../conversation.js';
import type { BenchSystem, SessionRecorder } from '../system.js';

interface MemorySessionLike {
  getItems(): Promise<readonly unknown[]>;
  addItems(items: readonly object[]): Promise<void>;
}

interface AgentsCoreModule {
  readonly MemorySession: new (options: { readonly logger: object }) => MemorySessionLike;
}

const AGENTS_MODULE: string = '@openai/agents-core';

/** A logger that drops everything and asks the session not to stringify items for it. */
const SILENT_LOGGER = {
  namespace: 'bench',
  dontLogModelData: true,
  dontLogToolData: true,
  debug() {},
  warn() {},
  error() {},
};

class OpenAiRecorder implements SessionRecorder {
  private readonly turns = new PreparedPeerTurns();

  constructor(private readonly session: MemorySessionLike) {}

  prepareTurn(): void {
    this.turns.prepare();
  }

  async appendTurn(): Promise<void> {
    const turn = this.turns.take();
    await this.session.getItems();
    await this.session.addItems([{ type: 'message', role: 'user', content: turn.user }]);
    await this.session.addItems([
      {
        type: 'message',
        role: 'assistant',
        status: 'completed',
        content: [{ type: 'output_text', text: turn.assistant }],
      },
      {
        type: 'function_call',
        callId: turn.callId,
        name: turn.toolName,
        arguments: turn.arguments,
        status: 'completed',
      },
      {
        type: 'function_call_result',
        callId: turn.callId,
        name: turn.toolName,
        status: 'completed',
        output: { type: 'text', text: turn.result },
      },
    ]);
  }

  async derive(): Promise<number> {
    return (await this.session.getItems()).length;
  }

  async close(): Promise<void> {}
}

export const OPENAI_SYSTEM: BenchSystem = {
  name: 'OpenAI Agents MemorySession',
  role: 'peer',
  durability: 'memory',
  recordsPerTurn: 3,
  // addItems copies the whole list and getItems clones it: O(n) per turn, O(n²) per session.
  maxTurns: 500,
  maxConcurrentTurns: 100,
  async open() {
    const { MemorySession } = (await import(AGENTS_MODULE)) as AgentsCoreModule;
    return {
      async openSession() {
        return new OpenAiRecorder(new MemorySession({ logger: SILENT_LOGGER }));
      },
      async close() {},
    };
  },
};
