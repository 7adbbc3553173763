/**
 * Erasure with provenance (issue 37 §2): `redact` removes every byte of the erased content from
 * what each backend owns (the JSONL files, the SQLite database, its WAL and its ledger,
 * PostgreSQL as `pg_dump` shows it), while the session still loads, lints, verifies its chain and
 * rebuilds its requests, with `[redacted]` where the content was.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { checkRequestDigests, requestAt } from '../../src/agent/index.js';
import { compact } from '../../src/compaction/index.js';
import {
  checkInvariants,
  InvalidArgumentError,
  jsonEqual,
  REDACTED_TEXT,
  redactedData,
  redactedSeqs,
  Session,
  type SessionEvent,
} from '../../src/core/index.js';
import {
  LockedError,
  openSession,
  openStore,
  redact,
  type SessionStore,
  verifyIntegrity,
} from '../../src/store/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { pgUrl } from '../postgres/helpers.js';
import { MARKER, MARKER_PATTERN, recordGovernedSession } from './governed-session.js';
import { everyBackend } from './store-urls.js';
import { pgDump, storedBytes } from './stored-bytes.js';

let opened: SessionStore[] = [];
afterEach(async () => {
  for (const store of opened) await store.close();
  opened = [];
});

async function storeAt(url: string): Promise<SessionStore> {
  const store = await openStore(url);
  opened.push(store);
  return store;
}

function holding(bytes: Map<string, string>, needle: string): string[] {
  return [...bytes].filter(([, text]) => text.includes(needle)).map(([path]) => path);
}

describe.each(everyBackend('redact'))('a redaction on %s', (_name, url) => {
  it('leaves no byte of the erased text in anything the store owns, in text, tool output or stream chunks', async () => {
    const at = url();
    const store = await storeAt(at);
    await recordGovernedSession(store, 'customer');
    await recordGovernedSession(store, 'bystander', { checkpoints: false });
    expect(holding(storedBytes(at), MARKER).length).toBeGreaterThan(0);

    const report = await redact(
      store,
      'customer',
      { match: MARKER_PATTERN },
      { reason: 'erasure request 2026-118' },
    );
    expect(report.erased.length).toBeGreaterThan(3);
    await redact(
      store,
      'bystander',
      { match: MARKER_PATTERN },
      { reason: 'erasure request 2026-118' },
    );
    // The SQLite ledger, WAL and database, the JSONL files, the PostgreSQL rows: none holds it.
    expect(holding(storedBytes(at), MARKER)).toEqual([]);
    expect(holding(storedBytes(at), 'ada.lovelace')).toEqual([]);
  });

  it('keeps a session that loads, lints, verifies its chain and rebuilds its requests with placeholders', async () => {
    const store = await storeAt(url());
    await recordGovernedSession(store, 'customer');
    const report = await redact(
      store,
      'customer',
      { match: MARKER_PATTERN },
      { reason: 'erasure request 2026-118' },
    );
    const loaded = await store.load('customer');
    const session = Session.create({ header: loaded.header, seed: loaded.events });
    expect(checkInvariants(session.events, { requireClosed: true })).toEqual([]);
    const integrity = verifyIntegrity(loaded.header, loaded.events);
    expect(integrity.broken).toBeUndefined();
    expect(integrity.redacted).toBe(report.erased.length);
    // A checkpoint follows the redaction: the erasure itself is covered at once.
    expect(loaded.events.at(-1)?.type).toBe('log/checkpoint');
    expect(loaded.events.at(-2)?.seq).toBe(report.redaction);

    const texts = session.deriveMessages().map((message) => JSON.stringify(message.content));
    expect(texts.join('\n')).not.toContain('ada.lovelace');
    expect(texts[0]).toContain(`Hi, I am ${REDACTED_TEXT}. What plan am I on?`);
    const request = requestAt(session);
    expect(JSON.stringify(request.messages)).toContain(REDACTED_TEXT);
    // Each answer after the erased text was built from it: its recorded request digest no longer
    // matches, and the check names that a redaction explains it.
    const mismatches = checkRequestDigests(session);
    expect(mismatches.length).toBeGreaterThan(0);
    expect(mismatches.every((mismatch) => mismatch.redactedBy === report.redaction)).toBe(true);
  });

  it('erases a whole assistant message with the chunks it was built from and the calls it made', async () => {
    const store = await storeAt(url());
    await recordGovernedSession(store, 'customer');
    const before = (await store.load('customer')).events;
    const call = before.find(
      (event) =>
        event.type === 'assistant/message' &&
        event.data.message.content.some((block) => block.type === 'tool-call'),
    ) as SessionEvent<'assistant/message'>;
    const report = await redact(store, 'customer', { seqs: [call.seq] }, { reason: 'ticket 9' });
    const after = (await store.load('customer')).events;
    const erased = new Set(report.erased);
    // Every chunk that said something is erased (a finish or a stream start holds no content).
    const sources = call.sourceEventSeqs ?? [];
    const saying = sources.filter(
      (seq) =>
        !jsonEqual(
          redactedData((before[seq] as SessionEvent).data),
          (before[seq] as SessionEvent).data,
        ),
    );
    expect(saying.length).toBeGreaterThan(0);
    for (const chunk of saying) expect(erased.has(chunk)).toBe(true);
    const toolCall = after.find((event) => event.type === 'tool/call') as SessionEvent<'tool/call'>;
    expect(erased.has(toolCall.seq)).toBe(true);
    expect(toolCall.data.arguments).toBe('{"id":"[redacted]"}');
    expect(toolCall.data.name).toBe('crm_lookup');
    expect(redactedSeqs(after).get(call.seq)).toBe(report.redaction);
  });

  it('names a compaction summary built from erased text instead of erasing it silently', async () => {
    const store = await storeAt(url());
    await recordGovernedSession(store, 'customer', { checkpoints: false });
    const live = await openSession(store, 'customer');
    await compact(live, {
      model: scriptedModel([{ text: `Summary: customer ${MARKER} is on gold.` }]),
      keepRecentTokens: 10,
    });
    await live.close();
    const events = (await store.load('customer')).events;
    const summary = events.find(
      (event) => event.type === 'user/message' && typeof event.surfaceOp === 'object',
    ) as SessionEvent;
    const first = events.find((event) => event.type === 'user/message') as SessionEvent;
    const report = await redact(store, 'customer', { seqs: [first.seq] }, { reason: 'ticket 10' });
    expect(report.derived).toContain(summary.seq);
  });

  it('refuses while a live writer holds the session, and changes nothing', async () => {
    const store = await storeAt(url());
    await recordGovernedSession(store, 'customer');
    const before = (await store.load('customer')).events.length;
    const live = await openSession(store, 'customer');
    await expect(
      redact(store, 'customer', { match: MARKER_PATTERN }, { reason: 'r' }),
    ).rejects.toThrow(LockedError);
    await live.close();
    expect((await store.load('customer')).events.length).toBe(before);
  });
});

describe('what a redaction refuses', () => {
  it('refuses a missing reason, an unknown seq, the chain’s own records and a pattern without g', async () => {
    const [, url] = everyBackend('redact-refusals')[0] as [string, () => string];
    const store = await storeAt(url());
    await recordGovernedSession(store, 'customer');
    const events = (await store.load('customer')).events;
    const checkpoint = events.find((event) => event.type === 'log/checkpoint') as SessionEvent;
    const cases: Array<[Parameters<typeof redact>[2], string, RegExp]> = [
      [{ seqs: [0] }, ' ', /expected a reason/],
      [
        { seqs: [events.length + 5] },
        'r',
        /expected seqs of session 'customer' \(0 to \d+\), found \d+/,
      ],
      [{ seqs: [checkpoint.seq] }, 'r', /log\/checkpoint, part of the chain's own record/],
      [{ match: /ada/ }, 'r', /expected a pattern with the g flag/],
    ];
    for (const [target, reason, message] of cases) {
      const failure = redact(store, 'customer', target, { reason });
      await expect(failure).rejects.toThrow(InvalidArgumentError);
      await expect(redact(store, 'customer', target, { reason })).rejects.toThrow(message);
    }
    expect((await store.load('customer')).events.length).toBe(events.length);
  });

  it('writes nothing when nothing matches', async () => {
    const [, url] = everyBackend('redact-nothing')[0] as [string, () => string];
    const store = await storeAt(url());
    await recordGovernedSession(store, 'customer');
    const before = (await store.load('customer')).events.length;
    const report = await redact(store, 'customer', { match: /nobody@nowhere/g }, { reason: 'r' });
    expect(report).toMatchObject({ redaction: undefined, erased: [] });
    expect((await store.load('customer')).events.length).toBe(before);
  });
});

describe('erasure by subject', () => {
  it('erases everything of a session whose header tags the subject, and leaves others alone', async () => {
    const store = await storeAt(everyBackend('subject')[0]?.[1]() as string);
    const live = await openSession(store, 'tagged', {
      header: { metadata: { subjects: ['customer-42'] } },
    });
    live.append('turn/start', { turn: 1 });
    live.append(
      'user/message',
      {
        id: 'u1',
        role: 'user',
        content: [{ type: 'text', text: 'my card is 4111' }],
        source: { kind: 'user' },
      },
      { surfaceOp: 'append' },
    );
    live.append('turn/end', { turn: 1, reason: { kind: 'completed' } });
    await live.close();
    await recordGovernedSession(store, 'untagged');
    expect(
      (await redact(store, 'untagged', { subject: 'customer-42' }, { reason: 'r' })).erased,
    ).toEqual([]);
    const report = await redact(store, 'tagged', { subject: 'customer-42' }, { reason: 'r' });
    expect(report.erased).toEqual([1]);
    const { events } = await store.load('tagged');
    expect(JSON.stringify(events[1]?.data)).not.toContain('4111');
    expect(events.at(-1)?.data).toMatchObject({ selector: 'subject', subject: 'customer-42' });
  });

  it('erases the events an application tagged with the subject when it appended them', async () => {
    const store = await storeAt(everyBackend('subject-events')[0]?.[1]() as string);
    const live = await openSession(store, 'shared-desk');
    live.append('turn/start', { turn: 1 });
    const say = (id: string, text: string, subject?: string) =>
      live.append(
        'user/message',
        {
          id,
          role: 'user',
          content: [{ type: 'text', text }],
          source: { kind: 'user', ...(subject === undefined ? {} : { subject }) },
        },
        { surfaceOp: 'append' },
      );
    say('u1', 'I am customer 42, card 4111', 'customer-42');
    say('u2', 'I am customer 43, card 5500', 'customer-43');
    live.append('turn/end', { turn: 1, reason: { kind: 'completed' } });
    await live.close();
    const report = await redact(store, 'shared-desk', { subject: 'customer-42' }, { reason: 'r' });
    expect(report.erased).toEqual([1]);
    const text = JSON.stringify((await store.load('shared-desk')).events);
    expect(text).not.toContain('4111');
    expect(text).toContain('5500');
  });
});

describe('the PostgreSQL check', () => {
  it.runIf((pgUrl ?? '') !== '')('reads the rows through pg_dump', () => {
    expect(pgDump(pgUrl)).toContain('PostgreSQL database dump');
  });
});
