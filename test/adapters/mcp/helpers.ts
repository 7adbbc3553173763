/**
 * A store of sessions the MCP tests read, and an SDK client connected in process to a server
 * over it (the SDK's linked in-memory transports).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { createMcpServer, type McpServerOptions } from '../../../src/adapters/mcp/index.js';
import { runTurn, type ToolContext } from '../../../src/agent/index.js';
import {
  forkSession,
  SESSION_FORMAT_VERSION,
  Session,
  type SessionHeader,
} from '../../../src/core/index.js';
import { openStore, type SessionStore } from '../../../src/store/index.js';
import { scriptedModel } from '../../../src/testing/index.js';
import { recordToolTurn, tickingClock, toolResult } from '../../core/builders.js';

/** What the fixture store holds, and the seqs the tests ask about. */
export interface Fixture {
  readonly dir: string;
  readonly url: string;
  /** The first turn's last event: where `beta` forked from `alpha`. */
  readonly forkedAfter: number;
  /** `alpha`'s second tool result, and the prune that replaced it. */
  readonly pruned: number;
  readonly prune: number;
  remove(): void;
}

/**
 * `alpha` (project /work/app): two tool turns, the second result pruned. `beta`: a fork of
 * `alpha` after its first turn, with a turn of its own. `gamma` (project /work/app/sub): one
 * turn recorded by the loop with a scripted model. `other` (project /elsewhere).
 */
export async function writeFixture(): Promise<Fixture> {
  const dir = mkdtempSync(join(tmpdir(), 'palimpsest-mcp-'));
  const url = `jsonl:${dir}`;
  const store = await openStore(url);
  const alpha = Session.create({
    header: header('alpha', '/work/app', 1_700_000_000_000),
    clock: tickingClock(),
  });
  const first = recordToolTurn(alpha, 1, 'where is the config?');
  const second = recordToolTurn(alpha, 2, 'and the tests?');
  const beta = forkSession(alpha, first.last, {
    id: 'beta',
    clock: tickingClock(1_800_000_000_000),
  });
  recordToolTurn(beta, 2, 'something else entirely');
  const prune = alpha.append(
    'tool/result',
    toolResult('r2', 'c2', '[pruned: 24 characters]', { turn: 2, step: 1 }),
    {
      surfaceOp: { op: 'replace', start: second.result, end: second.result },
      sourceEventSeqs: [second.result],
    },
  ).seq;
  const gamma = Session.create({ header: header('gamma', '/work/app/sub', 1_700_000_100_000) });
  await runTurn({ session: gamma, model: scriptedModel([{ text: 'All done.' }]), input: 'Do it.' });
  const other = Session.create({ header: header('other', '/elsewhere', 1_700_000_200_000) });
  recordToolTurn(other, 1, 'a secret elsewhere');
  for (const session of [alpha, beta, gamma, other]) {
    await store.create(session.header);
    await store.append(session.id, session.events, { expectedSeq: 0 });
  }
  await store.close();
  return {
    dir,
    url,
    forkedAfter: first.last,
    pruned: second.result,
    prune,
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

function header(id: string, cwd: string, createdAt: number): SessionHeader {
  return { version: SESSION_FORMAT_VERSION, id, createdAt, metadata: { cwd } };
}

/** An SDK client connected to a server over `store`; close it when done. */
export async function connectedClient(
  store: SessionStore,
  options: McpServerOptions = {},
): Promise<Client> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await createMcpServer(store, options).connect(serverSide);
  const client = new Client({ name: 'test', version: '1.0.0' });
  await client.connect(clientSide);
  return client;
}

/** Calls a tool and returns its result as the SDK parsed it. */
export async function call(
  client: Client,
  name: string,
  args: Record<string, unknown>,
): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}

/** The text of a result's first block. */
export function textOf(result: CallToolResult): string {
  const block = result.content[0];
  return block?.type === 'text' ? block.text : '';
}

/** The session ids a `list_sessions` result lists. */
export function idsOf(result: CallToolResult): string[] {
  const sessions = (result.structuredContent?.sessions ?? []) as Array<{ id: string }>;
  return sessions.map((session) => session.id);
}

/** What the loop hands a tool, for calling one directly. */
export function toolContext(signal: AbortSignal = new AbortController().signal): ToolContext {
  return { signal, callId: 'c1', turn: 1, step: 1, session: Session.create({ id: 'context' }) };
}
