/**
 * A deleted session leaves no byte of its content in the store, on every backend (issue 37):
 * a unique marker in user text, tool output, the assistant's answer and stream chunks (chunks
 * stored apart first and then rolled into a compact run, as a streamed turn is) is searched for
 * in every file the store owns (JSONL: the directory; SQLite: the database, its WAL, shared
 * memory and ledger; PostgreSQL: `pg_dump` of the store's schema), and so is the run's stored
 * (compressed) form. The sessions beside it keep loading and verifying, and a fork whose parent
 * is deleted still loads, verifies and appends.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { checkInvariants, forkSession, Session, type SessionEvent } from '../../src/core/index.js';
import { openStore, parseStoreUrl, type SessionStore } from '../../src/store/index.js';
import { assistant, toolResult, user } from '../core/builders.js';
import { withClient } from '../postgres/helpers.js';
import { raw } from './sqlite/helpers.js';
import { everyBackend } from './store-urls.js';

const run = promisify(execFile);

/** A finished turn whose every text holds `marker`, in two batches: the stream, then the rest. */
function markedTurn(id: string, marker: string): { stream: SessionEvent[]; rest: SessionEvent[] } {
  const session = Session.create({ id });
  session.append('turn/start', { turn: 1 });
  session.append('user/message', user('u1', `question ${marker}`), { surfaceOp: 'append' });
  session.append('step/start', { turn: 1, step: 1 });
  const chunks = Array.from({ length: 40 }, (_, i) => i).map(
    (i) =>
      session.append('assistant/chunk', {
        turn: 1,
        step: 1,
        chunk: { type: 'text-delta', id: 't0', delta: `chunk ${i} ${marker} ` },
      }).seq,
  );
  const stream = session.events.slice();
  session.append(
    'assistant/message',
    assistant('a1', `answer ${marker}`, [{ id: 'c1', name: 'read_file' }], { turn: 1, step: 1 }),
    { surfaceOp: 'append', sourceEventSeqs: chunks },
  );
  const call = session.append('tool/call', {
    turn: 1,
    step: 1,
    callId: 'c1',
    name: 'read_file',
    arguments: '{}',
  });
  session.append(
    'tool/result',
    toolResult('r1', 'c1', `output ${marker} `.repeat(2000), { turn: 1, step: 1 }),
    {
      surfaceOp: 'append',
      sourceEventSeqs: [call.seq],
    },
  );
  session.append('step/end', { turn: 1, step: 1 });
  session.append('turn/end', { turn: 1, reason: { kind: 'completed' } });
  return { stream, rest: session.events.slice(stream.length) };
}

async function write(store: SessionStore, id: string, marker: string): Promise<void> {
  const { stream, rest } = markedTurn(id, marker);
  await store.create({ version: 1, id, createdAt: 1 });
  await store.append(id, stream, { expectedSeq: 0 });
  await store.append(id, rest, { expectedSeq: stream.length });
}

/** Loads a session and checks it as `palimpsest verify` does; returns it. */
async function verified(store: SessionStore, id: string): Promise<Session> {
  const loaded = await store.load(id);
  const session = Session.create({ header: loaded.header, seed: loaded.events });
  expect(checkInvariants(session.events, { requireClosed: true })).toEqual([]);
  return session;
}

/** Every file under `directory`, raw. */
async function filesUnder(directory: string): Promise<Array<[string, Buffer]>> {
  const entries = await readdir(directory, { withFileTypes: true, recursive: true });
  const files = entries.filter((entry) => entry.isFile());
  return Promise.all(
    files.map(async (entry): Promise<[string, Buffer]> => {
      const path = join(entry.parentPath, entry.name);
      return [path, await readFile(path)];
    }),
  );
}

/** The stored chunk runs' data of session `id`, read around the store (SQL keeps them compressed). */
async function storedRuns(url: string, id: string): Promise<Buffer[]> {
  const { scheme, path } = parseStoreUrl(url);
  if (scheme === 'sqlite') {
    const db = await raw(path, { readonly: true });
    try {
      const rows = db
        .prepare('SELECT data FROM chunk_runs JOIN sessions ON key = session_id WHERE id = ?')
        .all(id) as Array<{ data: Buffer }>;
      return rows.map((row) => row.data);
    } finally {
      db.close();
    }
  }
  if (scheme === 'postgres') {
    const schema = new URL(url).searchParams.get('schema') ?? 'palimpsest';
    return withClient(async (client) => {
      const { rows } = await client.query<{ data: Buffer }>(
        `SELECT data FROM "${schema}".chunk_runs JOIN "${schema}".sessions ON key = session_key WHERE id = $1`,
        [id],
      );
      return rows.map((row) => row.data);
    });
  }
  return [];
}

