/**
 * The MCP server's tools and resources, asked by the SDK's own `Client` over the SDK's linked
 * in-memory transports, against a JSONL store on disk.
 */

import { randomBytes } from 'node:crypto';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { McpAdapterError, transcriptUri } from '../../../src/adapters/mcp/index.js';
import { createMcpServer } from '../../../src/adapters/mcp/server.js';
import { Session } from '../../../src/core/index.js';
import {
  EncryptedStore,
  MemoryKeyVault,
  MemoryStore,
  masterKeyProvider,
  openStore,
  type SessionStore,
} from '../../../src/store/index.js';
import { user } from '../../core/builders.js';
import { call, connectedClient, type Fixture, idsOf, textOf, writeFixture } from './helpers.js';

let fixture: Fixture;
let store: SessionStore;
const clients: Client[] = [];

beforeAll(async () => {
  fixture = await writeFixture();
  store = await openStore(fixture.url, { readOnly: true });
});
afterAll(async () => {
  await store.close();
  fixture.remove();
});
afterEach(async () => {
  for (const client of clients.splice(0)) await client.close();
});

async function client(options: Parameters<typeof connectedClient>[1] = {}): Promise<Client> {
  const connected = await connectedClient(store, options);
  clients.push(connected);
  return connected;
}

describe('the MCP server over a store', () => {
  it('offers seven read-only tools, each with an input and an output schema', async () => {
    const { tools } = await (await client()).listTools();
    expect(tools.map((tool) => tool.name)).toEqual([
      'list_sessions',
      'search_sessions',
      'read_transcript',
      'read_surface',
      'why',
      'session_cost',
      'diff_surfaces',
    ]);
    for (const tool of tools) {
      expect(tool.inputSchema.type).toBe('object');
      expect(tool.outputSchema?.type).toBe('object');
      expect(tool.annotations?.readOnlyHint).toBe(true);
    }
  });

  it('lists sessions newest first, a page at a time', async () => {
    const mcp = await client();
    const first = await call(mcp, 'list_sessions', { limit: 2 });
    expect(first.structuredContent).toMatchObject({
      total: 4,
      nextCursor: '2',
      sessions: [
        { id: 'beta', parentSession: 'alpha', project: '/work/app' },
        { id: 'other', project: '/elsewhere' },
      ],
    });
    const second = await call(mcp, 'list_sessions', { limit: 2, cursor: '2' });
    expect(idsOf(second)).toEqual(['gamma', 'alpha']);
    expect(second.structuredContent?.nextCursor).toBeUndefined();
    expect(textOf(second)).toContain('Sessions 3–4 of 4');
    const forks = await call(mcp, 'list_sessions', { parentSession: 'alpha' });
    expect(forks.structuredContent?.total).toBe(1);
  });

  it('reads a transcript in log order, with the pruned result and the prune that replaced it', async () => {
    const result = await call(await client(), 'read_transcript', { session: 'alpha' });
    const entries = result.structuredContent?.entries as Array<Record<string, unknown>>;
    expect(entries.find((entry) => entry.seq === fixture.pruned)).toMatchObject({
      kind: 'message',
      role: 'tool',
      onSurface: false,
      shadowedBy: fixture.prune,
    });
    expect(entries.at(-1)).toMatchObject({
      seq: fixture.prune,
      kind: 'replacement',
      replaced: [fixture.pruned],
      onSurface: true,
    });
    expect(textOf(result)).toContain('where is the config?');
    expect(textOf(result)).toContain(`(replaced by #${fixture.prune})`);
  });

  it('cuts a transcript to the characters asked for and says where to go on', async () => {
    const mcp = await client();
    const cut = await call(mcp, 'read_transcript', { session: 'alpha', maxChars: 200 });
    const entries = cut.structuredContent?.entries as unknown[];
    const total = cut.structuredContent?.total as number;
    expect(entries.length).toBeLessThan(total);
    const next = cut.structuredContent?.next as string;
    expect(next).toBe(String(entries.length));
    expect(textOf(cut)).toContain(`more: from "${next}"`);
    const rest = await call(mcp, 'read_transcript', { session: 'alpha', from: next });
    expect(rest.structuredContent?.entries).toHaveLength(total - entries.length);
  });

  it('reads what the model sees now, and what it saw right after an earlier event', async () => {
    const mcp = await client();
    const now = await call(mcp, 'read_surface', { session: 'alpha' });
    const messages = now.structuredContent?.messages as Array<{ seq: number; text: string }>;
    expect(messages.map((message) => message.seq)).toContain(fixture.prune);
    expect(messages.map((message) => message.seq)).not.toContain(fixture.pruned);
    expect(textOf(now)).toContain('[pruned: 24 characters]');
    const before = await call(mcp, 'read_surface', { session: 'alpha', at: fixture.prune - 1 });
    const earlier = before.structuredContent?.messages as Array<{ seq: number; text: string }>;
    expect(earlier.find((message) => message.seq === fixture.pruned)?.text).toContain(
      'contents of file 2',
    );
  });

  it('says why an event is there: its sources, what replaced it, what cites it', async () => {
    const mcp = await client();
    const prune = await call(mcp, 'why', { session: 'alpha', seq: fixture.prune });
    expect(prune.structuredContent).toMatchObject({
      type: 'tool/result',
      recordsSources: true,
      onSurface: true,
      shadowedBy: [],
    });
    const sources = prune.structuredContent?.derivedFrom as Array<{ seq: number; depth: number }>;
    expect(sources[0]).toMatchObject({ seq: fixture.pruned, depth: 1 });
    const pruned = await call(mcp, 'why', { session: 'alpha', seq: fixture.pruned });
    expect(pruned.structuredContent).toMatchObject({
      shadowedBy: [fixture.prune],
      citedBy: [fixture.prune],
      onSurface: false,
    });
    expect(textOf(pruned)).toContain('the model sees it now: no');
  });

  it('totals the usage and cost of a session the loop recorded', async () => {
    const result = await call(await client(), 'session_cost', { session: 'gamma' });
    const total = result.structuredContent?.total as { calls: number; tokens: { output: number } };
    expect(total.calls).toBe(1);
    expect(total.tokens.output).toBeGreaterThan(0);
    expect(result.structuredContent?.turns).toBe(1);
    expect(textOf(result)).toContain('1 model call(s) over 1 turn(s)');
  });

  it("compares a fork's surface with its parent's from their common prefix", async () => {
    const result = await call(await client(), 'diff_surfaces', { a: 'alpha', b: 'beta' });
    expect(result.structuredContent).toMatchObject({
      commonEvents: fixture.forkedAfter + 1,
      sharedMessages: 4,
      a: { session: 'alpha', total: 4 },
      b: { session: 'beta', total: 4 },
    });
    const onlyB = result.structuredContent?.b as { messages: Array<{ text: string }> };
    expect(onlyB.messages[0]?.text).toBe('something else entirely');
    expect(textOf(result)).toContain('both models see the same first 4 message(s)');
  });

  it('offers each session in scope as a transcript resource', async () => {
    const mcp = await client({ scope: { project: '/work/app' } });
    const { resources } = await mcp.listResources();
    expect(resources.map((resource) => resource.uri).sort()).toEqual(
      ['alpha', 'beta', 'gamma'].map(transcriptUri),
    );
    const read = await mcp.readResource({ uri: transcriptUri('beta') });
    expect(read.contents[0]).toMatchObject({ mimeType: 'text/plain' });
    expect(JSON.stringify(read.contents[0])).toContain('something else entirely');
    await expect(mcp.readResource({ uri: transcriptUri('other') })).rejects.toThrow(
      /SESSION_NOT_FOUND/,
    );
  });
});

