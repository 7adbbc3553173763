/**
 * Every error class palimpsest exports recognises exactly its own kind with `isInstance`, also
 * for errors made by a second copy of the package (here the built `dist/` beside the sources),
 * where `instanceof` fails.
 */
import { describe, expect, it } from 'vitest';
import * as aiSdk from '../../src/adapters/ai-sdk/index.js';
import * as claudeAgentSdk from '../../src/adapters/claude-agent-sdk/index.js';
import * as mcp from '../../src/adapters/mcp/index.js';
import * as openaiAgents from '../../src/adapters/openai-agents/index.js';
import * as otel from '../../src/adapters/otel/index.js';
import * as agent from '../../src/agent/index.js';
import * as compaction from '../../src/compaction/index.js';
import * as backend from '../../src/core/backend.js';
import * as core from '../../src/core/index.js';
import * as importer from '../../src/import/index.js';
import * as store from '../../src/store/index.js';
import * as jsonl from '../../src/store/jsonl/index.js';
import * as postgres from '../../src/store/postgres/index.js';
import * as sqlite from '../../src/store/sqlite/index.js';
import * as testing from '../../src/testing/index.js';
import * as viewer from '../../src/viewer/index.js';

const entryPoints = {
  '.': core,
  './backend': backend,
  './store': store,
  './jsonl': jsonl,
  './sqlite': sqlite,
  './postgres': postgres,
  './agent': agent,
  './compaction': compaction,
  './import': importer,
  './testing': testing,
  './openai-agents': openaiAgents,
  './ai-sdk': aiSdk,
  './claude-agent-sdk': claudeAgentSdk,
  './otel': otel,
  './mcp': mcp,
} as const;

// One instance of each class, made the way the library makes it. A class exported without an
// entry here fails the completeness test below.
type Samples = typeof core &
  typeof store &
  typeof agent &
  typeof compaction &
  typeof importer &
  typeof openaiAgents &
  typeof aiSdk &
  typeof claudeAgentSdk &
  typeof otel &
  typeof mcp;