/** `pg_dump` of the data of the store's schema, as text. */
async function pgDump(url: string): Promise<string> {
  const parsed = new URL(url);
  const schema = parsed.searchParams.get('schema') ?? 'palimpsest';
  parsed.search = '';
  const { stdout } = await run(
    'pg_dump',
    ['--data-only', `--schema=${schema}`, '--no-owner', parsed.toString()],
    { maxBuffer: 256 * 1024 * 1024 },
  );
  return stdout;
}

/** Where each needle occurs in what the store owns: `file: needle #i`, or nothing. */
async function leftovers(url: string, needles: readonly Buffer[]): Promise<string[]> {
  const { scheme, path } = parseStoreUrl(url);
  const haystacks: Array<[string, Buffer]> =
    scheme === 'postgres'
      ? [['pg_dump', Buffer.from(await pgDump(url))]]
      : await filesUnder(scheme === 'jsonl' ? path : dirname(path));
  const found: string[] = [];
  for (const [name, bytes] of haystacks) {
    needles.forEach((needle, i) => {
      const hex = Buffer.from(needle.toString('hex'));
      if (bytes.includes(needle) || (scheme === 'postgres' && bytes.includes(hex))) {
        found.push(`${name}: needle #${i}`);
      }
    });
  }
  return found;
}

for (const [name, newUrl] of everyBackend('erase')) {
  describe(`a deleted session on ${name}`, () => {
    it('leaves no byte of its content or its id, chunk runs and ledger included, in any file the store owns', async () => {
      const url = newUrl();
      const marker = `erase-me-${randomBytes(8).toString('hex')}`;
      // The id names a person, as an application's ids may: it must go too.
      const erased = `customer-${randomBytes(8).toString('hex')}`;
      const store = await openStore(url);
      await write(store, erased, marker);
      await write(store, 'other', 'kept-content');
      const runs = await storedRuns(url, erased);
      if (!url.startsWith('jsonl:')) expect(runs.length).toBeGreaterThan(0);
      const needles = [Buffer.from(marker), Buffer.from(erased), ...runs];
      // The search finds what is there: the marker and the id before the delete.
      expect(await leftovers(url, [Buffer.from(marker)])).not.toEqual([]);
      expect(await leftovers(url, [Buffer.from(erased)])).not.toEqual([]);

      const reader = await openStore(url, { readOnly: true });
      await verified(reader, erased);

      await store.delete(erased);

      // Searched with the writer and a reader still open (SQLite: the WAL checkpointed by the
      // delete, not by a close), and again once both closed.
      expect(await leftovers(url, needles)).toEqual([]);
      expect((await verified(reader, 'other')).events.length).toBe(48);
      expect((await reader.list()).sessions.map((summary) => summary.header.id)).toEqual(['other']);
      await reader.close();
      await store.close();
      expect(await leftovers(url, needles)).toEqual([]);
      const reopened = await openStore(url);
      expect((await verified(reopened, 'other')).events.length).toBe(48);
      await reopened.close();
    });

    it('leaves its forks whole: they load, verify and append', async () => {
      const store = await openStore(newUrl());
      await write(store, 'parent', 'seeded');
      const parent = await verified(store, 'parent');
      const fork = forkSession(parent, parent.seq - 1, { id: 'fork' });
      await store.create(fork.header);
      await store.append('fork', fork.events, { expectedSeq: 0 });

      await store.delete('parent');

      const child = await verified(store, 'fork');
      expect(child.header.parentSession).toBe('parent');
      child.append('app/note', { after: 'the parent is gone' });
      await store.append('fork', child.events.slice(fork.seq), { expectedSeq: fork.seq });
      expect((await verified(store, 'fork')).seq).toBe(fork.seq + 1);
      await store.close();
    });

    it.runIf(name === 'SQLite')(
      'commits while another connection holds a read snapshot, and leaves no byte once it ends',
      async () => {
        const url = newUrl();
        const { path } = parseStoreUrl(url);
        const marker = `erase-me-${randomBytes(8).toString('hex')}`;
        const store = await openStore(url);
        await write(store, 'erased', marker);
        await write(store, 'other', 'kept-content');
        const needles = [Buffer.from(marker), ...(await storedRuns(url, 'erased'))];
        const reader = await raw(path, { readonly: true });
        reader.exec('BEGIN');
        reader.prepare('SELECT count(*) FROM events').get();

        await store.delete('erased');

        expect((await store.list()).sessions.map((summary) => summary.header.id)).toEqual([
          'other',
        ]);
        reader.exec('COMMIT');
        reader.close();
        await store.close();
        expect(await leftovers(url, needles)).toEqual([]);
      },
    );
  });
}
