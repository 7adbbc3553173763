/**
 * The many-sessions server example, driven over real HTTP: concurrent turns on many sessions of
 * one JSONL store, one turn at a time per session, and every session valid afterwards.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspectSession, openStore, type SessionStore } from 'palimpsest/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AgentServer, startAgentServer } from '../../examples/server.js';
import { checkInvariants } from '../../src/core/index.js';
import { scriptedModel } from '../../src/testing/index.js';

const directory = mkdtempSync(join(tmpdir(), 'palimpsest-server-'));
let store: SessionStore;
let served: AgentServer;

beforeAll(async () => {
  store = await openStore(`jsonl:${directory}`);
  // Each answer streams word by word over ~160 ms, so concurrent turns overlap.
  const model = scriptedModel([{ text: 'one two three four five six seven eight', delayMs: 20 }], {
    loop: true,
  });
  served = await startAgentServer({ store, model, limits: { maxConcurrentTurns: 32 } });
});

afterAll(async () => {
  await served.close();
  await store.close();
  rmSync(directory, { recursive: true, force: true });
});

const turn = (id: string, input: unknown) =>
  fetch(`${served.url}/sessions/${id}/turns`, { method: 'POST', body: JSON.stringify({ input }) });

describe('the example server', () => {
  it('runs turns on 20 sessions at once, each recorded and valid', async () => {
    const ids = Array.from({ length: 20 }, (_, index) => `user-${index}`);
    for (let round = 1; round <= 3; round++) {
      const answers = await Promise.all(ids.map((id) => turn(id, `question ${round}`)));
      for (const answer of answers) {
        expect(answer.status).toBe(200);
        expect(await answer.json()).toMatchObject({ turn: round, reason: { kind: 'completed' } });
      }
    }
    for (const id of ids) {
      const session = await inspectSession(store, id);
      expect(checkInvariants(session.events, { requireClosed: true })).toEqual([]);
      expect(session.deriveMessages()).toHaveLength(6);
    }
  });

  it('answers 409 to a second turn on a session whose turn is running', async () => {
    const [first, second] = await Promise.all([turn('busy', 'a'), turn('busy', 'b')]);
    expect([first.status, second.status].sort()).toEqual([200, 409]);
  });

  it('refuses bad input with 400 and unknown sessions with 404', async () => {
    expect((await turn('x', '')).status).toBe(400);
    expect((await turn('bad id!', 'hi')).status).toBe(400);
    expect((await fetch(`${served.url}/sessions/nobody/messages`)).status).toBe(404);
    const messages = await fetch(`${served.url}/sessions/user-0/messages`);
    expect(((await messages.json()) as { messages: unknown[] }).messages).toHaveLength(6);
  });
});