const owner = { pid: 1, host: 'h', since: 0, token: 't' };
const samples = {
  PalimpsestError: (m: Samples) => new m.PalimpsestError('SOME_CODE', 'base'),
  SessionValidationError: (m: Samples) =>
    new m.SessionValidationError('INVALID_EVENT_TYPE', 'bad type', { seq: 1 }),
  ForkError: (m: Samples) => new m.ForkError('OPEN_TURN', 'inside a turn', 3),
  InvalidArgumentError: (m: Samples) => new m.InvalidArgumentError('out of range'),
  NotFoundError: (m: Samples) => new m.NotFoundError('s', 'memory'),
  AlreadyExistsError: (m: Samples) => new m.AlreadyExistsError('s', 'memory'),
  ConflictError: (m: Samples) => new m.ConflictError('s', 1, 2),
  LockedError: (m: Samples) => new m.LockedError('s', owner),
  CorruptLogError: (m: Samples) => new m.CorruptLogError({ file: 'f', reason: 'bad' }),
  FormatVersionError: (m: Samples) => new m.FormatVersionError('f', 9, 0),
  LimitExceededError: (m: Samples) => new m.LimitExceededError('maxLineBytes', 1, 2, 'line 3'),
  InvalidSessionIdError: (m: Samples) => new m.InvalidSessionIdError('empty'),
  StorageError: (m: Samples) => new m.StorageError('write', { cause: new Error('EIO') }),
  WriterFailedError: (m: Samples) => new m.WriterFailedError('s', { cause: new Error('EIO') }),
  StoreBusyError: (m: Samples) => new m.StoreBusyError('sqlite:/x.db', 'append', 30_000),
  ClosedError: (m: Samples) => new m.ClosedError('the store'),
  InvalidStoreError: (m: Samples) => new m.InvalidStoreError('UNKNOWN_SCHEME', 'bad url'),
  UnsafeFileError: (m: Samples) => new m.UnsafeFileError('s.jsonl', 'a FIFO'),
  StoreNotFoundError: (m: Samples) => new m.StoreNotFoundError('postgres://h/db', 'no tables'),
  LeaseLostError: (m: Samples) => new m.LeaseLostError('s', owner),
  EncryptionError: (m: Samples) => new m.EncryptionError('WRONG_KEY', 'wrong key', 's'),
  ShreddedKeyError: (m: Samples) => new m.ShreddedKeyError('s', 1),
  LedgerError: (m: Samples) =>
    new m.LedgerError('LEDGER_MISSING', '/x.db', '/x.db-lengths', 'no ledger'),
  StoreUnavailableError: (m: Samples) =>
    new m.StoreUnavailableError('append', 'postgres://h/db', 'unknown', {
      cause: new Error('ECONNRESET'),
    }),
  SearchQueryError: (m: Samples) => new m.SearchQueryError('expected words, found none'),
  AgentError: (m: Samples) => new m.AgentError('INVALID_INPUT', 'empty input'),
  CompactionError: (m: Samples) => new m.CompactionError('BUSY', 'busy'),
  OpenAIAgentsSessionError: (m: Samples) =>
    new m.OpenAIAgentsSessionError('INVALID_ITEM', 'not an item', 0),
  ImportError: (m: Samples) =>
    new m.ImportError('MALFORMED_LINE', 'not JSON', { file: 's.jsonl', line: 3 }),
  AiSdkError: (m: Samples) =>
    new m.AiSdkError('PROMPT_DIVERGED', 'an unrecorded assistant message'),
  ReplayMissError: (m: Samples) =>
    new m.ReplayMissError('no recorded call matches', 'sha256:00', 'system'),
  ClaudeSessionStoreError: (m: Samples) =>
    new m.ClaudeSessionStoreError('INVALID_KEY', 'invalid session key: expected an object'),
  OtelExportError: (m: Samples) => new m.OtelExportError('EXPORT_FAILED', 'unreachable'),
  McpAdapterError: (m: Samples) => new m.McpAdapterError('NOT_LOOPBACK', 'not loopback'),
} satisfies Record<string, (m: Samples) => core.PalimpsestError>;
type ErrorName = keyof typeof samples;
const names = Object.keys(samples) as ErrorName[];

interface ErrorClass {
  readonly kind: string;
  isInstance(value: unknown): boolean;
}

const sourceCopy: Samples = {
  ...core,
  ...store,
  ...agent,
  ...compaction,
  ...importer,
  ...openaiAgents,
  ...aiSdk,
  ...claudeAgentSdk,
  ...otel,
  ...mcp,
};

function loadedCopies(): Promise<Samples[]> {
  return Promise.all([
    Promise.resolve(sourceCopy),
    Promise.all([
      ...['core', 'store', 'agent', 'compaction', 'import'].map(
        (layer) => import(`../../dist/${layer}/index.js`) as Promise<Record<string, unknown>>,
      ),
      // Vite resolves a variable import one folder deep only, so adapters get their own pattern.
      ...['openai-agents', 'ai-sdk', 'claude-agent-sdk', 'otel', 'mcp'].map(
        (adapter) =>
          import(`../../dist/adapters/${adapter}/index.js`) as Promise<Record<string, unknown>>,
      ),
    ]).then((modules) => Object.assign({}, ...modules) as Samples),
  ]);
}

function classOf(copy: Samples, name: ErrorName): ErrorClass {
  return copy[name] as unknown as ErrorClass;
}

