/**
 * `searchSessions` over every backend (JSONL with its index file, SQLite with FTS5 in its own
 * database, PostgreSQL when the suite has a server, and the memory store's scan): the same
 * query finds the same messages, filters narrow them, the index follows appends, redactions and
 * deletes, and no erased byte stays in the index.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  applyRetention,
  MemoryStore,
  moveSession,
  openStore,
  type RetentionPlan,
  rebuildSearchIndex,
  redact,
  type SessionStore,
  searchSessions,
} from '../../src/store/index.js';
import { openJsonlStore } from '../../src/store/jsonl/index.js';
import { SEARCH_INDEX_FILE as SEARCH_FILE_NAME } from '../../src/store/jsonl/paths.js';
import { SCRIPT_QUERIES, SCRIPT_TEXTS } from './search/scripts.js';
import { compactWith, T0, writeFork, writeTurn } from './search/sessions.js';
import { everyBackend } from './store-urls.js';
import { storedBytes } from './stored-bytes.js';

const backends: Array<[string, () => string | undefined]> = [
  ['memory', () => undefined],
  ...everyBackend('search'),
];

async function open(url: string | undefined): Promise<SessionStore> {
  return url === undefined ? new MemoryStore() : openStore(url);
}

describe.each(backends)('searchSessions on %s', (name, makeUrl) => {
  // Only the memory store keeps no index: it is scanned (docs/search.md).
  const method = name === 'memory' ? 'scan' : 'index';

  it('finds each kind of message by its words, with its seq and a marked snippet', async () => {
    const store = await open(makeUrl());
    try {
      await writeTurn(store, 'alpha', 'Why does the flaky websocket test fail?');
      await writeTurn(store, 'beta', 'Rename the billing module');
      const user = await searchSessions(store, 'websocket');
      expect(user.method).toBe(method);
      expect(new Set(user.hits.map((hit) => `${hit.session}:${hit.seq}`))).toEqual(
        new Set(['alpha:2', 'alpha:3']),
      );
      expect(user.hits.find((hit) => hit.seq === 2)?.snippet).toContain('«websocket»');
      const args = await searchSessions(store, 'needle_pattern');
      expect(args.hits.map((hit) => [hit.session, hit.seq, hit.tools])).toEqual(
        expect.arrayContaining([
          ['alpha', 3, 'grep_files'],
          ['beta', 3, 'grep_files'],
        ]),
      );
      const output = await searchSessions(store, 'haystack', { sessions: ['beta'] });
      expect(output.hits.map((hit) => [hit.session, hit.seq, hit.role])).toEqual([
        ['beta', 5, 'tool'],
      ]);
    } finally {
      await store.close();
    }
  });

  it('matches a quoted phrase only as written, and plain words anywhere in a message', async () => {
    const store = await open(makeUrl());
    try {
      await writeTurn(store, 'ordered', 'the night train to Vienna');
      await writeTurn(store, 'scattered', 'a train at night to Vienna');
      const phrase = await searchSessions(store, '"night train"');
      expect(phrase.hits.map((hit) => hit.session).sort()).toEqual(['ordered', 'ordered']);
      const words = await searchSessions(store, 'night train');
      expect(new Set(words.hits.map((hit) => hit.session))).toEqual(
        new Set(['ordered', 'scattered']),
      );
      const folded = await searchSessions(store, 'VIENNÄ');
      expect(folded.hits.length).toBe(4);
    } finally {
      await store.close();
    }
  });

  it('finds a word of any script as written, in capitals or without its accents, as the scan does', async () => {
    const store = await open(makeUrl());
    const scan = new MemoryStore();
    try {
      for (const [id, words] of Object.entries(SCRIPT_TEXTS)) {
        await writeTurn(store, id, words);
        await writeTurn(scan, id, words);
      }
      const found = async (from: SessionStore, query: string): Promise<string[]> =>
        (await searchSessions(from, query)).hits.map((hit) => `${hit.session}:${hit.seq}`).sort();
      for (const [query, sessions] of SCRIPT_QUERIES) {
        const hits = await found(store, query);
        expect(hits, query).toEqual(await found(scan, query));
        expect(new Set(hits.map((hit) => hit.split(':')[0])), query).toEqual(new Set(sessions));
      }
    } finally {
      await store.close();
    }
  });

  it('narrows by time, model, tool, project, and takes forks and children only when asked', async () => {
    const store = await open(makeUrl());
    try {
      const parent = await writeTurn(store, 'root', 'deploy the cluster', {
        metadata: { cwd: '/work/app' },
        model: 'model-a',
      });
      await writeTurn(store, 'later', 'deploy again', { time: T0 + 100_000, model: 'model-b' });
      await writeTurn(store, 'child', 'deploy from a subagent', {
        metadata: { subagentOf: { session: 'root' } },
      });
      await writeFork(store, parent, 'fork', 'deploy the fork');
      const all = async (options: Parameters<typeof searchSessions>[2]) =>
        [
          ...new Set(
            (await searchSessions(store, 'deploy', options)).hits.map((hit) => hit.session),
          ),
        ].sort();
      expect(await all({})).toEqual(['later', 'root']);
      expect(await all({ includeForks: true, includeChildren: true })).toEqual([
        'child',
        'fork',
        'later',
        'root',
      ]);
      expect(await all({ since: T0 + 100_000 })).toEqual(['later']);
      expect(await all({ until: T0 + 100_000 })).toEqual(['root']);
      expect(await all({ model: 'model-b' })).toEqual(['later']);
      expect(await all({ project: '/work/app' })).toEqual(['root']);
      const tool = await searchSessions(store, 'deploy', { tool: 'grep_files' });
      expect(tool.hits.every((hit) => hit.role === 'assistant')).toBe(true);
      const fork = await searchSessions(store, 'deploy', {
        includeForks: true,
        sessions: ['fork'],
      });
      // The fork's copied turn is the parent's: only its own message is found in it.
      expect(fork.hits.map((hit) => hit.seq)).toEqual([8]);
    } finally {
      await store.close();
    }
  });

  it('follows appends, finds a compaction summary, and caps the hits', async () => {
    const store = await open(makeUrl());
    try {
      const session = await writeTurn(store, 'grow', 'first words');
      expect((await searchSessions(store, 'summary')).hits).toEqual([]);
      await compactWith(store, session, 'summary of the websocket discussion');
      const found = await searchSessions(store, 'summary websocket');
      expect(found.hits.map((hit) => [hit.seq, hit.type])).toEqual([[7, 'context/message']]);
      expect(found.indexedSessions).toBe(method === 'index' ? 1 : 0);
      const again = await searchSessions(store, 'summary websocket');
      expect(again.indexedSessions).toBe(0);
      for (let i = 0; i < 5; i++) await writeTurn(store, `many-${i}`, 'common words');
      expect((await searchSessions(store, 'common', { limit: 3 })).hits).toHaveLength(3);
    } finally {
      await store.close();
    }
  });

  it('keeps no byte of redacted or deleted content in the index', async () => {
    const url = makeUrl();
    const store = await open(url);
    try {
      await writeTurn(store, 'secret', 'my card is zqxmarker4242');
      await writeTurn(store, 'gone', 'delete me vvdeletedmarker');
      expect((await searchSessions(store, 'zqxmarker4242')).hits).toHaveLength(2);
      expect((await searchSessions(store, 'vvdeletedmarker')).hits).toHaveLength(2);
      await redact(store, 'secret', { match: /zqxmarker4242/g }, { reason: 'test' });
      await store.delete('gone');
      expect((await searchSessions(store, 'zqxmarker4242')).hits).toEqual([]);
      expect((await searchSessions(store, 'vvdeletedmarker')).hits).toEqual([]);
      const card = (await searchSessions(store, 'card')).hits.map((hit) => hit.snippet);
      expect(card).toContain('my «card» is [redacted]');
      if (url !== undefined) {
        await store.close();
        for (const [file, bytes] of storedBytes(url)) {
          expect(bytes.includes('zqxmarker4242'), file).toBe(false);
          expect(bytes.includes('vvdeletedmarker'), file).toBe(false);
        }
      }
    } finally {
      await store.close();
    }
  });

  it('refuses a query it cannot read with BAD_QUERY', async () => {
    const store = await open(makeUrl());
    try {
      for (const query of ['', '   ', '"unclosed', '!!! ???']) {
        await expect(searchSessions(store, query)).rejects.toMatchObject({ code: 'BAD_QUERY' });
      }
      await expect(searchSessions(store, 'x', { limit: 0 })).rejects.toMatchObject({
        code: 'INVALID_ARGUMENT',
      });
    } finally {
      await store.close();
    }
  });
});

describe('the JSONL index file', () => {
  const [, makeUrl] = everyBackend('search-file')[0] as [string, () => string];

  it('is made beside the logs, and a damaged one is rebuilt from them', async () => {
    const url = makeUrl();
    const directory = url.slice('jsonl:'.length);
    const store = await openStore(url);
    try {
      await writeTurn(store, 'kept', 'lighthouse keeper');
      expect((await searchSessions(store, 'lighthouse')).hits).toHaveLength(2);
      expect(existsSync(join(directory, SEARCH_FILE_NAME))).toBe(true);
      writeFileSync(
        join(directory, SEARCH_FILE_NAME),
        'not a database at all, just bytes'.repeat(200),
      );
      const after = await searchSessions(store, 'lighthouse');
      expect(after.hits).toHaveLength(2);
      expect(after.indexedSessions).toBe(1);
      expect(await rebuildSearchIndex(store)).toBe(1);
      expect((await store.list()).sessions.map((summary) => summary.header.id)).toEqual(['kept']);
    } finally {
      await store.close();
    }
  });
});

describe('snippets', () => {
  it('mark a phrase whole and each word on its own, on the index and in a scan alike', async () => {
    const memory = new MemoryStore();
    const [, makeUrl] = everyBackend('search-snippet')[1] as [string, () => string];
    const sqlite = await openStore(makeUrl());
    try {
      for (const store of [memory, sqlite]) {
        await writeTurn(store, 'trip', 'Book the night train to Vienna, then a train home');
        const { hits } = await searchSessions(store, '"night train" vienna', {
          sessions: ['trip'],
        });
        expect(hits.find((hit) => hit.role === 'user')?.snippet).toBe(
          'Book the «night train» to «Vienna», then a train home',
        );
      }
    } finally {
      await sqlite.close();
    }
  });
});

describe('catchUp: false', () => {
  it('asks the index as it stands, without reading what changed since', async () => {
    const [, makeUrl] = everyBackend('search-stale')[1] as [string, () => string];
    const store = await openStore(makeUrl());
    try {
      await writeTurn(store, 'first', 'harbour crane');
      expect((await searchSessions(store, 'harbour')).hits).toHaveLength(2);
      await writeTurn(store, 'second', 'harbour pilot');
      const stale = await searchSessions(store, 'harbour', { catchUp: false });
      expect(new Set(stale.hits.map((hit) => hit.session))).toEqual(new Set(['first']));
      const fresh = await searchSessions(store, 'harbour');
      expect(new Set(fresh.hits.map((hit) => hit.session))).toEqual(new Set(['first', 'second']));
    } finally {
      await store.close();
    }
  });
});

describe('the JSONL index file, after an erasure', () => {
  it('loses a redacted, deleted or archived session before any search', async () => {
    const [, makeUrl] = everyBackend('search-file-erase')[0] as [string, () => string];
    const url = makeUrl();
    const archiveUrl = makeUrl();
    const store = await openStore(url);
    const archive = await openStore(archiveUrl);
    try {
      await writeTurn(store, 'secret', 'my card is ppmarker5151');
      await writeTurn(store, 'gone', 'delete me jjdeletedmarker');
      await writeTurn(store, 'moved', 'archive me aaarchivedmarker');
      await writeTurn(store, 'kept', 'still here hhkeptmarker');
      for (const marker of ['ppmarker5151', 'jjdeletedmarker', 'aaarchivedmarker']) {
        expect((await searchSessions(store, marker)).hits).toHaveLength(2);
      }
      await redact(store, 'secret', { match: /ppmarker5151/g }, { reason: 'test' });
      const plan: RetentionPlan = {
        remove: [{ id: 'gone', lastActivity: T0, sizeBytes: 0, reasons: ['age'] }],
        heldForForks: [],
        kept: 3,
        bytesBefore: 0,
        bytesAfter: 0,
        overBudget: false,
      };
      expect((await applyRetention(store, plan, { kind: 'delete' })).removed).toHaveLength(1);
      await moveSession(store, 'moved', archive);
    } finally {
      await store.close();
      await archive.close();
    }
    const index = readFileSync(join(url.slice('jsonl:'.length), SEARCH_FILE_NAME), 'latin1');
    for (const marker of ['ppmarker5151', 'jjdeletedmarker', 'aaarchivedmarker']) {
      expect(index.includes(marker), marker).toBe(false);
    }
    // What was not erased stays indexed, and the redacted session is indexed again when asked.
    expect(index.includes('hhkeptmarker')).toBe(true);
    const reopened = await openStore(url);
    try {
      expect((await searchSessions(reopened, 'card')).hits.map((hit) => hit.snippet)).toContain(
        'my «card» is [redacted]',
      );
    } finally {
      await reopened.close();
    }
  });
});

describe('the JSONL index file, after a bare store.delete', () => {
  it('loses the session at once, row by row, when the store was opened with openStore', async () => {
    const [, makeUrl] = everyBackend('search-file-delete')[0] as [string, () => string];
    const url = makeUrl();
    const store = await openStore(url);
    try {
      await writeTurn(store, 'gone', 'delete me wwdeletedmarker');
      await writeTurn(store, 'kept', 'still here yykeptmarker');
      expect((await searchSessions(store, 'wwdeletedmarker')).hits).toHaveLength(2);
      await store.delete('gone');
    } finally {
      await store.close();
    }
    const index = readFileSync(join(url.slice('jsonl:'.length), SEARCH_FILE_NAME), 'latin1');
    expect(index.includes('wwdeletedmarker')).toBe(false);
    expect(index.includes('yykeptmarker')).toBe(true);
  });

  it('removes the index file whole when the store was opened without the hook, and the next search builds it again', async () => {
    const [, makeUrl] = everyBackend('search-file-delete-bare')[0] as [string, () => string];
    const directory = makeUrl().slice('jsonl:'.length);
    const store = await openJsonlStore(directory);
    try {
      await writeTurn(store, 'gone', 'delete me uudeletedmarker');
      await writeTurn(store, 'kept', 'still here ttkeptmarker');
      expect((await searchSessions(store, 'uudeletedmarker')).hits).toHaveLength(2);
      await store.delete('gone');
      expect(existsSync(join(directory, SEARCH_FILE_NAME))).toBe(false);
      expect((await searchSessions(store, 'ttkeptmarker')).hits).toHaveLength(2);
      expect((await searchSessions(store, 'uudeletedmarker')).hits).toEqual([]);
    } finally {
      await store.close();
    }
  });
});

describe('the SQLite index', () => {
  it('loses a redacted or deleted message in the same transaction, before any search', async () => {
    const [, makeUrl] = everyBackend('search-erase')[1] as [string, () => string];
    const url = makeUrl();
    const store = await openStore(url);
    try {
      await writeTurn(store, 'secret', 'my card is qqmarker9191');
      await writeTurn(store, 'gone', 'delete me kkdeletedmarker');
      expect((await searchSessions(store, 'qqmarker9191')).hits).toHaveLength(2);
      expect((await searchSessions(store, 'kkdeletedmarker')).hits).toHaveLength(2);
      await redact(store, 'secret', { match: /qqmarker9191/g }, { reason: 'test' });
      await store.delete('gone');
    } finally {
      await store.close();
    }
    for (const [file, bytes] of storedBytes(url)) {
      expect(bytes.includes('qqmarker9191'), file).toBe(false);
      expect(bytes.includes('kkdeletedmarker'), file).toBe(false);
    }
  });
});
