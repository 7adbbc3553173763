/**
 * What the viewer server keeps between requests: the session list's counts while the store's
 * listing says a log is unchanged, and verify's result per head, so that opening a session
 * again reads no log twice, and nothing kept outlives the log it was read from.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Session } from '../../src/core/index.js';
import { openStore, type SessionStats, type SessionStore } from '../../src/store/index.js';
import { AnswerCache } from '../../src/viewer/answer-cache.js';
import { startViewerServer, type ViewerServer } from '../../src/viewer/index.js';
import type { SessionList, VerifyStatus } from '../../src/viewer/protocol.js';
import { user } from '../core/builders.js';

const token = 'cache-token-0123456789abcdef';

describe('the viewer server’s kept answers', () => {
  let dir: string;
  let writer: SessionStore;
  let reader: SessionStore;
  let server: ViewerServer;
  const session = Session.create({ id: 'kept' });

  const api = async (path: string): Promise<{ status: number; text: string }> => {
    const separator = path.includes('?') ? '&' : '?';
    const response = await fetch(
      `http://127.0.0.1:${server.port}${path}${separator}token=${token}`,
    );
    return { status: response.status, text: await response.text() };
  };
  const verify = async (query: string): Promise<VerifyStatus> =>
    JSON.parse((await api(`/api/sessions/kept/verify${query}`)).text) as VerifyStatus;
  const appendOne = async (text: string): Promise<void> => {
    const event = session.append('user/message', user(`u${session.seq}`, text), {
      surfaceOp: 'append',
    });
    await writer.append('kept', [event], { expectedSeq: event.seq });
  };
  /** Past the millisecond: a check made now has another `checkedAt` than one made before. */
  const nextMillisecond = (): Promise<void> => new Promise((done) => setTimeout(done, 5));

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'palimpsest-answer-cache-'));
    writer = await openStore(`jsonl:${dir}`);
    await writer.create(session.header);
    await appendOne('hello');
    reader = await openStore(`jsonl:${dir}`, { readOnly: true });
    server = await startViewerServer({ store: reader, token });
  });

  afterAll(async () => {
    await server.close();
    await reader.close();
    await writer.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers verify at the head it checked from what it found then, and checks again at another head', async () => {
    const first = await verify(`?seq=${session.seq}`);
    expect(first).toMatchObject({ ok: true, events: session.seq });
    await nextMillisecond();
    expect(await verify(`?seq=${session.seq}`)).toEqual(first);
    await appendOne('and more');
    const later = await verify(`?seq=${session.seq}`);
    expect(later.events).toBe(session.seq);
    expect(later.checkedAt).toBeGreaterThan(first.checkedAt);
  });

  it('checks afresh when the page names no head (its "Check again")', async () => {
    const kept = await verify(`?seq=${session.seq}`);
    await nextMillisecond();
    const fresh = await verify('');
    expect(fresh.events).toBe(session.seq);
    expect(fresh.checkedAt).toBeGreaterThan(kept.checkedAt);
  });

  it('refuses a head that is not a count with 400, saying what it found', async () => {
    const reply = await api('/api/sessions/kept/verify?seq=-1');
    expect(reply.status).toBe(400);
    expect(reply.text).toMatch(/expected \?seq= the event count .* found "-1"/);
  });

  it('lists a session’s new counts once its log has grown', async () => {
    const count = async (): Promise<number | undefined> =>
      (JSON.parse((await api('/api/sessions')).text) as SessionList).sessions.find(
        (listed) => listed.id === 'kept',
      )?.events;
    expect(await count()).toBe(session.seq);
    await appendOne('grown');
    expect(await count()).toBe(session.seq);
  });
});

describe('AnswerCache', () => {
  const header = Session.create({ id: 's' }).header;
  const stats = (eventCount: number): SessionStats => ({
    header,
    eventCount,
    lastTurn: 0,
    usage: { calls: 0, tokens: {} },
    usageByModel: {},
  });

  it('reads a session’s stats again only when its listing changed', async () => {
    const cache = new AnswerCache();
    const reads: number[] = [];
    const read = async (): Promise<SessionStats> => {
      reads.push(reads.length);
      return stats(reads.length);
    };
    expect((await cache.statsOf({ header, sizeBytes: 10, updatedAt: 1 }, read)).eventCount).toBe(1);
    expect((await cache.statsOf({ header, sizeBytes: 10, updatedAt: 1 }, read)).eventCount).toBe(1);
    expect((await cache.statsOf({ header, sizeBytes: 20, updatedAt: 1 }, read)).eventCount).toBe(2);
    expect(reads).toHaveLength(2);
  });

  it('reads every time for a store whose listing says nothing of a log’s changes', async () => {
    const cache = new AnswerCache();
    let reads = 0;
    const read = async (): Promise<SessionStats> => stats(++reads);
    await cache.statsOf({ header }, read);
    expect((await cache.statsOf({ header }, read)).eventCount).toBe(2);
  });
});
