/**
 * pi's `SessionManager` (@mariozechner/pi-coding-agent, pinned in bench/package.json): three
 * `appendMessage` calls per turn (user, assistant with the tool call, tool result), as pi's
 * agent session persists on each message end; resume is `SessionManager.open` plus
 * `buildSessionContext()`, what pi does before its next request.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { PreparedPeerTurns } from '../conversation.js';
import { directoryBytes } from '../disk.js';
import type { BenchSystem, ResumeTarget, SessionRecorder } from '../system.js';

/** The part of pi's API the benchmark calls (typed here: bench/ deps are an install of their own). */
interface PiSessionManager {
  appendMessage(message: object): string;
  buildSessionContext(): { readonly messages: readonly unknown[] };
  getSessionFile(): string | undefined;
}

interface PiModule {
  readonly SessionManager: {
    create(cwd: string, sessionDir?: string): PiSessionManager;
    open(path: string, sessionDir?: string): PiSessionManager;
  };
}

const PI_MODULE: string = '@mariozechner/pi-coding-agent';

async function loadPi(): Promise<PiModule> {
  return (await import(PI_MODULE)) as PiModule;
}

const ZERO_COST = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 };

class PiRecorder implements SessionRecorder {
  private readonly turns = new PreparedPeerTurns();
  private time = 1_700_000_000_000;

  constructor(private readonly manager: PiSessionManager) {}

  prepareTurn(): void {
    this.turns.prepare();
  }

  async appendTurn(): Promise<void> {
    const turn = this.turns.take();
    this.manager.appendMessage({
      role: 'user',
      content: [{ type: 'text', text: turn.user }],
      timestamp: this.time++,
    });
    this.manager.appendMessage({
      role: 'assistant',
      content: [
        { type: 'text', text: turn.assistant },
        {
          type: 'toolCall',
          id: turn.callId,
          name: turn.toolName,
          arguments: JSON.parse(turn.arguments) as object,
        },
      ],
      api: 'bench',
      provider: 'bench',
      model: 'bench-model-1',
      usage: {
        input: 12_000 + turn.turn,
        output: 900,
        cacheRead: 0,
        cacheWrite: 0,
        totalTokens: 12_900 + turn.turn,
        cost: ZERO_COST,
      },
      stopReason: 'toolUse',
      timestamp: this.time++,
    });
    this.manager.appendMessage({
      role: 'toolResult',
      toolCallId: turn.callId,
      toolName: turn.toolName,
      content: [{ type: 'text', text: turn.result }],
      isError: false,
      timestamp: this.time++,
    });
  }

  async derive(): Promise<number> {
    return this.manager.buildSessionContext().messages.length;
  }

  async close(): Promise<void> {}
}

export const PI_SYSTEM: BenchSystem = {
  name: 'pi SessionManager',
  role: 'peer',
  durability: 'non-durable',
  recordsPerTurn: 3,
  async open(dir: string) {
    const { SessionManager } = await loadPi();
    return {
      async openSession(id: string) {
        // One session directory per id, so resume finds its file without pi's listing.
        return new PiRecorder(SessionManager.create(dir, join(dir, id)));
      },
      async bytes() {
        return directoryBytes(dir);
      },
      async close() {},
    };
  },
};

export const PI_RESUME: ResumeTarget = {
  name: 'pi SessionManager',
  from: PI_SYSTEM.name,
  role: 'peer',
  async prepare(dir: string, id: string) {
    const { SessionManager } = await loadPi();
    const sessionDir = join(dir, id);
    const file = readdirSync(sessionDir).find((name) => name.endsWith('.jsonl'));
    if (file === undefined) throw new Error(`no pi session file in ${sessionDir}`);
    return async () => {
      const manager = SessionManager.open(join(sessionDir, file), sessionDir);
      return { messages: manager.buildSessionContext().messages.length, async close() {} };
    };
  },
};
