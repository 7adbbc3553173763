/**
 * The SessionStore contract suite. Every backend runs it (see the `*.test.ts` files beside
 * this one) through `runStoreContract(name, open)`, where `open` returns a fresh, empty store
 * and a way to reopen the same location from a new store instance (a restart).
 */

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { elidedChunkData } from '../../src/core/backend.js';
import {
  checkInvariants,
  InvalidArgumentError,
  isElidedChunk,
  lastTurnNumber,
  SESSION_FORMAT_VERSION,
  Session,
  type SessionEvent,
  type SessionHeader,
  sessionUsage,
  TOOL_NOT_STARTED,
  TOOL_OUTCOME_UNKNOWN,
  type ToolResultData,
} from '../../src/core/index.js';
import {
  AlreadyExistsError,
  ConflictError,
  CorruptLogError,
  FormatVersionError,
  InvalidStoreError,
  inspectSession,
  LockedError,
  NotFoundError,
  openSession,
  type SessionStore,
  WriterFailedError,
} from '../../src/store/index.js';
import {
  assistant,
  event,
  recordToolTurn,
  tickingClock,
  toolResult,
  user,
} from '../core/builders.js';
import { describeDamagedListing } from './damage.js';
import { describeListFilters } from './filters.js';
import { rejection } from './helpers.js';
import { describeIdRules } from './ids.js';
import { describeReplaceLog } from './replace-log.js';
import { describeSalvage } from './salvage.js';
import { describeWatch } from './watch.js';

/** A store under test and the means to restart it. */
export interface StoreFixture {
  readonly store: SessionStore;
  /** A new store instance on the same location (the old one may be closed or not). */
  reopen(): Promise<SessionStore>;
  /** Removes everything the fixture created. */
  cleanup(): Promise<void>;
  /**
   * Rewrites a stored session's header version in place, as a newer or older palimpsest would
   * have written it (stores that keep no header of their own omit this).
   */
  plantVersion?(id: string, version: number): Promise<void>;
  /** Damages a stored session's header in place so that it no longer parses as one. */
  plantDamagedHeader?(id: string): Promise<void>;
  /** Damages one stored event in place so that a load detects it (not the last batch). */
  plantDamagedEvent?(id: string, seq: number): Promise<void>;
  /** A fingerprint of the stored bytes of a session, to show a refusal changed nothing. */
  fingerprint?(id: string): Promise<string>;
  /** The header a store gives back for one it was given (an encrypting store adds how). */
  storedHeader?(given: SessionHeader): SessionHeader;
  /**
   * Whether a stub's byte count is the size of the chunk's data as stored rather than of its
   * JSON text (an encrypting store stores sealed data, and reads no body to tell its size).
   */
  readonly stubBytesAsStored?: boolean;
}

function header(
  id: string,
  createdAt = 1_700_000_000_000,
  extra: Partial<SessionHeader> = {},
): SessionHeader {
  return { version: 1, id, createdAt, ...extra };
}

/** A log with every shape the stores must keep verbatim. */
function richLog(): readonly SessionEvent[] {
  const session = Session.create({ id: 'rich', clock: tickingClock() });
  const turn = recordToolTurn(session, 1, 'unicode: héllo — 世界 🌍 \u2028 "quotes" \\ back');
  session.append('app/custom-type', {
    __proto__: null,
    nested: { deep: [1, 2, { x: null }] },
  } as never);
  session.append(
    'app/proto',
    JSON.parse('{"__proto__": {"polluted": true}, "ok": [true, false]}') as never,
  );
  session.append('assistant/message', assistant('empty', '', [], { turn: 1, step: 2 }), {
    surfaceOp: 'append',
    sourceEventSeqs: [],
  });
  session.append('tool/result', toolResult('r1', 'c1', '[pruned]'), {
    surfaceOp: { op: 'replace', start: turn.result, end: turn.result },
    sourceEventSeqs: [turn.result],
  });
  session.append('user/message', user('summary', 'summary'), {
    surfaceOp: { op: 'replace', start: turn.user, end: turn.answer },
    sourceEventSeqs: [turn.user, 4, session.seq - 1, turn.answer],
  });
  session.append('app/big', { text: 'x'.repeat(200_000) });
  return session.events;
}

