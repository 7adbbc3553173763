/**
 * palimpsest on each backend as the agent loop drives it: every event of a turn appended to a
 * `LiveSession`, then `await flush()` (the durability barrier), or, for the background group
 * commit variant, a yield to the event loop while the recorder's window commits behind.
 */
import { join } from 'node:path';
import {
  type LiveSession,
  MemoryStore,
  openSession,
  type SessionStore,
} from '../../../src/store/index.js';
import { openJsonlStore } from '../../../src/store/jsonl/index.js';
import { openPostgresStore } from '../../../src/store/postgres/index.js';
import { openSqliteStore } from '../../../src/store/sqlite/index.js';
import { appendTurnEvent, benchClock, type TurnAppend } from '../../store-workload.js';
import { Conversation } from '../conversation.js';
import { directoryBytes } from '../disk.js';
import { pgUrl, schemaBytes, schemaFor } from '../pg.js';
import type {
  BenchSystem,
  PreparedResume,
  ResumeTarget,
  SessionRecorder,
  SystemStore,
} from '../system.js';

type Backend = 'memory' | 'jsonl' | 'sqlite' | 'postgres';

interface Variant {
  readonly name: string;
  readonly backend: Backend;
  readonly durable: boolean;
  /** `turn`: `await flush()` after every turn; `background`: the recorder commits behind. */
  readonly ack: 'turn' | 'background';
  readonly maxTurns?: number;
}

/**
 * Where the durable SQL backends stop: on this shared 2-core machine a synchronous commit per
 * turn takes 10–40 ms, so 5,000-turn rounds of them alone would take most of an hour.
 */
export const DURABLE_SQL_MAX_TURNS = 1_000;

const SQLITE_FILE = 'sessions.db';

function yieldToLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** Opens the variant's store in `dir` (for PostgreSQL, a schema named after `dir`). */
export async function openBackend(
  backend: Backend,
  dir: string,
  durable: boolean,
): Promise<SessionStore> {
  switch (backend) {
    case 'memory':
      return new MemoryStore();
    case 'jsonl':
      return openJsonlStore(dir, { fsync: durable });
    case 'sqlite':
      return openSqliteStore(join(dir, SQLITE_FILE), { synchronous: durable ? 'full' : 'normal' });
    case 'postgres':
      return openPostgresStore({ connectionString: pgUrl(), schema: schemaFor(dir) });
  }
}

class Recorder implements SessionRecorder {
  private readonly conversation = new Conversation();
  private appends: TurnAppend[] = [];

  constructor(
    private readonly session: LiveSession,
    private readonly ack: Variant['ack'],
  ) {}

  prepareTurn(): void {
    this.appends = this.conversation.appends(this.session.seq);
  }

  async appendTurn(): Promise<void> {
    for (const append of this.appends) appendTurnEvent(this.session, append);
    if (this.ack === 'turn') await this.session.flush();
    else await yieldToLoop();
  }

  /** The messages of the next request, as the agent loop reads them per step. */
  async derive(): Promise<number> {
    return this.session.deriveMessageList().length;
  }

  close(): Promise<void> {
    return this.session.close();
  }
}

function system(variant: Variant): BenchSystem {
  return {
    name: variant.name,
    role: 'palimpsest',
    durability:
      variant.backend === 'memory' ? 'memory' : variant.durable ? 'durable' : 'non-durable',
    recordsPerTurn: 204,
    ...(variant.maxTurns === undefined ? {} : { maxTurns: variant.maxTurns }),
    async open(dir: string): Promise<SystemStore> {
      const store = await openBackend(variant.backend, dir, variant.durable);
      return {
        async openSession(id) {
          const session = await openSession(store, id, { clock: benchClock() });
          return new Recorder(session, variant.ack);
        },
        async bytes() {
          if (variant.backend === 'memory') return 0;
          if (variant.backend === 'postgres') return schemaBytes(schemaFor(dir));
          return directoryBytes(dir);
        },
        close: () => store.close(),
      };
    },
  };
}

export const PALIMPSEST_SYSTEMS: readonly BenchSystem[] = [
  system({ name: 'palimpsest memory', backend: 'memory', durable: false, ack: 'turn' }),
  system({ name: 'palimpsest JSONL', backend: 'jsonl', durable: false, ack: 'turn' }),
  system({
    name: 'palimpsest JSONL, group commit',
    backend: 'jsonl',
    durable: false,
    ack: 'background',
  }),
  system({ name: 'palimpsest JSONL durable', backend: 'jsonl', durable: true, ack: 'turn' }),
  system({ name: 'palimpsest SQLite', backend: 'sqlite', durable: false, ack: 'turn' }),
  system({
    name: 'palimpsest SQLite durable',
    backend: 'sqlite',
    durable: true,
    ack: 'turn',
    maxTurns: DURABLE_SQL_MAX_TURNS,
  }),
  system({
    name: 'palimpsest PostgreSQL',
    backend: 'postgres',
    durable: true,
    ack: 'turn',
    maxTurns: DURABLE_SQL_MAX_TURNS,
  }),
];

function resume(name: string, from: string, backend: Backend, elide: boolean): ResumeTarget {
  return {
    name,
    from,
    role: 'palimpsest',
    async prepare(dir: string, id: string): Promise<PreparedResume> {
      return async () => {
        const store = await openBackend(backend, dir, false);
        const session = await openSession(store, id, { chunks: elide ? 'elide' : 'full' });
        const messages = session.deriveMessages().length;
        return {
          messages,
          async close() {
            await session.close();
            await store.close();
          },
        };
      };
    },
  };
}

export const PALIMPSEST_RESUMES: readonly ResumeTarget[] = [
  resume('palimpsest JSONL fast path', 'palimpsest JSONL', 'jsonl', true),
  resume('palimpsest JSONL full replay', 'palimpsest JSONL', 'jsonl', false),
  resume('palimpsest SQLite fast path', 'palimpsest SQLite', 'sqlite', true),
  resume('palimpsest SQLite full replay', 'palimpsest SQLite', 'sqlite', false),
  resume('palimpsest PostgreSQL fast path', 'palimpsest PostgreSQL', 'postgres', true),
  resume('palimpsest PostgreSQL full replay', 'palimpsest PostgreSQL', 'postgres', false),
];

export { SQLITE_FILE };
