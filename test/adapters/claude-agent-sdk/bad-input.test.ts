/**
 * What the Claude Agent SDK session store refuses, and that a refusal writes nothing. The entries
 * here are hand-made on purpose: they are the malformed cases no harness writes.
 */
import type { SessionKey, SessionStoreEntry } from '@anthropic-ai/claude-agent-sdk';
import { beforeEach, describe, expect, it } from 'vitest';
import {
  ClaudeSessionStoreError,
  ClaudeTranscriptStore,
} from '../../../src/adapters/claude-agent-sdk/index.js';
import {
  checkInvariants,
  PalimpsestError,
  Session,
  type SessionEvent,
} from '../../../src/core/index.js';
import { MemoryStore, openStore, type SessionStore } from '../../../src/store/index.js';

const key: SessionKey = {
  projectKey: '-work-app',
  sessionId: 'b0b0b0b0-0000-4000-8000-000000000001',
};
const at = (second: number) => `2026-12-06T10:00:${String(second).padStart(2, '0')}.000Z`;
const user = (
  uuid: string,
  parentUuid: string | null,
  text: string,
  second: number,
): SessionStoreEntry => ({
  type: 'user',
  uuid,
  parentUuid,
  timestamp: at(second),
  sessionId: key.sessionId,
  message: { role: 'user', content: text },
});
const assistant = (
  uuid: string,
  parentUuid: string,
  text: string,
  second: number,
): SessionStoreEntry => ({
  type: 'assistant',
  uuid,
  parentUuid,
  timestamp: at(second),
  sessionId: key.sessionId,
  message: {
    id: `msg_${uuid}`,
    role: 'assistant',
    model: 'claude-sonnet-4-5',
    content: [{ type: 'text', text }],
    stop_reason: 'end_turn',
    usage: { input_tokens: 10, output_tokens: 3 },
  },
});

/** The uuids of what `load` gave, in order, as one string. */
function uuidsOf(entries: readonly SessionStoreEntry[] | null): string {
  return (entries ?? []).map((entry) => entry.uuid).join(' ');
}

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    if (ClaudeSessionStoreError.isInstance(error)) return error.code;
    throw error;
  }
  return 'resolved';
}

describe('ClaudeTranscriptStore refuses bad input and writes nothing', () => {
  let store: SessionStore;
  let mirror: ClaudeTranscriptStore;
  beforeEach(async () => {
    store = await openStore('memory:');
    mirror = new ClaudeTranscriptStore(store);
  });

  it.each([
    ['no projectKey', { sessionId: 's' }],
    ['an empty sessionId', { projectKey: 'p', sessionId: '' }],
    ['a sessionId holding a slash', { projectKey: 'p', sessionId: '../escape' }],
    ['an empty subpath', { projectKey: 'p', sessionId: 's', subpath: '' }],
    ['a subpath that is not a string', { projectKey: 'p', sessionId: 's', subpath: 7 }],
  ])('a key with %s is INVALID_KEY on every method', async (_case, bad) => {
    const badKey = bad as unknown as SessionKey;
    expect(await codeOf(mirror.append(badKey, [user('u1', null, 'hi', 1)]))).toBe('INVALID_KEY');
    expect(await codeOf(mirror.load(badKey))).toBe('INVALID_KEY');
    expect(await codeOf(mirror.delete(badKey))).toBe('INVALID_KEY');
    expect((await store.list()).sessions).toEqual([]);
  });

  it('says what it found, with control characters escaped', async () => {
    const error = await mirror
      .load({ projectKey: 'p', sessionId: 'a/\u001b[31mred' })
      .catch((e: unknown) => e);
    expect(String((error as Error).message)).toBe(
      `invalid session key: expected a sessionId without '/', found "a/\\u001b[31mred"`,
    );
  });

  it.each([
    ['null', null],
    ['an array', []],
    ['an entry without a type', { uuid: 'x' }],
    ['an entry holding undefined', { type: 'user', uuid: 'x', message: undefined }],
    ['an entry holding NaN', { type: 'custom-title', value: Number.NaN }],
  ])(
    'a batch holding %s is INVALID_ENTRY, and the good entries before it are not written either',
    async (_case, bad) => {
      const batch = [user('u1', null, 'hi', 1), bad as SessionStoreEntry];
      expect(await codeOf(mirror.append(key, batch))).toBe('INVALID_ENTRY');
      expect(await mirror.load(key)).toBeNull();
    },
  );

  it('a key whose session is stored under another project is PROJECT_MISMATCH', async () => {
    await mirror.append(key, [user('u1', null, 'hi', 1)]);
    const elsewhere = { ...key, projectKey: '-work-other' };
    expect(await codeOf(mirror.append(elsewhere, [user('u2', 'u1', 'again', 2)]))).toBe(
      'PROJECT_MISMATCH',
    );
    expect(await codeOf(mirror.load(elsewhere))).toBe('PROJECT_MISMATCH');
    expect(await mirror.load(key)).toHaveLength(1);
  });

  it('a session with the same id that another writer made (an import of the file) is NOT_A_MIRROR', async () => {
    const imported = new MemoryStore();
    await imported.create({ version: 1, id: `claude-code-${key.sessionId}`, createdAt: 0 });
    const over = new ClaudeTranscriptStore(imported);
    expect(await codeOf(over.append(key, [user('u1', null, 'hi', 1)]))).toBe('NOT_A_MIRROR');
    expect((await imported.load(`claude-code-${key.sessionId}`)).events).toEqual([]);
  });

  it('an entry nested past the data limits is INVALID_ENTRY, and leaves no session behind', async () => {
    let deep: Record<string, unknown> = { leaf: true };
    for (let depth = 0; depth < 300; depth++) deep = { deep };
    const error = await mirror
      .append(key, [user('u1', null, 'hi', 1), { type: 'custom-title', deep }])
      .catch((caught: unknown) => caught);
    expect(PalimpsestError.isInstance(error)).toBe(true);
    expect((error as PalimpsestError).code).toBe('INVALID_ENTRY');
    expect((error as PalimpsestError).message).toContain('nesting at most 256 deep');
    expect((await store.list()).sessions).toEqual([]);
    expect(await mirror.load(key)).toBeNull();
  });

  it('an empty batch writes nothing, not even the session', async () => {
    await mirror.append(key, []);
    expect(await mirror.load(key)).toBeNull();
  });
});