describe('error classes', () => {
  it('the table holds every error class any entry point exports', () => {
    const exported = new Set<string>();
    for (const module of Object.values(entryPoints)) {
      for (const [name, value] of Object.entries(module)) {
        if (typeof value === 'function' && value.prototype instanceof Error) exported.add(name);
        if (value === core.PalimpsestError) exported.add(name);
      }
    }
    expect([...exported].sort()).toEqual([...names].sort());
  });

  it('each class declares a kind of its own, and no two share one', () => {
    const kinds = names.map(
      (name) => Object.getOwnPropertyDescriptor(classOf(sourceCopy, name), 'kind')?.value,
    );
    expect(kinds).toEqual(names);
  });

  it.each(names)(
    '%s.isInstance accepts its own errors and rejects every other class',
    async (name) => {
      for (const maker of await loadedCopies()) {
        const error = samples[name](maker);
        for (const checker of await loadedCopies()) {
          expect(classOf(checker, name).isInstance(error)).toBe(true);
          expect(checker.PalimpsestError.isInstance(error)).toBe(true);
          for (const other of names) {
            if (other === name || other === 'PalimpsestError') continue;
            expect(classOf(checker, other).isInstance(error), `${other}.isInstance`).toBe(false);
          }
        }
      }
    },
  );

  it('a second copy of the package is told apart by isInstance where instanceof fails', async () => {
    const [source, built] = await loadedCopies();
    const conflict = (built as Samples).ConflictError;
    const error = new conflict('s', 1, 2);
    expect(error instanceof store.ConflictError).toBe(false);
    expect(store.ConflictError.isInstance(error)).toBe(true);
    expect((source as Samples).NotFoundError.isInstance(error)).toBe(false);
  });

  it('isInstance narrows to the class, so its code and fields are typed', () => {
    const error: unknown = new store.ConflictError('s', 4, 7);
    if (!store.ConflictError.isInstance(error)) throw new Error('expected a conflict');
    const code: 'CONFLICT' = error.code;
    expect([code, error.expectedSeq, error.actualSeq]).toEqual(['CONFLICT', 4, 7]);
  });

  it('a subclass an application declares is recognised as its parent and as itself', () => {
    class RetryLaterError extends store.ConflictError {
      static override readonly kind = 'RetryLaterError';
    }
    const error = new RetryLaterError('s', 1, 2);
    expect(store.ConflictError.isInstance(error)).toBe(true);
    expect(RetryLaterError.isInstance(error)).toBe(true);
    expect(RetryLaterError.isInstance(new store.ConflictError('s', 1, 2))).toBe(false);
  });

  it('values that are not palimpsest errors are rejected', () => {
    for (const value of [null, undefined, 'CONFLICT', new Error('x'), { code: 'CONFLICT' }]) {
      expect(store.ConflictError.isInstance(value)).toBe(false);
      expect(core.PalimpsestError.isInstance(value)).toBe(false);
    }
  });

  it('an error of an older copy, marked without kinds, is only a PalimpsestError', () => {
    const legacy = Object.assign(new Error('old'), { [Symbol.for('palimpsest.error')]: true });
    expect(core.PalimpsestError.isInstance(legacy)).toBe(true);
    expect(store.ConflictError.isInstance(legacy)).toBe(false);
  });

  it('ViewerError (the viewer behind the CLI, no entry point) is told apart like the rest', async () => {
    const layer = 'viewer';
    // A path the compiler does not resolve: the built copy is another copy, not the same types.
    const built = (await import(`../../dist/${layer}/index.js`)) as typeof viewer;
    expect(Object.getOwnPropertyDescriptor(viewer.ViewerError, 'kind')?.value).toBe('ViewerError');
    for (const maker of [viewer, built]) {
      const error = new maker.ViewerError('INVALID_PORT', 'bad port');
      for (const checker of [viewer, built])
        expect(checker.ViewerError.isInstance(error)).toBe(true);
      expect(core.PalimpsestError.isInstance(error)).toBe(true);
      for (const other of names) {
        if (other === 'PalimpsestError') continue;
        expect(classOf(sourceCopy, other).isInstance(error), `${other}.isInstance`).toBe(false);
      }
    }
    expect(viewer.ViewerError.isInstance(new store.ConflictError('s', 1, 2))).toBe(false);
  });
});
