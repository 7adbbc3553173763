/**
 * Export to pi, read back by pi itself: a session palimpsest's loop recorded (tool calls, a
 * compaction) and a session pi's own `SessionManager` wrote are exported as pi session files
 * that pi's `SessionManager` opens, with the messages pi would send to its model equal to the
 * session's derived messages; importing the export gives the same conversation back.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { convertToLlm, SessionManager } from '@mariozechner/pi-coding-agent';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runTurn } from '../../src/agent/index.js';
import { compact } from '../../src/compaction/index.js';
import { checkInvariants, type Message, Session } from '../../src/core/index.js';
import { exportPi, readSourceFile } from '../../src/import/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { loopSession } from './loop-session.js';
import { blockParts } from './message-parts.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'export-pi-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** A message as a model reads it: its role and each block's kind and text or call. */
type Seen = { role: string; parts: string[] };

function seenOfPalimpsest(messages: readonly Message[]): Seen[] {
  return messages.map((message) => ({ role: message.role, parts: blockParts(message) }));
}

/** What pi sends its model for a session file, in the same terms. */
function seenByPi(file: string): Seen[] {
  const manager = SessionManager.open(file, dir);
  const messages = convertToLlm(manager.buildSessionContext().messages);
  return messages.map((message) => {
    const content =
      typeof message.content === 'string'
        ? [{ type: 'text' as const, text: message.content }]
        : message.content;
    if (message.role === 'toolResult') {
      return {
        role: 'tool',
        parts: content.map(
          (part) => `result:${message.toolCallId}:${part.type === 'text' ? part.text : part.type}`,
        ),
      };
    }
    return {
      role: message.role,
      parts: content.map((part) => {
        switch (part.type) {
          case 'text':
            return `text:${part.text}`;
          case 'thinking':
            return `thinking:${part.thinking}`;
          case 'toolCall':
            return `call:${part.id}:${part.name}:${JSON.stringify(part.arguments)}`;
          default:
            return part.type;
        }
      }),
    };
  });
}

/** The session `palimpsest import` makes of a pi file, as a live Session (validated). */
function reimported(file: string): Session {
  const [back] = readSourceFile('pi', file).sessions;
  if (back === undefined) throw new Error(`${file} imported no session`);
  return Session.create({ header: back.header, seed: back.events });
}

function write(name: string, text: string): string {
  const file = join(dir, name);
  writeFileSync(file, text);
  return file;
}

describe('a session palimpsest’s loop recorded, exported to pi', () => {
  it('opens in pi with the messages the model saw, and imports back to the same conversation', async () => {
    const session = await loopSession();
    const file = write('loop.jsonl', exportPi(session, { cwd: '/work' }).text);
    expect(seenByPi(file)).toEqual(seenOfPalimpsest(session.deriveMessages()));
    const again = reimported(file);
    expect(seenOfPalimpsest(again.deriveMessages())).toEqual(
      seenOfPalimpsest(session.deriveMessages()),
    );
    expect(checkInvariants(again.events, { requireClosed: true })).toEqual([]);
  });

  it('writes a compaction as pi’s own compaction entry, which pi reads as the same history', async () => {
    const session = await loopSession();
    await compact(session, {
      model: scriptedModel([{ text: 'Summary: echoed a, b and c.' }]),
      keepRecentTokens: 0,
    });
    await runTurn({ session, model: scriptedModel([{ text: 'Done.' }]), input: 'Thanks.' });
    const exported = exportPi(session);
    const entries = exported.text
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string });
    expect(entries.filter((entry) => entry.type === 'compaction')).toHaveLength(1);
    const file = write('compacted.jsonl', exported.text);
    const byPi = seenByPi(file);
    const ours = seenOfPalimpsest(session.deriveMessages());
    // pi wraps its summary in its own framing text; the rest is what the model saw.
    expect(byPi[0]?.parts[0]).toContain('Summary: echoed a, b and c.');
    expect(byPi.slice(1)).toEqual(ours.slice(1));
    const again = reimported(file);
    expect(seenOfPalimpsest(again.deriveMessages())).toEqual(ours);
    expect(exported.losses.map((loss) => loss.what)).toContain(
      'stream chunks (the harness keeps whole messages)',
    );
  });
});

describe('a session pi’s own SessionManager wrote, imported and exported', () => {
  it('gives pi back the history it wrote', () => {
    const manager = SessionManager.create('/work', dir);
    const at = Date.parse('2026-12-01T10:00:00.000Z');
    manager.appendModelChange('anthropic', 'claude-sonnet-4-5');
    manager.appendMessage({ role: 'user', content: 'List the files.', timestamp: at });
    manager.appendMessage({
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'Use ls.', thinkingSignature: 'sig-1' },
        { type: 'toolCall', id: 'call_1', name: 'bash', arguments: { command: 'ls' } },
      ],
      api: 'anthropic-messages',
      provider: 'anthropic',
      model: 'claude-sonnet-4-5',
      usage: {
        input: 10,
        output: 5,
        cacheRead: 0,
        cacheWrite: 0,
        totalTokens: 15,
        cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
      },
      stopReason: 'toolUse',
      timestamp: at + 1,
    });
    manager.appendMessage({
      role: 'toolResult',
      toolCallId: 'call_1',
      toolName: 'bash',
      content: [{ type: 'text', text: 'a.txt\nb.txt' }],
      isError: false,
      timestamp: at + 2,
    });
    manager.appendMessage({
      role: 'assistant',
      content: [{ type: 'text', text: 'Two files.' }],
      api: 'anthropic-messages',
      provider: 'anthropic',
      model: 'claude-sonnet-4-5',
      usage: {
        input: 20,
        output: 3,
        cacheRead: 0,
        cacheWrite: 0,
        totalTokens: 23,
        cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
      },
      stopReason: 'stop',
      timestamp: at + 3,
    });
    const original = manager.getSessionFile() as string;
    const exported = write('round-trip.jsonl', exportPi(reimported(original)).text);
    expect(seenByPi(exported)).toEqual(seenByPi(original));
  });
});