describe('ClaudeTranscriptStore on a transcript that goes back to an earlier point', () => {
  const textOf = (event: SessionEvent): string | undefined => {
    const [block] =
      event.type === 'user/message'
        ? event.data.content
        : event.type === 'assistant/message'
          ? event.data.message.content
          : [];
    return block?.type === 'text' ? block.text : undefined;
  };
  const texts = (events: readonly SessionEvent[]) =>
    Session.create({ seed: events })
      .deriveMessages()
      .map((message) => {
        const [block] = message.content;
        return block?.type === 'text' ? block.text : block?.type;
      });

  it('follows a rewind to a prompt: the new prompt shadows what it went back on, which the log keeps', async () => {
    const store = await openStore('memory:');
    const mirror = new ClaudeTranscriptStore(store);
    await mirror.append(key, [user('u1', null, 'first', 1), assistant('a1', 'u1', 'one', 2)]);
    await mirror.append(key, [user('u2', 'a1', 'second', 3), assistant('a2', 'u2', 'two', 4)]);
    // The conversation goes on from the first answer, leaving the second turn.
    await mirror.append(key, [
      user('u3', 'a1', 'second, again', 5),
      assistant('a3', 'u3', 'three', 6),
    ]);
    // Another process (a fresh store over the same log) reads the rewind as it happened.
    await new ClaudeTranscriptStore(store).append(key, [user('u4', 'a3', 'fourth', 7)]);
    await mirror.append(key, [assistant('a4', 'u4', 'four', 8)]);
    expect(uuidsOf(await mirror.load(key))).toBe('u1 a1 u2 a2 u3 a3 u4 a4');
    const { events } = await store.load(`claude-code-${key.sessionId}`);
    expect(checkInvariants(events, { requireClosed: true })).toEqual([]);
    expect(events.some((event) => event.type === 'claude-code/derive-stopped')).toBe(false);
    expect(texts(events)).toEqual(['first', 'one', 'second, again', 'three', 'fourth', 'four']);
    const prompt = events.find(
      (event) => event.type === 'user/message' && typeof event.surfaceOp === 'object',
    );
    const abandoned = events.filter((event) => ['second', 'two'].includes(textOf(event) ?? ''));
    expect(prompt?.sourceEventSeqs).toEqual(abandoned.map((event) => event.seq));
  });

  it('keeps every entry, and marks where the conversation stopped, when it leaves the path elsewhere', async () => {
    const store = await openStore('memory:');
    const mirror = new ClaudeTranscriptStore(store);
    await mirror.append(key, [user('u1', null, 'first', 1), assistant('a1', 'u1', 'one', 2)]);
    await mirror.append(key, [user('u2', 'a1', 'second', 3), assistant('a2', 'u2', 'two', 4)]);
    // Another answer to the second prompt: the path leaves at an answer, not at a prompt.
    await mirror.append(key, [assistant('b2', 'u2', 'two, again', 5)]);
    expect(uuidsOf(await mirror.load(key))).toBe('u1 a1 u2 a2 b2');
    const { events } = await store.load(`claude-code-${key.sessionId}`);
    expect(events.filter((event) => event.type === 'claude-code/derive-stopped')).toHaveLength(1);
    expect(checkInvariants(events)).toEqual([]);
    expect(texts(events)).toEqual(['first', 'one', 'second', 'two']);
  });
});

describe('ClaudeTranscriptStore with two writers on one transcript', () => {
  it('takes in what the other wrote before appending, so nothing is lost, duplicated or reordered', async () => {
    const store = await openStore('memory:');
    const here = new ClaudeTranscriptStore(store);
    const there = new ClaudeTranscriptStore(store);
    await here.append(key, [user('u1', null, 'first', 1), assistant('a1', 'u1', 'one', 2)]);
    await there.append(key, [user('u2', 'a1', 'second', 3), assistant('a2', 'u2', 'two', 4)]);
    // `here` still remembers the log as it left it; the store refuses its stale append.
    await here.append(key, [assistant('a2', 'u2', 'two', 4), user('u3', 'a2', 'third', 5)]);
    await there.append(key, [assistant('a3', 'u3', 'three', 6)]);
    expect(uuidsOf(await here.load(key))).toBe('u1 a1 u2 a2 u3 a3');
    const session = await store.load(`claude-code-${key.sessionId}`);
    expect(checkInvariants(session.events, { requireClosed: true })).toEqual([]);
    expect(session.events.filter((event) => event.type === 'turn/end')).toHaveLength(3);
  });
});
