/**
 * Tamper evidence (issue 37 §4): a session that keeps checkpoints verifies; a flipped, removed,
 * inserted or reordered event, written back through the store itself (as one who holds the
 * store's write access would), is caught on every backend and named; a forged chain fails its
 * signatures; a log cut at a checkpoint is caught by an anchor kept outside the store.
 */
import { createHash, generateKeyPairSync } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { forkSession, Session, type SessionEvent } from '../../src/core/index.js';
import {
  ChainTracker,
  ed25519Signer,
  openStore,
  type SessionStore,
  verifyIntegrity,
} from '../../src/store/index.js';
import { leafDigest, payloadDigest } from '../../src/store/integrity/chain.js';
import { recordGovernedSession, withToolResultAltered } from './governed-session.js';
import { everyBackend } from './store-urls.js';

const keys = generateKeyPairSync('ed25519');
const signer = ed25519Signer(keys.privateKey);

/** Writes `events` as the session's whole log, as one with write access to the store could. */
async function overwrite(store: SessionStore, id: string, events: readonly SessionEvent[]) {
  const stored = await store.load(id);
  const lock = await store.lock(id);
  try {
    await store.replaceLog(id, events, { expectedLength: stored.events.length }, lock);
  } finally {
    await lock.release();
  }
}

/** `events` renumbered from 0 (what a removal or an insertion leaves when done with care). */
function renumbered(events: readonly SessionEvent[]): SessionEvent[] {
  return events.map((event, seq) => ({ ...event, seq }) as SessionEvent);
}

/** A chunk in the middle of the second turn's stream: its neighbours are chunks too. */
function middleChunk(events: readonly SessionEvent[]): number {
  const chunks = events.filter((event) => event.type === 'assistant/chunk');
  return (chunks[Math.floor(chunks.length / 2)] as SessionEvent).seq;
}

let opened: SessionStore[] = [];
afterEach(async () => {
  for (const store of opened) await store.close();
  opened = [];
});

async function governed(url: string): Promise<{ store: SessionStore; events: SessionEvent[] }> {
  const store = await openStore(url);
  opened.push(store);
  await recordGovernedSession(store, 'audited', { signer });
  return { store, events: [...(await store.load('audited')).events] };
}

describe.each(everyBackend('chain'))('the hash chain on %s', (_name, url) => {
  it('verifies a session that checkpoints each turn, its signatures checked with the key given', async () => {
    const { store, events } = await governed(url());
    const { header } = await store.load('audited');
    const report = verifyIntegrity(header, events, { publicKeys: [keys.publicKey] });
    expect(report.broken).toBeUndefined();
    expect(report.checkpoints).toBe(3);
    expect(report.signatures).toEqual({ verified: 3, unknownKey: 0 });
    expect(report.covered).toBe(events.length - 1);
    expect(report.completeness.status).toBe('unknown');
    expect(report.completeness.unprotected).toBe(1);
  });

  it('names an event whose data was altered', async () => {
    const { store, events } = await governed(url());
    const { events: altered, seq } = withToolResultAltered(events);
    const target = { seq };
    await overwrite(store, 'audited', altered);
    const loaded = await store.load('audited');
    expect(verifyIntegrity(loaded.header, loaded.events).broken).toMatchObject({
      seq: target.seq,
      kind: 'altered',
    });
  });

  it('names where an event was removed from the middle and the rest renumbered', async () => {
    const { store, events } = await governed(url());
    const seq = middleChunk(events);
    // A log is never shortened through the store: one more event at the end keeps its length.
    const removed = events.filter((event) => event.seq !== seq);
    await overwrite(store, 'audited', renumbered([...removed, events.at(-1) as SessionEvent]));
    const loaded = await store.load('audited');
    expect(verifyIntegrity(loaded.header, loaded.events).broken).toMatchObject({
      seq,
      kind: 'removed',
    });
  });

  it('names where an event was inserted', async () => {
    const { store, events } = await governed(url());
    const seq = middleChunk(events);
    const chunk = events[seq] as SessionEvent<'assistant/chunk'>;
    const copy = { ...chunk, data: { ...chunk.data, turn: 9 } } as SessionEvent;
    await overwrite(
      store,
      'audited',
      renumbered([...events.slice(0, seq), copy, ...events.slice(seq)]),
    );
    const loaded = await store.load('audited');
    expect(verifyIntegrity(loaded.header, loaded.events).broken).toMatchObject({
      seq,
      kind: 'inserted',
    });
  });

  it('names two events that were swapped', async () => {
    const { store, events } = await governed(url());
    const seq = middleChunk(events);
    const swapped = [...events];
    swapped[seq] = { ...(events[seq + 1] as SessionEvent), seq } as SessionEvent;
    swapped[seq + 1] = { ...(events[seq] as SessionEvent), seq: seq + 1 } as SessionEvent;
    await overwrite(store, 'audited', swapped);
    const loaded = await store.load('audited');
    expect(verifyIntegrity(loaded.header, loaded.events).broken).toMatchObject({
      seq,
      kind: 'reordered',
    });
  });
});