describe('the size of what the MCP server answers', () => {
  it('cuts a long message and says how much it left out', async () => {
    const memory = new MemoryStore();
    const session = Session.create({ id: 'long' });
    session.append('user/message', user('u0', 'x'.repeat(10_000)), { surfaceOp: 'append' });
    await memory.create(session.header);
    await memory.append(session.id, session.events, { expectedSeq: 0 });
    const mcp = await connectedClient(memory);
    clients.push(mcp);
    const result = await call(mcp, 'read_surface', { session: 'long' });
    expect(textOf(result)).toContain(`${'x'.repeat(100)}… [6000 more characters cut]`);
    const messages = (result.structuredContent?.messages ?? []) as Array<{ text: string }>;
    expect(messages[0]?.text.length).toBeLessThan(4_100);
  });
});

describe('search_sessions', () => {
  it('finds the messages holding every word, each with its session and seq', async () => {
    const found = await call(await client(), 'search_sessions', { query: 'config' });
    expect(found.isError).toBeFalsy();
    const hits = found.structuredContent?.hits as {
      session: string;
      seq: number;
      snippet: string;
    }[];
    expect(hits.map((hit) => hit.session)).toEqual(['alpha']);
    expect(hits[0]?.snippet).toContain('«config»');
    expect(textOf(found)).toMatch(/^1 matching message\(s\), best first:\n- alpha #\d+ user /);
    const none = await call(await client(), 'search_sessions', {
      query: 'config "no such phrase"',
    });
    expect(none.structuredContent?.hits).toEqual([]);
    expect(textOf(none)).toBe('No message matches.');
  });

  it('never names a session out of scope, by project or by allow-list', async () => {
    const everywhere = await call(await client(), 'search_sessions', { query: 'secret' });
    expect(sessionsOf(everywhere)).toEqual(['other']);
    const scoped = await client({ scope: { project: '/work/app' } });
    expect(
      (await call(scoped, 'search_sessions', { query: 'secret' })).structuredContent?.hits,
    ).toEqual([]);
    const allowed = await client({ scope: { sessions: ['gamma'] } });
    const done = await call(allowed, 'search_sessions', { query: 'done' });
    expect(sessionsOf(done)).toEqual(['gamma']);
    expect(
      (await call(allowed, 'search_sessions', { query: 'config' })).structuredContent?.hits,
    ).toEqual([]);
  });

  it('answers a query it cannot read with BAD_QUERY', async () => {
    const refused = await call(await client(), 'search_sessions', { query: '"' });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toMatch(/^BAD_QUERY: /);
  });
});

/** The sessions a search's hits name, in order. */
function sessionsOf(result: { structuredContent?: Record<string, unknown> | undefined }): string[] {
  const hits = (result.structuredContent?.hits ?? []) as { session: string }[];
  return hits.map((hit) => hit.session);
}

describe('the scope of the MCP server', () => {
  it('shows only the sessions under the project directory', async () => {
    const mcp = await client({ scope: { project: '/work/app' } });
    const listed = await call(mcp, 'list_sessions', {});
    expect(idsOf(listed)).toEqual(['beta', 'gamma', 'alpha']);
  });

  it('answers an out-of-scope session exactly as one that does not exist', async () => {
    const mcp = await client({ scope: { project: '/work/app' } });
    const hidden = await call(mcp, 'read_transcript', { session: 'other' });
    const missing = await call(mcp, 'read_transcript', { session: 'nosuch' });
    expect(hidden.isError).toBe(true);
    expect(textOf(hidden)).toMatch(/^SESSION_NOT_FOUND: /);
    expect(textOf(hidden).replace("'other'", 'ID')).toBe(textOf(missing).replace("'nosuch'", 'ID'));
    expect(textOf(hidden)).not.toContain(fixture.dir);
  });

  it('shows only the allowed sessions', async () => {
    const mcp = await client({ scope: { sessions: ['gamma'] } });
    const listed = await call(mcp, 'list_sessions', {});
    expect(listed.structuredContent?.total).toBe(1);
    const diff = await call(mcp, 'diff_surfaces', { a: 'gamma', b: 'alpha' });
    expect(textOf(diff)).toMatch(/^SESSION_NOT_FOUND: .*'alpha'/);
  });

  it('refuses a relative project directory and an empty allow-list', () => {
    expect(() => createMcpServer(store, { scope: { project: 'work/app' } })).toThrow(
      expect.objectContaining({ code: 'INVALID_SCOPE' }),
    );
    expect(() => createMcpServer(store, { scope: { sessions: [] } })).toThrow(McpAdapterError);
  });
});

describe('tool errors of the MCP server', () => {
  it('answers a seq the session does not have with EVENT_NOT_FOUND', async () => {
    const result = await call(await client(), 'why', { session: 'alpha', seq: 10_000 });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(
      /^EVENT_NOT_FOUND: expected the seq of an event of session 'alpha' \(0\.\.\d+\), found 10000$/,
    );
  });

  it('answers a cursor it did not issue with INVALID_ARGUMENTS', async () => {
    const result = await call(await client(), 'list_sessions', { cursor: 'abc' });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/^INVALID_ARGUMENTS: expected a cursor from a previous page/);
  });

  it('answers arguments that fail the schema with a tool error, not a crash', async () => {
    const mcp = await client();
    const result = await call(mcp, 'read_transcript', { session: 42 });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/session/);
    // The connection is still good.
    expect((await call(mcp, 'list_sessions', {})).isError).toBeUndefined();
  });
});

describe('the MCP server over an encrypted store', () => {
  it('reads sealed sessions with the keys, and answers KEY_REQUIRED without them', async () => {
    const inner = new MemoryStore();
    const sealed = new EncryptedStore(inner, {
      keys: masterKeyProvider(randomBytes(32)),
      vault: new MemoryKeyVault(),
    });
    const session = Session.create({ id: 'secret' });
    session.append('user/message', user('u0', 'the launch code'), { surfaceOp: 'append' });
    await sealed.create(session.header);
    await sealed.append(session.id, session.events, { expectedSeq: 0 });
    const withKeys = await connectedClient(sealed);
    const keyless = await connectedClient(inner);
    clients.push(withKeys, keyless);
    expect(textOf(await call(withKeys, 'read_surface', { session: 'secret' }))).toContain(
      'the launch code',
    );
    const refused = await call(keyless, 'read_surface', { session: 'secret' });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toMatch(/^KEY_REQUIRED: /);
    expect(textOf(refused)).not.toContain('the launch code');
  });
});
