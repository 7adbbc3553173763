/**
 * A loaded session holds its events once, as a log, and reads `events` from it: the two never
 * disagree, and a store that wraps another and changes the events it loaded changes what a
 * session opened through it seeds from (before, a wrapper that replaced `events` but kept the
 * compact log had its change silently ignored by `openSession`).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ElidedLog } from '../../src/core/elided-log.js';
import type { SessionEvent, SessionHeader } from '../../src/core/index.js';
import {
  inspectSession,
  LoadedSession,
  type LoadOptions,
  MemoryStore,
  openSession,
  type SessionStore,
} from '../../src/store/index.js';
import { openJsonlStore } from '../../src/store/jsonl/open.js';
import { override } from '../reliability/lib/mutants.js';
import { random, recordTurns } from '../reliability/lib/workload.js';

const header: SessionHeader = { version: 1, id: 's', createdAt: 1 };

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const STORES: [string, () => Promise<SessionStore>][] = [
  ['memory', async () => new MemoryStore()],
  [
    'jsonl',
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'palimpsest-loaded-'));
      dirs.push(dir);
      return openJsonlStore(dir);
    },
  ],
];

/** Two finished turns of streamed chunks, then a third left open mid-stream (a crash). */
async function recorded(store: SessionStore): Promise<void> {
  const live = await openSession(store, 's');
  await recordTurns(live, random(7), () => live.flush(), 2);
  live.append('turn/start', { turn: 3 });
  live.append('step/start', { turn: 3, step: 1 });
  live.append('assistant/chunk', {
    turn: 3,
    step: 1,
    chunk: { type: 'text-delta', id: 't', delta: 'cut off' },
  });
  await live.close();
}

/** True when every event the log holds is the one `events` holds at its seq. */
function agree(loaded: LoadedSession): boolean {
  const { log, events } = loaded;
  if (log.length !== events.length) return false;
  return events.every(
    (event, seq) => event.seq === seq && JSON.stringify(log.at(seq)) === JSON.stringify(event),
  );
}

/** The last seq before the last `turn/start` of `events`: the load without its last turn. */
function withoutLastTurn(events: readonly SessionEvent[]): SessionEvent[] {
  let cut = events.length;
  while (cut > 0 && events[cut - 1]?.type !== 'turn/start') cut--;
  return events.slice(0, Math.max(0, cut - 1));
}

describe('LoadedSession', () => {
  it('reads events from its log: the same events, built once, in a frozen array', () => {
    const log = new ElidedLog();
    log.push({ seq: 0, time: 1, type: 'turn/start', data: { turn: 1 } });
    log.pushElided(2, 57);
    const loaded = LoadedSession.fromLog(header, log);
    expect(loaded.events).toEqual([log.at(0), log.stub(1)]);
    expect(loaded.events).toBe(loaded.events);
    expect(Object.isFrozen(loaded.events)).toBe(true);
    // The log is sealed once handed over: `events` could not follow a change.
    expect(() => log.pushElided(3, 5)).toThrow(/can no longer change/);
  });

  it('holds events it is given in a log of its own, not in the array passed', () => {
    const events: SessionEvent[] = [{ seq: 0, time: 1, type: 'turn/start', data: { turn: 1 } }];
    const loaded = LoadedSession.fromEvents(header, events, { damage: undefined });
    events.pop();
    expect(loaded.log.length).toBe(1);
    expect(loaded.events).toHaveLength(1);
    expect(agree(loaded)).toBe(true);
    expect('damage' in loaded).toBe(false);
  });

  it('keeps a torn tail and damage, and nothing else of its extras', () => {
    const tornTail = { committedSeq: 0, reason: 'no commit line' };
    const loaded = LoadedSession.fromEvents(header, [], {
      tornTail,
      ...({ events: [{ seq: 0 }] } as object),
    });
    expect(loaded.tornTail).toBe(tornTail);
    expect(loaded.events).toEqual([]);
  });
});

describe.each(STORES)('a %s load', (name, open) => {
  it.each([
    ['full', {}],
    ['with finished chunks elided', { elideFinishedChunks: true }],
  ] as [string, LoadOptions][])('%s: its log and its events agree', async (_how, options) => {
    const store = await open();
    await recorded(store);
    const loaded = await store.load('s', options);
    // Every load but a memory store's full one holds chunks as holes (held deltas, elided chunks).
    if (name !== 'memory' || options.elideFinishedChunks === true) {
      expect(loaded.log.holeCount).toBeGreaterThan(0);
    }
    expect(agree(loaded)).toBe(true);
    await store.close();
  });

  it.each([
    ['full', 'full'],
    ['elide', 'elide'],
  ] as const)(
    'through a wrapper that drops the last turn seeds without it (%s chunks)',
    async (_how, chunks) => {
      const store = await open();
      await recorded(store);
      const stored = (await store.load('s')).events;
      const kept = withoutLastTurn(stored);
      expect(kept.length).toBeLessThan(stored.length);
      const wrapper = override(store, {
        load: async (id: string, options?: LoadOptions): Promise<LoadedSession> => {
          const loaded = await store.load(id, options);
          return LoadedSession.fromEvents(loaded.header, withoutLastTurn(loaded.events), loaded);
        },
      });
      const inspected = await inspectSession(wrapper, 's', { chunks, repair: false });
      expect(inspected.seq).toBe(kept.length);
      const live = await openSession(wrapper, 's', { chunks });
      // The wrapper's load ends after a finished turn: nothing to repair, and its events are seeded.
      expect(live.openReport.repairedEvents).toBe(0);
      expect(live.seq).toBe(kept.length);
      expect(live.event(kept.length - 1)).toEqual(kept.at(-1));
      await live.close();
      await store.close();
    },
  );

  it('repairs an open turn without changing the load it repaired', async () => {
    const store = await open();
    await recorded(store);
    let seen: LoadedSession | undefined;
    const wrapper = override(store, {
      load: async (id: string, options?: LoadOptions): Promise<LoadedSession> => {
        seen = await store.load(id, options);
        return seen;
      },
    });
    const live = await openSession(wrapper, 's', { chunks: 'elide' });
    const loaded = seen as LoadedSession;
    expect(live.openReport.repairedEvents).toBeGreaterThan(0);
    expect(live.seq).toBe(loaded.log.length + live.openReport.repairedEvents);
    // The closers went into a copy: the load still holds what the store returned.
    expect(loaded.events).toHaveLength(loaded.log.length);
    expect(agree(loaded)).toBe(true);
    await live.close();
    expect((await store.load('s')).events).toHaveLength(live.seq);
    await store.close();
  });
});