describe('a chain forged by one without the signing key', () => {
  /** The altered log with every checkpoint recomputed, keeping the old signatures. */
  function forged(header: Session['header'], events: readonly SessionEvent[], seq: number) {
    const forgedLog = Session.create({ header });
    for (const event of events) {
      const data =
        event.seq === seq
          ? JSON.parse(JSON.stringify(event.data).replace('gold', 'platinum'))
          : event.data;
      if (event.type === 'log/checkpoint') {
        const fresh = ChainTracker.resume(header, forgedLog.events).checkpoint();
        const old = event.data;
        forgedLog.append('log/checkpoint', {
          ...fresh,
          ...(old.signature === undefined ? {} : { signature: old.signature }),
        });
      } else {
        forgedLog.append(event.type as 'turn/start', data, {
          ...(event.surfaceOp === undefined ? {} : { surfaceOp: event.surfaceOp }),
          ...(event.sourceEventSeqs === undefined
            ? {}
            : { sourceEventSeqs: event.sourceEventSeqs }),
        } as never);
      }
    }
    return forgedLog.events;
  }

  it('passes the chain but fails the signature of the first checkpoint after the change', async () => {
    const [, url] = everyBackend('forged')[0] as [string, () => string];
    const { store, events } = await governed(url());
    const { header } = await store.load('audited');
    const target = (events.find((event) => event.type === 'tool/result') as SessionEvent).seq;
    const log = forged(header, events, target);
    expect(verifyIntegrity(header, log).broken).toBeUndefined();
    const checked = verifyIntegrity(header, log, { publicKeys: [keys.publicKey] });
    const firstAfter = log.find(
      (event) => event.type === 'log/checkpoint' && event.seq > target,
    ) as SessionEvent;
    expect(checked.broken).toMatchObject({ seq: firstAfter.seq, kind: 'signature' });
  });

  it('is caught by an anchor of the head taken before the change, without any key', async () => {
    const [, url] = everyBackend('anchored')[0] as [string, () => string];
    const { store, events } = await governed(url());
    const { header } = await store.load('audited');
    const anchor = ChainTracker.resume(header, events).anchor();
    const target = (events.find((event) => event.type === 'tool/result') as SessionEvent).seq;
    const report = verifyIntegrity(header, forged(header, events, target), { anchors: [anchor] });
    expect(report.broken?.kind).toBe('anchor');
  });
});

describe('completeness', () => {
  it('cannot tell a log cut at a checkpoint without an anchor, and names the cut with one', async () => {
    const [, url] = everyBackend('cut')[0] as [string, () => string];
    const { store, events } = await governed(url());
    const { header } = await store.load('audited');
    const anchor = ChainTracker.resume(header, events).anchor();
    const checkpoints = events.filter((event) => event.type === 'log/checkpoint');
    const cut = events.slice(0, (checkpoints[1] as SessionEvent).seq + 1);
    const blind = verifyIntegrity(header, cut);
    expect(blind.broken).toBeUndefined();
    expect(blind.completeness.status).toBe('unknown');
    const anchored = verifyIntegrity(header, cut, { anchors: [anchor] });
    expect(anchored.broken).toBeUndefined();
    expect(anchored.completeness).toMatchObject({ status: 'truncated' });
    expect(anchored.completeness.message).toContain(
      `events ${cut.length} to ${events.length - 1} were cut`,
    );
    expect(verifyIntegrity(header, events, { anchors: [anchor] }).completeness.status).toBe(
      'complete',
    );
  });

  it('verifies a fork, whose seed keeps the checkpoints its parent made', async () => {
    const [, url] = everyBackend('fork')[0] as [string, () => string];
    const { store, events } = await governed(url());
    const { header } = await store.load('audited');
    const parent = Session.create({ header, seed: events });
    const boundary = (events.filter((event) => event.type === 'log/checkpoint')[1] as SessionEvent)
      .seq;
    const child = forkSession(parent, boundary, { id: 'audited-fork' });
    child.append('turn/start', { turn: 3 });
    child.append('log/checkpoint', ChainTracker.resume(child.header, child.events).checkpoint());
    const report = verifyIntegrity(child.header, child.events);
    expect(report.broken).toBeUndefined();
    expect(report.checkpoints).toBe(3);
  });
});

describe('a leaf digest', () => {
  it('is the SHA-256 of the JSON array of the envelope and the payload digest, as documented', () => {
    const event = {
      seq: 3,
      time: 1_700_000_000_123,
      type: 'tool/result',
      data: { turn: 1, step: 1, note: 'é "quoted" \n' },
      surfaceOp: { replace: [1, 2] },
      sourceEventSeqs: [1, 2],
    } as unknown as SessionEvent;
    const payload = `sha256:${createHash('sha256').update(JSON.stringify(event.data)).digest('base64url')}`;
    const text = JSON.stringify([event.time, event.type, payload, event.surfaceOp, [1, 2]]);
    expect(leafDigest(event)).toBe(
      `sha256:${createHash('sha256').update(text).digest('base64url')}`,
    );
    const bare = { seq: 0, time: 5, type: 'turn/start', data: { turn: 1 } } as SessionEvent;
    const bareText = JSON.stringify([5, 'turn/start', payloadDigest(bare.data), null, null]);
    expect(leafDigest(bare)).toBe(
      `sha256:${createHash('sha256').update(bareText).digest('base64url')}`,
    );
  });
});
