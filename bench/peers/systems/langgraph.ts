/**
 * LangGraph's `SqliteSaver` (@langchain/langgraph-checkpoint-sqlite, pinned in
 * bench/package.json) under the smallest graph that records a turn like an agent does:
 * START → agent (an assistant message with a tool call) → tools (the result) → END, one
 * `invoke` per turn with `durability: 'sync'`, the default messages channel. The saver's SQLite
 * runs as it configures itself (WAL; synchronous as better-sqlite3 defaults it, NORMAL).
 * Resume is a fresh saver and graph, then `getState`.
 */
import { join } from 'node:path';
import { type PeerTurn, PreparedPeerTurns } from '../conversation.js';
import { directoryBytes } from '../disk.js';
import type { BenchSystem, ResumeTarget, SessionRecorder, SystemStore } from '../system.js';

interface RunConfig {
  readonly configurable: { readonly thread_id: string };
}

interface CompiledGraph {
  invoke(input: object, options: RunConfig & { readonly durability: 'sync' }): Promise<unknown>;
  getState(config: RunConfig): Promise<{ readonly values: { readonly messages?: unknown[] } }>;
}

interface GraphBuilder {
  addNode(name: string, run: (state: unknown, config: RunConfig) => object): GraphBuilder;
  addEdge(from: string, to: string): GraphBuilder;
  compile(options: { readonly checkpointer: unknown }): CompiledGraph;
}

interface LangGraphModule {
  readonly StateGraph: new (schema: unknown) => GraphBuilder;
  readonly StateSchema: new (fields: object) => unknown;
  readonly MessagesValue: unknown;
  readonly START: string;
  readonly END: string;
}

interface MessagesModule {
  readonly HumanMessage: new (fields: object) => object;
  readonly AIMessage: new (fields: object) => object;
  readonly ToolMessage: new (fields: object) => object;
}

interface Saver {
  readonly db: { close(): void };
}

interface SaverModule {
  readonly SqliteSaver: { fromConnString(file: string): Saver };
}

const GRAPH_MODULE: string = '@langchain/langgraph';
const MESSAGES_MODULE: string = '@langchain/core/messages';
const SAVER_MODULE: string = '@langchain/langgraph-checkpoint-sqlite';
const DB_FILE = 'checkpoints.db';

interface Loaded {
  readonly graph: LangGraphModule;
  readonly messages: MessagesModule;
  readonly saver: SaverModule;
}

async function load(): Promise<Loaded> {
  const [graph, messages, saver] = await Promise.all([
    import(GRAPH_MODULE) as Promise<LangGraphModule>,
    import(MESSAGES_MODULE) as Promise<MessagesModule>,
    import(SAVER_MODULE) as Promise<SaverModule>,
  ]);
  return { graph, messages, saver };
}

/** The graph over `saver`; its nodes emit the turn pending for the invoking thread. */
function build(loaded: Loaded, saver: Saver, pending: Map<string, PeerTurn>): CompiledGraph {
  const { StateGraph, StateSchema, MessagesValue, START, END } = loaded.graph;
  const { AIMessage, ToolMessage } = loaded.messages;
  const turnOf = (config: RunConfig): PeerTurn => {
    const turn = pending.get(config.configurable.thread_id);
    if (turn === undefined) throw new Error('no pending turn for the thread');
    return turn;
  };
  return new StateGraph(new StateSchema({ messages: MessagesValue }))
    .addNode('agent', (_state, config) => {
      const turn = turnOf(config);
      return {
        messages: [
          new AIMessage({
            content: turn.assistant,
            tool_calls: [
              { id: turn.callId, name: turn.toolName, args: JSON.parse(turn.arguments) as object },
            ],
          }),
        ],
      };
    })
    .addNode('tools', (_state, config) => {
      const turn = turnOf(config);
      return { messages: [new ToolMessage({ content: turn.result, tool_call_id: turn.callId })] };
    })
    .addEdge(START, 'agent')
    .addEdge('agent', 'tools')
    .addEdge('tools', END)
    .compile({ checkpointer: saver });
}

class LangGraphRecorder implements SessionRecorder {
  private readonly turns = new PreparedPeerTurns();

  constructor(
    private readonly app: CompiledGraph,
    private readonly human: MessagesModule['HumanMessage'],
    private readonly pending: Map<string, PeerTurn>,
    private readonly id: string,
  ) {}

  prepareTurn(): void {
    this.turns.prepare();
  }

  async appendTurn(): Promise<void> {
    const turn = this.turns.take();
    this.pending.set(this.id, turn);
    await this.app.invoke(
      { messages: [new this.human({ content: turn.user })] },
      { configurable: { thread_id: this.id }, durability: 'sync' },
    );
  }

  async derive(): Promise<number> {
    const state = await this.app.getState({ configurable: { thread_id: this.id } });
    return state.values.messages?.length ?? 0;
  }

  async close(): Promise<void> {}
}

export const LANGGRAPH_SYSTEM: BenchSystem = {
  name: 'LangGraph SqliteSaver',
  role: 'peer',
  durability: 'non-durable',
  recordsPerTurn: 3,
  // Every checkpoint holds the whole message list: bytes and time grow with the square of the
  // session: at 200 turns a turn costs ~100 ms, and 5,000 turns would take days.
  maxTurns: 100,
  maxConcurrentTurns: 10,
  async open(dir: string): Promise<SystemStore> {
    const loaded = await load();
    const saver = loaded.saver.SqliteSaver.fromConnString(join(dir, DB_FILE));
    const pending = new Map<string, PeerTurn>();
    const app = build(loaded, saver, pending);
    return {
      async openSession(id: string) {
        return new LangGraphRecorder(app, loaded.messages.HumanMessage, pending, id);
      },
      async bytes() {
        return directoryBytes(dir);
      },
      async close() {
        saver.db.close();
      },
    };
  },
};

export const LANGGRAPH_RESUME: ResumeTarget = {
  name: 'LangGraph SqliteSaver',
  from: LANGGRAPH_SYSTEM.name,
  role: 'peer',
  async prepare(dir: string, id: string) {
    const loaded = await load();
    return async () => {
      const saver = loaded.saver.SqliteSaver.fromConnString(join(dir, DB_FILE));
      const app = build(loaded, saver, new Map());
      const state = await app.getState({ configurable: { thread_id: id } });
      return {
        messages: state.values.messages?.length ?? 0,
        async close() {
          saver.db.close();
        },
      };
    };
  },
};