/** Events of a turn that crashed after a tool call started. */
function crashedLog(): readonly SessionEvent[] {
  const session = Session.create({ id: 'crashed', clock: tickingClock() });
  recordToolTurn(session, 1);
  session.append('turn/start', { turn: 2 });
  session.append('user/message', user('u2', 'write two files'), { surfaceOp: 'append' });
  session.append('step/start', { turn: 2, step: 1 });
  session.append(
    'assistant/message',
    assistant(
      'a2',
      '',
      [
        { id: 'w1', name: 'write' },
        { id: 'w2', name: 'write' },
      ],
      { turn: 2, step: 1 },
    ),
    { surfaceOp: 'append', sourceEventSeqs: [] },
  );
  session.append('tool/call', { turn: 2, step: 1, callId: 'w1', name: 'write', arguments: '{}' });
  return session.events;
}

/**
 * Two finished turns, then a third that crashed while its model streamed (chunks no message
 * cites yet), split into batches so that a message and the chunks it cites are in different
 * batches.
 */
function streamedLog(): { events: readonly SessionEvent[]; batches: number[] } {
  const session = Session.create({ id: 'streamed', clock: tickingClock() });
  recordToolTurn(session, 1, 'unicode in a chunk: é — 世界 🌍');
  recordToolTurn(session, 2);
  session.append('turn/start', { turn: 3 });
  session.append('user/message', user('u3', 'go on'), { surfaceOp: 'append' });
  session.append('step/start', { turn: 3, step: 1 });
  for (const delta of ['open ', 'tail ', 'é']) {
    session.append('assistant/chunk', {
      turn: 3,
      step: 1,
      chunk: { type: 'text-delta', id: 't0', delta },
    });
  }
  // Batch ends right after turn 1's first chunk (seq 3) and inside turn 2.
  return { events: session.events, batches: [4, 17, session.seq] };
}

/** Seqs of the chunks that a later assistant/message cites. */
function finishedChunks(events: readonly SessionEvent[]): Set<number> {
  const finished = new Set<number>();
  for (const event of events) {
    if (event.type !== 'assistant/message') continue;
    for (const seq of event.sourceEventSeqs ?? []) {
      if (events[seq]?.type === 'assistant/chunk') finished.add(seq);
    }
  }
  return finished;
}

async function storeInBatches(
  store: SessionStore,
  id: string,
  events: readonly SessionEvent[],
  ends: readonly number[],
): Promise<void> {
  await store.create(header(id));
  let from = 0;
  for (const end of ends) {
    await store.append(id, events.slice(from, end), { expectedSeq: from });
    from = end;
  }
}

