/**
 * Export to Codex: a session palimpsest's loop recorded becomes a rollout (session_meta, the
 * history as response items, turns and usage as Codex's events, a compaction as its `compacted`
 * line) that imports back to the same conversation. That Codex itself resumes it is tested with
 * the real Codex CLI in codex-resume.test.ts.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runTurn } from '../../src/agent/index.js';
import { compact } from '../../src/compaction/index.js';
import { checkInvariants, type Message, Session } from '../../src/core/index.js';
import { exportCodex, readSourceFile } from '../../src/import/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { loopSession } from './loop-session.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'export-codex-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

type Line = { type: string; payload: Record<string, unknown> };

function lines(text: string): Line[] {
  return text
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Line);
}

function reimported(text: string): Session {
  const file = join(dir, 'rollout.jsonl');
  writeFileSync(file, text);
  const [back] = readSourceFile('codex', file).sessions;
  if (back === undefined) throw new Error('the rollout imported no session');
  return Session.create({ header: back.header, seed: back.events });
}

/** Messages as the model reads them (a result's `isError: false` says what its absence says). */
function seen(messages: readonly Message[]): { role: string; content: unknown }[] {
  return messages.map((message) => ({
    role: message.role,
    content: JSON.parse(JSON.stringify(message.content).replaceAll(',"isError":false', '')),
  }));
}

describe('a session palimpsest’s loop recorded, exported to Codex', () => {
  it('is a rollout of the history as response items that imports back to the same conversation', async () => {
    const session = await loopSession();
    const file = exportCodex(session, { cwd: '/work' });
    const rollout = lines(file.text);
    expect(rollout[0]).toMatchObject({
      type: 'session_meta',
      payload: { id: file.sessionId, cwd: '/work', originator: 'palimpsest_export' },
    });
    const items = rollout.filter((line) => line.type === 'response_item');
    expect(items.map((line) => line.payload.type)).toEqual([
      'message',
      'function_call',
      'function_call',
      'function_call_output',
      'function_call_output',
      'message',
      'message',
      'function_call',
      'function_call_output',
      'message',
    ]);
    const turns = rollout.filter((line) => line.type === 'event_msg');
    expect(turns.filter((line) => line.payload.type === 'task_complete')).toHaveLength(2);
    expect(file.path).toMatch(
      new RegExp(`^sessions/\\d{4}/\\d{2}/\\d{2}/rollout-[0-9T-]+-${file.sessionId}\\.jsonl$`),
    );
    const again = reimported(file.text);
    expect(seen(again.deriveMessages())).toEqual(seen(session.deriveMessages()));
    expect(checkInvariants(again.events, { requireClosed: true })).toEqual([]);
  });

  it('writes the same file twice, with a session id derived from the session', async () => {
    const session = await loopSession();
    expect(exportCodex(session).text).toBe(exportCodex(session).text);
    expect(exportCodex(session).sessionId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-/);
    expect(exportCodex(session, { sessionId: 'chosen' }).sessionId).toBe('chosen');
  });

  it('writes a compaction as Codex’s compacted line, followed by what the surface keeps', async () => {
    const session = await loopSession();
    await compact(session, {
      model: scriptedModel([{ text: 'Summary: echoed a, b and c.' }]),
      keepRecentTokens: 0,
    });
    await runTurn({ session, model: scriptedModel([{ text: 'Done.' }]), input: 'Thanks.' });
    const file = exportCodex(session);
    const compacted = lines(file.text).filter((line) => line.type === 'compacted');
    expect(compacted).toHaveLength(1);
    expect(JSON.stringify(compacted[0]?.payload.replacement_history)).toContain(
      'Summary: echoed a, b and c.',
    );
    const again = reimported(file.text);
    expect(seen(again.deriveMessages())).toEqual(seen(session.deriveMessages()));
    expect(file.losses.map((loss) => loss.what)).toContain(
      'stream chunks (the harness keeps whole messages)',
    );
  });

  it('makes the last system prompt Codex’s base instructions, and counts the tools it drops', async () => {
    const session = Session.create({ id: 'system' });
    await runTurn({
      session,
      model: scriptedModel([{ text: 'Hi.' }]),
      system: 'You answer briefly.',
      input: 'Hello.',
    });
    const file = exportCodex(session);
    expect(lines(file.text)[0]?.payload.base_instructions).toEqual({
      text: 'You answer briefly.',
    });
  });
});
