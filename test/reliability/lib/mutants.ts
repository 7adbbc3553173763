/**
 * Deliberately broken components. Every harness runs against some of them and must catch each
 * (otherwise a green run proves nothing): a store that drops the last acknowledged event, one
 * that silently changes a stored value (a flipped byte no check caught), one that ignores
 * `expectedSeq`, a lock that always grants, and loaders that skip checksum verification. No
 * vitest import: the bundled child processes use these too.
 */
import type { SessionEvent } from '../../../src/core/index.js';
import {
  LoadedSession,
  type LoadOptions,
  type SessionLock,
  type SessionStore,
} from '../../../src/store/index.js';
import { type RunRow, runEnvelopes, runTexts } from '../../../src/store/sql/chunk-runs.js';

export const STORE_MUTANTS = [
  'drop-last-event',
  'alter-last-event',
  'ignore-expected-seq',
  'always-grant-lock',
] as const;
export type StoreMutant = (typeof STORE_MUTANTS)[number];

/** `store` with some of its methods replaced; everything else passes through. */
export function override(store: SessionStore, methods: Partial<SessionStore>): SessionStore {
  return new Proxy(store, {
    get(target, property) {
      const replaced = (methods as Record<PropertyKey, unknown>)[property];
      if (replaced !== undefined) return replaced;
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function'
        ? (value as (...args: unknown[]) => unknown).bind(target)
        : value;
    },
  });
}

/** `loaded` with `events` in place of its own, as a store whose load produced them hands it over. */
export function withEvents(loaded: LoadedSession, events: readonly SessionEvent[]): LoadedSession {
  return LoadedSession.fromEvents(loaded.header, events, loaded);
}

/** The store broken the way `mutant` says. */
export function mutantStore(store: SessionStore, mutant: StoreMutant): SessionStore {
  switch (mutant) {
    case 'drop-last-event':
      return override(store, {
        load: async (id: string, options?: LoadOptions): Promise<LoadedSession> => {
          const loaded = await store.load(id, options);
          return withEvents(loaded, loaded.events.slice(0, -1));
        },
      });
    case 'alter-last-event':
      return override(store, {
        load: async (id: string, options?: LoadOptions): Promise<LoadedSession> => {
          const loaded = await store.load(id, options);
          const last = loaded.events.at(-1);
          if (last === undefined) return loaded;
          // One digit of the stored time off by one: what an unchecked flipped bit looks like.
          return withEvents(loaded, [
            ...loaded.events.slice(0, -1),
            { ...last, time: last.time ^ 1 },
          ]);
        },
      });
    case 'ignore-expected-seq':
      return override(store, {
        // Appends at whatever the tail is now, renumbering the batch: never a conflict.
        append: async (id: string, events: readonly SessionEvent[]): Promise<void> => {
          const at = (await store.load(id)).events.length;
          const renumbered = events.map((event, i) => ({ ...event, seq: at + i }));
          await store.append(id, renumbered, { expectedSeq: at });
        },
      });
    case 'always-grant-lock':
      return override(store, {
        lock: async (sessionId: string): Promise<SessionLock> => ({
          sessionId,
          owner: { pid: process.pid, host: 'mutant', since: Date.now(), token: 'mutant' },
          release: async () => {},
        }),
      });
  }
}

/**
 * The chunks of a chunk run as a loader that skips its checksum reads them: whatever its times
 * and data decode to.
 */
export function uncheckedRunChunks(run: RunRow): SessionEvent[] {
  const times = runEnvelopes(run)?.times ?? [];
  return (runTexts(run) ?? []).map(
    (text, i) =>
      ({
        seq: run.first_seq + i,
        time: times[i] ?? 0,
        type: 'assistant/chunk',
        data: JSON.parse(text),
      }) as SessionEvent,
  );
}