export function runStoreContract(name: string, open: () => Promise<StoreFixture>): void {
  describe(`SessionStore contract: ${name}`, () => {
    let fixture: StoreFixture;
    let store: SessionStore;

    beforeEach(async () => {
      fixture = await open();
      store = fixture.store;
    });
    afterEach(async () => {
      await store.close().catch(() => {});
      await fixture.cleanup();
    });

    describeIdRules(() => store);
    describeDamagedListing(
      () => store,
      () => fixture.plantDamagedHeader?.bind(fixture),
    );
    describeListFilters(() => store);
    describeReplaceLog(() => store);
    describeWatch(
      () => store,
      () => fixture.reopen(),
    );
    describeSalvage(
      () => store,
      () => fixture.plantDamagedEvent?.bind(fixture),
      () => fixture.fingerprint?.bind(fixture),
    );

    describe('create, append and load', () => {
      it('round-trips a header with every field', async () => {
        const full = header('h1', 5, {
          parentSession: 'p',
          seedLength: 3,
          metadata: { cwd: '/w', tags: ['a'] },
        });
        await store.create(full);
        const loaded = await store.load('h1');
        expect(loaded.header).toEqual(fixture.storedHeader?.(full) ?? full);
        expect(loaded.events).toEqual([]);
        expect(loaded.tornTail).toBeUndefined();
      });

      it('round-trips every event shape, unknown types and __proto__ keys included, across a restart', async () => {
        const events = richLog();
        await store.create(header('rich'));
        await store.append('rich', events.slice(0, 10), { expectedSeq: 0 });
        await store.append('rich', events.slice(10), { expectedSeq: 10 });
        expect((await store.load('rich')).events).toEqual(events);
        const restarted = await fixture.reopen();
        const loaded = await restarted.load('rich');
        await restarted.close();
        expect(loaded.events).toEqual(events);
        const proto = loaded.events.find((event) => event.type === 'app/proto');
        expect(Object.keys(proto?.data as object)).toEqual(['__proto__', 'ok']);
        expect(({} as Record<string, unknown>).polluted).toBeUndefined();
        expect(Session.create({ seed: loaded.events }).deriveMessages()).toEqual(
          Session.create({ seed: events }).deriveMessages(),
        );
      });

      it('refuses to create a session twice and keeps the first', async () => {
        await store.create(header('dup', 1));
        await store.append('dup', richLog().slice(0, 2), { expectedSeq: 0 });
        expect(await rejection(store.create(header('dup', 2)))).toBeInstanceOf(AlreadyExistsError);
        const loaded = await store.load('dup');
        expect(loaded.header.createdAt).toBe(1);
        expect(loaded.events).toHaveLength(2);
      });

      it('reports unknown sessions with NotFoundError', async () => {
        expect(await rejection(store.load('nope'))).toBeInstanceOf(NotFoundError);
        expect(await rejection(store.append('nope', [], { expectedSeq: 0 }))).toBeInstanceOf(
          NotFoundError,
        );
        expect(await rejection(store.delete('nope'))).toBeInstanceOf(NotFoundError);
      });

      it('treats an empty batch as a no-op', async () => {
        await store.create(header('empty'));
        await store.append('empty', [], { expectedSeq: 0 });
        expect((await store.load('empty')).events).toEqual([]);
      });
    });

    describe('format versions', () => {
      for (const [found, direction, words] of [
        [2, 'newer', 'upgrade palimpsest'],
        [0, 'older', 'older than any supported format'],
      ] as const) {
        it(`refuses a session written with a ${direction} format version, and changes nothing`, async (context) => {
          if (fixture.plantVersion === undefined) return context.skip();
          await store.create(header('v'));
          await store.append('v', richLog().slice(0, 4), { expectedSeq: 0 });
          await fixture.plantVersion('v', found);
          const before = await fixture.fingerprint?.('v');
          const refused = await rejection(store.load('v'));
          expect(refused).toBeInstanceOf(FormatVersionError);
          expect(refused).toMatchObject({ found, supported: SESSION_FORMAT_VERSION, direction });
          expect((refused as Error).message).toContain(words);
          expect(await rejection(openSession(store, 'v'))).toBeInstanceOf(FormatVersionError);
          expect(await fixture.fingerprint?.('v')).toBe(before);
        });
      }

      it('refuses a non-integer version as damage (CorruptLogError), as no palimpsest writes one', async (context) => {
        if (fixture.plantVersion === undefined) return context.skip();
        await store.create(header('v'));
        await fixture.plantVersion('v', 0.5);
        const refused = await rejection(store.load('v'));
        expect(refused).toBeInstanceOf(CorruptLogError);
        expect(refused).not.toBeInstanceOf(FormatVersionError);
      });
    });

    describe('optimistic concurrency', () => {
      it('rejects a stale or future expectedSeq with ConflictError and writes nothing', async () => {
        const events = richLog();
        await store.create(header('c'));
        await store.append('c', events.slice(0, 3), { expectedSeq: 0 });
        const stale = await rejection(store.append('c', events.slice(0, 3), { expectedSeq: 0 }));
        expect(stale).toBeInstanceOf(ConflictError);
        expect(stale).toMatchObject({ expectedSeq: 0, actualSeq: 3 });
        const future = await rejection(store.append('c', events.slice(5, 6), { expectedSeq: 5 }));
        expect(future).toMatchObject({ code: 'CONFLICT', expectedSeq: 5, actualSeq: 3 });
        expect((await store.load('c')).events).toEqual(events.slice(0, 3));
      });

      it('rejects a batch whose seqs are not contiguous from expectedSeq, writing nothing', async () => {
        const events = richLog();
        await store.create(header('g'));
        const gap = [events[0], events[2]] as SessionEvent[];
        expect(await rejection(store.append('g', gap, { expectedSeq: 0 }))).toBeInstanceOf(
          InvalidArgumentError,
        );
        expect((await store.load('g')).events).toEqual([]);
      });

      it('lets exactly one of two store instances win a race for the same seq', async () => {
        const events = richLog();
        await store.create(header('race'));
        await store.append('race', events.slice(0, 1), { expectedSeq: 0 });
        const other = await fixture.reopen();
        await other.load('race');
        const results = await Promise.allSettled([
          store.append('race', events.slice(1, 3), { expectedSeq: 1 }),
          other.append('race', events.slice(1, 2), { expectedSeq: 1 }),
        ]);
        await other.close();
        expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(1);
        const failed = results.find((result) => result.status === 'rejected');
        expect((failed as PromiseRejectedResult).reason).toBeInstanceOf(ConflictError);
        const stored = (await store.load('race')).events;
        expect(stored.map((event) => event.seq)).toEqual(stored.map((_, index) => index));
      });
    });

    describe('list and delete', () => {
      it('lists sessions newest first, page by page, from headers alone', async () => {
        for (let i = 0; i < 7; i++) await store.create(header(`s${i}`, 1000 + (i % 4)));
        const first = await store.list({ limit: 3 });
        expect(first.sessions.map((summary) => summary.header.id)).toEqual(['s3', 's2', 's6']);
        expect(first.nextCursor).toBeDefined();
        const second = await store.list({ limit: 3, cursor: first.nextCursor as string });
        expect(second.sessions.map((summary) => summary.header.id)).toEqual(['s1', 's5', 's0']);
        const third = await store.list({ limit: 3, cursor: second.nextCursor as string });
        expect(third.sessions.map((summary) => summary.header.id)).toEqual(['s4']);
        expect(third.nextCursor).toBeUndefined();
        expect((await store.list()).sessions).toHaveLength(7);
      });

      it('refuses a list cursor it did not issue and a limit below one', async () => {
        expect(await rejection(store.list({ cursor: 'garbage' }))).toBeInstanceOf(
          InvalidArgumentError,
        );
        expect(await rejection(store.list({ limit: 0 }))).toBeInstanceOf(InvalidArgumentError);
      });

      it('deletes a session, but not while a writer holds it', async () => {
        await store.create(header('d'));
        const lock = await store.lock('d');
        expect(await rejection(store.delete('d'))).toBeInstanceOf(LockedError);
        await lock.release();
        await store.delete('d');
        expect(await rejection(store.load('d'))).toBeInstanceOf(NotFoundError);
        expect((await store.list()).sessions).toEqual([]);
      });
    });

    describe('the single-writer lock', () => {
      it('refuses a second writer with LockedError naming the holder, and frees on release', async () => {
        const lock = await store.lock('l');
        const other = await fixture.reopen();
        const refused = await rejection(other.lock('l'));
        expect(refused).toBeInstanceOf(LockedError);
        expect((refused as LockedError).owner.token).toBe(lock.owner.token);
        expect((refused as LockedError).message).toContain(`pid ${lock.owner.pid}`);
        await lock.release();
        await lock.release();
        const again = await other.lock('l');
        await again.release();
        await other.close();
      });

      it('refuses to open a session a live writer holds, and lets it open once closed', async () => {
        const live = await openSession(store, 'w');
        const other = await fixture.reopen();
        expect(await rejection(openSession(other, 'w'))).toBeInstanceOf(LockedError);
        await live.close();
        const next = await openSession(other, 'w');
        await next.close();
        await other.close();
      });

      it('names the holder and since when in LockedError', async () => {
        const lock = await store.lock('n');
        const other = await fixture.reopen();
        const refused = (await rejection(other.lock('n'))) as LockedError;
        expect(refused.message).toContain(
          `locked by pid ${lock.owner.pid} on ${lock.owner.host} since ${new Date(lock.owner.since).toISOString()}`,
        );
        expect(refused.message).toMatch(/heartbeat/);
        await lock.release();
        await other.close();
      });

      it('unlock: nothing to remove, a live holder refused, removed with force', async () => {
        expect(await store.unlock('u')).toEqual({ removed: false });
        const lock = await store.lock('u');
        const other = await fixture.reopen();
        const refused = await rejection(other.unlock('u'));
        expect(refused).toBeInstanceOf(LockedError);
        expect((refused as LockedError).owner.token).toBe(lock.owner.token);
        expect(await other.unlock('u', { force: true })).toMatchObject({
          removed: true,
          wasLive: true,
          owner: { token: lock.owner.token },
        });
        // The old holder's release removes nothing of the next holder's.
        const next = await other.lock('u');
        await lock.release();
        expect(await rejection(store.lock('u'))).toBeInstanceOf(LockedError);
        await next.release();
        await other.close();
      });
    });

    describe('loading without the bodies of finished chunks', () => {
      it('loads every finished chunk as a stub and everything else as a full load does', async () => {
        const { events, batches } = streamedLog();
        await storeInBatches(store, 'fast', events, batches);
        const full = (await store.load('fast')).events;
        const fast = (await store.load('fast', { elideFinishedChunks: true })).events;
        expect(full).toEqual(events);
        expect(fast).toHaveLength(full.length);
        const finished = finishedChunks(full);
        expect(finished.size).toBe(4);
        fast.forEach((event, seq) => {
          const original = full[seq] as SessionEvent;
          if (!finished.has(seq)) {
            expect(event).toEqual(original);
            return;
          }
          expect(isElidedChunk(event)).toBe(true);
          const bytes = fixture.stubBytesAsStored
            ? (event.data as { elided: { bytes: number } }).elided.bytes
            : Buffer.byteLength(JSON.stringify(original.data));
          expect(bytes).toBeGreaterThan(0);
          expect(event).toEqual({
            seq,
            time: original.time,
            type: 'assistant/chunk',
            data: { elided: { bytes } },
          });
        });
      });

      it('keeps the chunks of the open tail, which no message cites yet, in full', async () => {
        const { events, batches } = streamedLog();
        await storeInBatches(store, 'tail', events, batches);
        const fast = (await store.load('tail', { elideFinishedChunks: true })).events;
        const tail = fast.slice(-3);
        expect(tail.map((event) => event.type)).toEqual(Array(3).fill('assistant/chunk'));
        expect(tail.some(isElidedChunk)).toBe(false);
        expect(tail).toEqual(events.slice(-3));
      });

      it('opens a session with its finished chunks elided that repairs, appends and reloads in full', async () => {
        const { events, batches } = streamedLog();
        await storeInBatches(store, 'resume', events, batches);
        const live = await openSession(store, 'resume', { chunks: 'elide' });
        expect(live.elidedChunkCount).toBe(4);
        // The open step's streamed text is kept as an interrupted message, then step and turn end.
        expect(live.openReport.repairedEvents).toBe(3);
        expect(live.event(events.length)?.type).toBe('assistant/message');
        const repaired = [...events, ...live.events.slice(events.length)];
        expect(live.deriveMessages()).toEqual(Session.create({ seed: repaired }).deriveMessages());
        recordToolTurn(live, 4);
        await live.flush();
        await live.close();
        // Stubs are never written back: the stored log holds every chunk in full.
        const stored = (await store.load('resume')).events;
        expect(stored.some(isElidedChunk)).toBe(false);
        expect(stored.slice(0, events.length)).toEqual(events);
        expect(stored.slice(events.length)).toEqual(live.events.slice(events.length));
        expect(checkInvariants(stored, { requireClosed: true })).toEqual([]);
        const again = await openSession(store, 'resume', { chunks: 'elide' });
        const finished = finishedChunks(stored);
        expect(again.elidedChunkCount).toBe(finished.size);
        again.events.forEach((event, seq) => {
          if (finished.has(seq)) expect(isElidedChunk(event)).toBe(true);
          else expect(event).toEqual(stored[seq]);
        });
        await again.close();
      });

      it('inspects a session with its finished chunks elided, repaired in memory only', async () => {
        const { events, batches } = streamedLog();
        await storeInBatches(store, 'peek', events, batches);
        const view = await inspectSession(store, 'peek', { chunks: 'elide' });
        expect(view.elidedChunkCount).toBe(4);
        expect(view.seq).toBe(events.length + 3);
        expect((await store.load('peek')).events).toHaveLength(events.length);
      });

      it('elides only chunks an assistant/message cites after them (a citation of a later seq finishes nothing)', async () => {
        // Stores do not validate semantics: this log is stored as written, and a load must not
        // turn the chunk the message cites ahead of itself into a stub a session would refuse.
        const chunk = (seq: number): SessionEvent => ({
          seq,
          time: seq,
          type: 'assistant/chunk',
          data: { turn: 1, step: 1, chunk: { type: 'text-delta', id: 't0', delta: `d${seq}` } },
        });
        const message = (seq: number, sources: number[]): SessionEvent<'assistant/message'> => ({
          seq,
          time: seq,
          type: 'assistant/message',
          data: assistant(`m${seq}`, 'done'),
          surfaceOp: 'append',
          sourceEventSeqs: sources,
        });
        const events = [chunk(0), message(1, [0, 2, 1]), chunk(2)];
        await store.create(header('ahead'));
        await store.append('ahead', events, { expectedSeq: 0 });
        const loaded = (await store.load('ahead', { elideFinishedChunks: true })).events;
        expect(isElidedChunk(loaded[0] as SessionEvent)).toBe(true);
        expect(loaded.slice(1)).toEqual(events.slice(1));
      });

      it('refuses to store a stub, which would replace a chunk by its marker for good', async () => {
        await store.create(header('stub'));
        const stub = event(0, 'assistant/chunk', elidedChunkData(10), { time: 1 });
        expect(await rejection(store.append('stub', [stub], { expectedSeq: 0 }))).toBeInstanceOf(
          InvalidArgumentError,
        );
        expect((await store.load('stub')).events).toEqual([]);
      });
    });

    describe('summaries', () => {
      it('summarize gives the counts a full load gives, across batches and a restart', async () => {
        const session = Session.create({ id: 'stats', clock: tickingClock() });
        recordToolTurn(session, 1);
        session.append('turn/start', { turn: 2 });
        session.append('step/start', { turn: 2, step: 1 });
        session.append(
          'assistant/message',
          {
            ...assistant('a-usage', 'done', [], { turn: 2, step: 1 }),
            usage: { inputTokens: 1200, outputTokens: 300, cachedInputTokens: 7 },
          },
          { surfaceOp: 'append', sourceEventSeqs: [] },
        );
        session.append('step/end', { turn: 2, step: 1 });
        session.append('turn/end', { turn: 2, reason: { kind: 'completed' } });
        recordToolTurn(session, 3);
        session.append('app/custom', { usage: { inputTokens: 999 } } as never); // not a model call
        const events = session.events;
        await storeInBatches(store, 'stats', events, [3, 9, events.length]);
        const loaded = await inspectSession(store, 'stats', { repair: false });
        const expected = {
          header: fixture.storedHeader?.(header('stats')) ?? header('stats'),
          eventCount: events.length,
          lastEventTime: events.at(-1)?.time,
          lastTurn: lastTurnNumber(loaded),
          usage: sessionUsage(loaded).total,
          usageByModel: sessionUsage(loaded).byModel,
        };
        expect(expected.usage.tokens).toMatchObject({ inputTokens: 1200, outputTokens: 300 });
        expect(expected.lastTurn).toBe(3);
        expect(await store.summarize('stats')).toEqual(expected);
        const reopened = await fixture.reopen();
        expect(await reopened.summarize('stats')).toEqual(expected);
        await reopened.close();
      });

      it('summarizes an empty session, and an unknown one is NotFoundError', async () => {
        await store.create(header('empty'));
        expect(await store.summarize('empty')).toEqual({
          header: fixture.storedHeader?.(header('empty')) ?? header('empty'),
          eventCount: 0,
          lastTurn: 0,
          usage: { calls: 0, tokens: {} },
          usageByModel: {},
        });
        expect(await rejection(store.summarize('nope'))).toBeInstanceOf(NotFoundError);
      });
    });

    describe('torn tails', () => {
      it('reports none for a session whose batches all committed', async () => {
        await storeInBatches(store, 'whole', richLog().slice(0, 6), [2, 6]);
        expect((await store.load('whole')).tornTail).toBeUndefined();
      });

      it('leaves a log alone that does not end with the tail passed, and checks the lock', async () => {
        const events = richLog().slice(0, 6);
        await storeInBatches(store, 'tail', events, [2, 6]);
        const tail = { committedSeq: 2, reason: 'not this log', bytes: { offset: 1, size: 1 } };
        const lock = await store.lock('tail');
        await store.discardTornTail('tail', tail, lock);
        await store.discardTornTail('tail', { committedSeq: 6, reason: 'spans nothing' }, lock);
        expect((await store.load('tail')).events).toEqual(events);
        const other = await store.lock('other');
        expect(await rejection(store.discardTornTail('tail', tail, other))).toBeInstanceOf(
          InvalidArgumentError,
        );
        const bad = { committedSeq: -1, reason: 'bad' };
        expect(await rejection(store.discardTornTail('tail', bad, lock))).toBeInstanceOf(
          InvalidArgumentError,
        );
        await lock.release();
        expect(await rejection(store.discardTornTail('tail', tail, lock))).toBeInstanceOf(
          InvalidStoreError,
        );
        await other.release();
        expect((await store.load('tail')).events).toEqual(events);
      });
    });

    describe('openSession and the recorder', () => {
      it('creates a new session, records every append, and survives a restart', async () => {
        const live = await openSession(store, 'rec', {
          clock: tickingClock(),
          header: { metadata: { title: 't' } },
        });
        expect(live.openReport).toEqual({ created: true, tornBytesDropped: 0, repairedEvents: 0 });
        recordToolTurn(live, 1);
        await live.flush();
        await live.close();
        const restarted = await fixture.reopen();
        const loaded = await restarted.load('rec');
        await restarted.close();
        expect(loaded.events).toEqual(live.events);
        expect(loaded.header.metadata).toEqual({ title: 't' });
      });

      it('creates a new session in the store with its first events, and leaves nothing when none came', async () => {
        const empty = await openSession(store, 'never-written');
        expect(empty.openReport.created).toBe(true);
        await empty.flush();
        await empty.close();
        await expect(store.load('never-written')).rejects.toMatchObject({ code: 'NOT_FOUND' });
        expect((await store.list()).sessions.map((entry) => entry.header.id)).not.toContain(
          'never-written',
        );
        await expect(
          openSession(store, 'bad-metadata', { header: { metadata: { huge: 1n as never } } }),
        ).rejects.toMatchObject({ code: 'INVALID_HEADER' });

        const live = await openSession(store, 'written', { header: { metadata: { a: 1 } } });
        live.append('app/tick', { i: 0 });
        await live.close();
        const loaded = await store.load('written');
        expect(loaded.header.metadata).toEqual({ a: 1 });
        expect(loaded.events).toHaveLength(1);
      });

      it('groups appends made within the window into few batches', async () => {
        const live = await openSession(store, 'group', {
          durability: { mode: 'group', windowMs: 30 },
        });
        for (let i = 0; i < 200; i++) live.append('app/tick', { i });
        await live.flush();
        expect(live.recorderStats.events).toBe(200);
        expect(live.recorderStats.batches).toBeLessThanOrEqual(2);
        await live.close();
      });

      it('makes everything appended before flush() durable, including appends made while writing', async () => {
        const live = await openSession(store, 'flush', { durability: { mode: 'each' } });
        for (let i = 0; i < 50; i++) live.append('app/tick', { i });
        const first = live.flush();
        for (let i = 50; i < 80; i++) live.append('app/tick', { i });
        await first;
        expect((await store.load('flush')).events.length).toBeGreaterThanOrEqual(50);
        await live.flush();
        expect((await store.load('flush')).events).toHaveLength(80);
        await live.close();
      });

      it('durably repairs a crashed session once, with deterministic closers, and a second open writes nothing', async () => {
        const crashed = crashedLog();
        await store.create(header('crashed'));
        await store.append('crashed', crashed, { expectedSeq: 0 });
        const live = await openSession(store, 'crashed');
        expect(live.openReport.repairedEvents).toBe(4);
        await live.close();
        const stored = (await store.load('crashed')).events;
        expect(stored).toHaveLength(crashed.length + 4);
        const [unknown, notStarted] = stored.slice(crashed.length) as [SessionEvent, SessionEvent];
        expect((unknown.data as unknown as ToolResultData).error?.code).toBe(TOOL_OUTCOME_UNKNOWN);
        expect((notStarted.data as unknown as ToolResultData).error?.code).toBe(TOOL_NOT_STARTED);
        const lastTime = crashed.at(-1)?.time;
        expect(stored.slice(crashed.length).every((event) => event.time === lastTime)).toBe(true);
        expect(checkInvariants(stored, { requireClosed: true })).toEqual([]);
        const again = await openSession(store, 'crashed');
        expect(again.openReport.repairedEvents).toBe(0);
        expect(again.seq).toBe(stored.length);
        await again.close();
        expect((await store.load('crashed')).events).toEqual(stored);
      });

      it('inspects a crashed session with the repair in memory only', async () => {
        const crashed = crashedLog();
        await store.create(header('inspect'));
        await store.append('inspect', crashed, { expectedSeq: 0 });
        const view = await inspectSession(store, 'inspect');
        expect(view.seq).toBe(crashed.length + 4);
        expect((await store.load('inspect')).events).toHaveLength(crashed.length);
        const lock = await store.lock('inspect');
        await lock.release();
      });

      it('stops the writer after a failed write: later appends and flushes reject until reopened', async () => {
        const live = await openSession(failingAppends(store, 'poison'), 'poison');
        live.append('app/a', 1);
        const failure = await rejection(live.flush());
        expect(failure).toBeInstanceOf(WriterFailedError);
        expect(() => live.append('app/b', 2)).toThrow(WriterFailedError);
        expect(live.seq).toBe(1);
        expect(await rejection(live.flush())).toBeInstanceOf(WriterFailedError);
        expect(await rejection(live.close())).toBeInstanceOf(WriterFailedError);
        const reopened = await openSession(store, 'poison');
        expect(reopened.seq).toBe(0);
        await reopened.close();
      });

      it('refuses to open a stored log the session rules reject, and leaves it untouched', async () => {
        const events = richLog().slice(0, 3);
        await store.create(header('bad'));
        const broken = JSON.parse(JSON.stringify(events)) as Record<string, unknown>[];
        delete broken[1]?.surfaceOp;
        await store.append('bad', broken as unknown as SessionEvent[], { expectedSeq: 0 });
        const error = await rejection(openSession(store, 'bad'));
        expect(error).toMatchObject({ code: 'SURFACE_OP_REQUIRED', index: 1 });
        expect((await store.load('bad')).events).toEqual(broken);
        const lock = await store.lock('bad');
        await lock.release();
      });
    });
  });
}

/** A view of `store` whose appends to `id` fail, as a full disk would make them. */
function failingAppends(store: SessionStore, id: string): SessionStore {
  return new Proxy(store, {
    get(target, property, receiver) {
      if (property === 'append') {
        return async (
          sessionId: string,
          events: readonly SessionEvent[],
          options: { expectedSeq: number },
        ) => {
          if (sessionId === id && events.length > 0)
            throw new Error('ENOSPC: no space left on device');
          return target.append(sessionId, events, options);
        };
      }
      const value: unknown = Reflect.get(target, property, receiver);
      return typeof value === 'function'
        ? (value as (...args: unknown[]) => unknown).bind(target)
        : value;
    },
  });
}
