/**
 * Encryption at rest (issue 37 §3) on every backend: an encrypted store holds no byte of any
 * payload's plaintext, works as a plain one for fork, compaction, repair and watch, checks its
 * hash chain without keys, and turns the wrong key, a missing key or a shredded one into typed
 * errors, in every copy of the store.
 */
import { randomBytes } from 'node:crypto';
import { cpSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { compact } from '../../src/compaction/index.js';
import {
  checkInvariants,
  forkSession,
  isElidedChunk,
  Session,
  type SessionEvent,
} from '../../src/core/index.js';
import {
  AlreadyExistsError,
  EncryptedStore,
  EncryptionError,
  FileKeyVault,
  type KeyProvider,
  type KeyVault,
  MemoryKeyVault,
  MemoryStore,
  masterKeyProvider,
  moveSession,
  openSession,
  openStore,
  redact,
  type SessionStore,
  ShreddedKeyError,
  verifyIntegrity,
} from '../../src/store/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { MARKER, MARKER_PATTERN, recordGovernedSession } from './governed-session.js';
import { everyBackend } from './store-urls.js';
import { storedBytes } from './stored-bytes.js';

let opened: SessionStore[] = [];
afterEach(async () => {
  for (const store of opened) await store.close().catch(() => {});
  opened = [];
});

async function plainAt(url: string): Promise<SessionStore> {
  const store = await openStore(url);
  opened.push(store);
  return store;
}

interface Keys {
  readonly keys: KeyProvider;
  readonly vault: KeyVault;
}

function newKeys(): Keys {
  return { keys: masterKeyProvider(randomBytes(32)), vault: new MemoryKeyVault() };
}

async function encryptedAt(url: string, keys: Keys = newKeys()): Promise<EncryptedStore> {
  return new EncryptedStore(await plainAt(url), keys);
}

/** Texts of the governed session that live only in payloads. */
const PAYLOAD_TEXTS = [
  MARKER,
  'Ada Lovelace',
  'What plan am I on',
  'renews on the first',
  'Be brief',
];

function holding(bytes: Map<string, string>, needle: string): string[] {
  return [...bytes].filter(([, text]) => text.includes(needle)).map(([path]) => path);
}

describe.each(everyBackend('encrypt'))('an encrypted store on %s', (_name, url) => {
  it('holds no byte of any payload in the clear, while envelopes stay readable', async () => {
    const at = url();
    const store = await encryptedAt(at);
    await recordGovernedSession(store, 'customer');
    const bytes = storedBytes(at);
    for (const text of PAYLOAD_TEXTS) expect(holding(bytes, text), text).toEqual([]);
    // The envelope is not secret: the types are there to fold the surface without keys.
    expect(holding(bytes, 'assistant/message').length).toBeGreaterThan(0);
    const opened = await store.load('customer');
    expect(JSON.stringify(opened.events)).toContain(MARKER);
  });

  it('forks, compacts, repairs and watches as a plain store does', async () => {
    const store = await encryptedAt(url());
    await recordGovernedSession(store, 'customer', { checkpoints: false });
    const loaded = await store.load('customer');
    const session = Session.create({ header: loaded.header, seed: loaded.events });
    expect(checkInvariants(session.events, { requireClosed: true })).toEqual([]);

    const child = forkSession(session, undefined, { id: 'child' });
    await store.create(child.header);
    await store.append('child', child.events, { expectedSeq: 0 });
    const forked = await store.load('child');
    expect(forked.header.parentSession).toBe('customer');
    expect(forked.header.encryption?.scheme).toBe('aes-256-gcm/1');
    expect(forked.events.map((event) => event.data)).toEqual(
      session.events.map((event) => event.data),
    );

    const live = await openSession(store, 'customer');
    await compact(live, {
      model: scriptedModel([{ text: 'Summary: a customer asked about the plan.' }]),
      keepRecentTokens: 10,
    });
    const compacted = live.deriveMessages();
    await live.close();
    const reopened = await openSession(store, 'customer');
    expect(reopened.deriveMessages()).toEqual(compacted);

    // A turn a crash left open is closed on the next open, in sealed form like the rest.
    const next = reopened.seq;
    await reopened.close();
    const open: SessionEvent = { seq: next, time: 1, type: 'turn/start', data: { turn: 9 } };
    await store.append('customer', [open], { expectedSeq: next });
    const repaired = await openSession(store, 'customer');
    expect(repaired.openReport.repairedEvents).toBeGreaterThan(0);
    await repaired.close();
    expect((await store.load('customer')).events.at(-1)?.type).toBe('turn/end');

    const watched: SessionEvent[] = [];
    const stop = new AbortController();
    for await (const event of store.watch('customer', { signal: stop.signal })) {
      watched.push(event);
      if (watched.length === next + 2) stop.abort();
    }
    expect(watched).toEqual((await store.load('customer')).events.slice(0, next + 2));
  });

  it('checks its hash chain without the key, and names a sealed payload moved to another event', async () => {
    const at = url();
    const store = await encryptedAt(at);
    await recordGovernedSession(store, 'customer');
    const raw = await store.inner.load('customer');
    const opened = await store.load('customer');
    const keyless = verifyIntegrity(raw.header, raw.events);
    expect(keyless.broken).toBeUndefined();
    expect(keyless).toEqual(verifyIntegrity(opened.header, opened.events));

    const results = raw.events.filter((event) => event.type === 'tool/result');
    const user = raw.events.find((event) => event.type === 'user/message') as SessionEvent;
    const swapped = raw.events.map((event) =>
      event.seq === user.seq ? ({ ...event, data: results[0]?.data } as SessionEvent) : event,
    );
    expect(verifyIntegrity(raw.header, swapped).broken?.seq).toBe(user.seq);
  });

  it('erases with the old ciphertext gone, so the key cannot bring it back', async () => {
    const at = url();
    const store = await encryptedAt(at);
    await recordGovernedSession(store, 'customer');
    const raw = await store.inner.load('customer');
    const user = raw.events.find((event) => event.type === 'user/message') as SessionEvent;
    const ciphertext = (user.data as unknown as { '~sealed': { data: string } })['~sealed'].data;
    expect(holding(storedBytes(at), ciphertext).length).toBeGreaterThan(0);

    const report = await redact(store, 'customer', { match: MARKER_PATTERN }, { reason: 'r-1' });
    expect(report.erased).toContain(user.seq);
    expect(holding(storedBytes(at), ciphertext)).toEqual([]);
    const after = await store.load('customer');
    expect(JSON.stringify(after.events)).not.toContain(MARKER);
    expect(verifyIntegrity(after.header, after.events).broken).toBeUndefined();
    const keyless = await store.inner.load('customer');
    expect(verifyIntegrity(keyless.header, keyless.events).redacted).toBe(report.erased.length);
  });

  it('refuses the wrong master key, a vault without the key, and a reader without keys', async () => {
    const at = url();
    const keys = newKeys();
    const store = await encryptedAt(at, keys);
    await recordGovernedSession(store, 'customer', { checkpoints: false });

    const wrong = await encryptedAt(at, {
      keys: masterKeyProvider(randomBytes(32)),
      vault: keys.vault,
    });
    const wrongKey = await wrong.load('customer').catch((error: unknown) => error);
    expect(EncryptionError.isInstance(wrongKey) && wrongKey.code).toBe('WRONG_KEY');

    const elsewhere = await encryptedAt(at, { keys: keys.keys, vault: new MemoryKeyVault() });
    const missing = await elsewhere.load('customer').catch((error: unknown) => error);
    expect(EncryptionError.isInstance(missing) && missing.code).toBe('KEY_MISSING');

    const plain = await plainAt(at);
    const keyless = await openSession(plain, 'customer').catch((error: unknown) => error);
    expect(EncryptionError.isInstance(keyless) && keyless.code).toBe('KEY_REQUIRED');
    // Nothing was written by the refusals.
    expect((await store.load('customer')).events.length).toBe(
      (await plain.load('customer')).events.length,
    );
  });

  it('after shredding, reads the session nowhere: here, in a copy, nor through a new store', async () => {
    const at = url();
    const keys = newKeys();
    const store = await encryptedAt(at, keys);
    await recordGovernedSession(store, 'customer', { checkpoints: false });
    await recordGovernedSession(store, 'other', { checkpoints: false });

    expect(await store.shred('customer')).toEqual({ shredded: true });
    const here = await store.load('customer').catch((error: unknown) => error);
    expect(ShreddedKeyError.isInstance(here) && here.sessionId).toBe('customer');
    const event: SessionEvent = { seq: 99, time: 1, type: 'turn/start', data: { turn: 1 } };
    const append = await store
      .append('customer', [event], { expectedSeq: 99 })
      .catch((error: unknown) => error);
    expect(ShreddedKeyError.isInstance(append)).toBe(true);
    const fresh = await encryptedAt(at, keys);
    expect(ShreddedKeyError.isInstance(await fresh.load('customer').catch((e: unknown) => e))).toBe(
      true,
    );
    // The other session is untouched; the shredded one's envelopes still verify.
    expect((await fresh.load('other')).events.length).toBeGreaterThan(0);
    const raw = await store.inner.load('customer');
    expect(verifyIntegrity(raw.header, raw.events).broken).toBeUndefined();
    expect(await store.shred('customer')).toEqual({ shredded: false });
  });
});

describe('creating an encrypted session', () => {
  it('after a create cut short between the vault and the store, succeeds with the key kept', async () => {
    const keys = newKeys();
    const inner = new MemoryStore();
    const failing = Object.create(inner) as MemoryStore;
    failing.create = async () => {
      throw new Error('the disk went away');
    };
    const cut = new EncryptedStore(failing, keys);
    await expect(cut.create({ version: 1, id: 'x', createdAt: 1 })).rejects.toThrow('disk');
    expect((await keys.vault.get('x')).state).toBe('key');

    const store = new EncryptedStore(inner, keys);
    const live = await openSession(store, 'x');
    live.append('turn/start', { turn: 1 });
    await live.close();
    const reader = new EncryptedStore(new MemoryStore({ sharedWith: inner }), keys);
    expect((await reader.load('x')).events[0]?.data).toEqual({ turn: 1 });
  });

  it('of an id the store holds is AlreadyExistsError, and the session keeps its key', async () => {
    const keys = newKeys();
    const store = new EncryptedStore(new MemoryStore(), keys);
    await recordGovernedSession(store, 'customer', { checkpoints: false });
    const again = await store
      .create({ version: 1, id: 'customer', createdAt: 2 })
      .catch((error: unknown) => error);
    expect(again).toBeInstanceOf(AlreadyExistsError);
    const fresh = new EncryptedStore(store.inner, keys);
    expect((await fresh.load('customer')).events.length).toBeGreaterThan(0);
  });
});

describe('stream chunks sealed together', () => {
  /** A turn's stream written in one batch: turn/start, step/start, five chunks. */
  function stream(): SessionEvent[] {
    const session = Session.create({ id: 'streamed', clock: () => 1 });
    session.append('turn/start', { turn: 1 });
    session.append('step/start', { turn: 1, step: 1 });
    for (let i = 0; i < 5; i++) {
      session.append('assistant/chunk', {
        turn: 1,
        step: 1,
        chunk: { type: 'text-delta', id: 't', delta: `part ${i} of ${MARKER}\n` },
      });
    }
    return [...session.events];
  }

  async function written(): Promise<{ store: EncryptedStore; inner: MemoryStore; keys: Keys }> {
    const inner = new MemoryStore();
    const keys = newKeys();
    const store = new EncryptedStore(inner, keys);
    await store.create({ version: 1, id: 'streamed', createdAt: 1 });
    await store.append('streamed', stream(), { expectedSeq: 0 });
    return { store, inner, keys };
  }

  /** The load of a copy of `inner`'s session with `change` made to its stored events. */
  async function loadAltered(
    inner: MemoryStore,
    keys: Keys,
    change: (events: SessionEvent[]) => SessionEvent[],
  ): Promise<unknown> {
    const raw = await inner.load('streamed');
    const copy = new MemoryStore();
    await copy.create(raw.header);
    await copy.append('streamed', change([...raw.events]), { expectedSeq: 0 });
    return new EncryptedStore(copy, keys).load('streamed').catch((error: unknown) => error);
  }

  function sealedFields(event: SessionEvent): Record<string, unknown> {
    return (event.data as unknown as Record<string, Record<string, unknown>>)['~sealed'] ?? {};
  }

  it("keep one sealed record for a write's chunks, each chunk its own event and digest", async () => {
    const { store, inner } = await written();
    const raw = (await inner.load('streamed')).events;
    const sealed = raw.slice(2).map(sealedFields);
    expect(sealed[0]?.n).toBe(5);
    expect(sealed.slice(1).map((fields) => fields.in)).toEqual([2, 2, 2, 2]);
    expect(JSON.stringify(raw)).not.toContain('part 1');
    expect((await store.load('streamed')).events).toEqual(stream());
    expect(verifyIntegrity((await inner.load('streamed')).header, raw).broken).toBeUndefined();
  });

  it('are watched from the middle of a stretch', async () => {
    const { store } = await written();
    const watched: SessionEvent[] = [];
    const stop = new AbortController();
    for await (const event of store.watch('streamed', { fromSeq: 4, signal: stop.signal })) {
      watched.push(event);
      if (watched.length === 3) stop.abort();
    }
    expect(watched).toEqual(stream().slice(4));
  });

  it('open when the head was loaded as a stub and a later chunk in full', async () => {
    const { store } = await written();
    // A message that cites only the first chunk finishes it alone.
    const session = Session.create({ id: 'streamed', seed: stream(), clock: () => 2 });
    const message = session.append(
      'assistant/message',
      {
        turn: 1,
        step: 1,
        message: {
          id: 'a',
          role: 'assistant',
          content: [{ type: 'text', text: 'part 0' }],
          source: { kind: 'model', provider: 'p', model: 'm' },
        },
        finishReason: 'stop',
      },
      { surfaceOp: 'append', sourceEventSeqs: [2] },
    );
    await store.append('streamed', [message], { expectedSeq: 7 });
    const loaded = (await store.load('streamed', { elideFinishedChunks: true })).events;
    expect(isElidedChunk(loaded[2] as SessionEvent)).toBe(true);
    expect(loaded.slice(3, 7)).toEqual(stream().slice(3, 7));
  });

  it('refuse a chunk whose digest was changed, or a stretch moved to another place', async () => {
    const { inner, keys } = await written();
    const digest = await loadAltered(inner, keys, (events) =>
      events.map((event) =>
        event.seq === 4
          ? ({
              ...event,
              data: { '~sealed': { ...sealedFields(event), digest: `sha256:${'A'.repeat(43)}` } },
            } as SessionEvent)
          : event,
      ),
    );
    expect(EncryptionError.isInstance(digest) && digest.code).toBe('SEAL_BROKEN');
    // The head's record put on another chunk: the stretch is bound to where it was sealed.
    const moved = await loadAltered(inner, keys, (events) => {
      const head = events[2] as SessionEvent;
      return events.map((event) =>
        event.seq === 3 ? ({ ...event, data: head.data } as SessionEvent) : event,
      );
    });
    expect(EncryptionError.isInstance(moved) && moved.code).toBe('SEAL_BROKEN');
  });
});

describe('an encrypted session archived and restored', () => {
  it('moves as ciphertext, keeps its key, and reads as before once back', async () => {
    const root = mkdtempSync(join(tmpdir(), 'palimpsest-archive-'));
    const store = await encryptedAt(`jsonl:${join(root, 'live')}`);
    await recordGovernedSession(store, 'customer', { checkpoints: false });
    const before = (await store.load('customer')).events;
    const archive = await plainAt(`jsonl:${join(root, 'archive')}`);
    await moveSession(store, 'customer', archive);
    expect(holding(storedBytes(`jsonl:${join(root, 'archive')}`), MARKER)).toEqual([]);
    await moveSession(archive, 'customer', store);
    expect((await store.load('customer')).events).toEqual(before);
  });
});

describe('a backup of an encrypted store', () => {
  it('cannot be read once the session is deleted from the store, its key shredded with it', async () => {
    const root = mkdtempSync(join(tmpdir(), 'palimpsest-backup-'));
    const keys = masterKeyProvider(randomBytes(32));
    const vault = new FileKeyVault(join(root, 'keys'));
    const at = `sqlite:${join(root, 'live', 'sessions.db')}`;
    const store = await encryptedAt(at, { keys, vault });
    await recordGovernedSession(store, 'customer', { checkpoints: false });
    await store.close();
    cpSync(dirname(at.slice('sqlite:'.length)), join(root, 'backup'), { recursive: true });

    const live = await encryptedAt(at, { keys, vault });
    await live.delete('customer');
    const backup = await encryptedAt(`sqlite:${join(root, 'backup', 'sessions.db')}`, {
      keys,
      vault,
    });
    const read = await backup.load('customer').catch((error: unknown) => error);
    expect(ShreddedKeyError.isInstance(read) && read.sessionId).toBe('customer');
    expect(holding(storedBytes(`jsonl:${join(root, 'keys')}`), 'wrapped')).toEqual([]);
  });
});
