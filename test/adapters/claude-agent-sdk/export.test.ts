/**
 * Export to Claude Code, read back by the real Claude Code: a session palimpsest's loop recorded
 * (parallel calls; then a compaction) is exported as a transcript, filed where Claude Code looks,
 * and resumed with one more prompt. The request Claude Code sends its model holds the history the
 * session's surface derives, and importing the transcript gives the same conversation back.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool, runTurn } from '../../../src/agent/index.js';
import { compact } from '../../../src/compaction/index.js';
import { checkInvariants, type Message, Session } from '../../../src/core/index.js';
import { exportClaudeCode, readSourceFile } from '../../../src/import/index.js';
import { scriptedModel } from '../../../src/testing/index.js';
import { blockParts } from '../../import/message-parts.js';
import { describeClaudeCode, type ModelRequest, resumeTranscript } from './claude-code-rig.js';

const echo = defineTool({
  name: 'echo',
  description: 'Returns its text.',
  parameters: z.object({ text: z.string() }),
  execute: ({ text }) => `echo: ${text}`,
});

/** Each block of the history as one comparable string, in order. */
function partsOfSession(messages: readonly Message[]): string[] {
  return messages.flatMap((message) =>
    blockParts(message).map((part) =>
      part.startsWith('text:') || part.startsWith('thinking:') ? `${message.role}:${part}` : part,
    ),
  );
}

type WireBlock = {
  type: string;
  text?: string;
  id?: string;
  name?: string;
  input?: unknown;
  tool_use_id?: string;
  content?: unknown;
};

/** The history of a request Claude Code sent, in the same terms, up to the new prompt. */
function partsOfRequest(request: ModelRequest, prompt: string): string[] {
  const parts: string[] = [];
  for (const message of request.messages) {
    const blocks: WireBlock[] =
      typeof message.content === 'string'
        ? [{ type: 'text', text: message.content }]
        : (message.content as WireBlock[]);
    for (const block of blocks) {
      if (block.type === 'text') {
        // Claude Code's own reminders ride on user messages; the new prompt ends the history.
        if (block.text?.startsWith('<system-reminder>') === true) continue;
        if (block.text === prompt) return parts;
        parts.push(`${message.role}:text:${block.text}`);
      } else if (block.type === 'tool_use') {
        parts.push(`call:${block.id}:${block.name}:${JSON.stringify(block.input)}`);
      } else if (block.type === 'tool_result') {
        const content = Array.isArray(block.content)
          ? (block.content as WireBlock[])
          : [{ type: 'text', text: String(block.content) }];
        for (const part of content) parts.push(`result:${block.tool_use_id}:${part.text}`);
      } else parts.push(`${message.role}:${block.type}`);
    }
  }
  return parts;
}

async function loopSession(): Promise<Session> {
  const session = Session.create({ id: 'exported-to-claude' });
  await runTurn({
    session,
    model: scriptedModel([
      {
        toolCalls: [
          { name: 'echo', args: { text: 'a' } },
          { name: 'echo', args: { text: 'b' } },
        ],
      },
      { text: 'Echoed a and b.' },
    ]),
    tools: [echo],
    input: 'Echo twice.',
  });
  await runTurn({ session, model: scriptedModel([{ text: 'Hello.' }]), input: 'Now say hello.' });
  return session;
}

/** Exports `session`, resumes it in Claude Code, and gives what the model was sent. */
async function resumed(session: Session): Promise<{ history: string[]; text: string }> {
  const cwd = mkdtempSync(join(tmpdir(), 'claude-cwd-'));
  const file = exportClaudeCode(session, { cwd });
  const prompt = 'One more thing.';
  const { requests, subtype } = await resumeTranscript(file.text, file.sessionId, cwd, prompt);
  expect(subtype).toBe('success');
  expect(requests.length).toBeGreaterThan(0);
  return { history: partsOfRequest(requests[0] as ModelRequest, prompt), text: file.text };
}

function reimported(text: string): Session {
  const path = join(mkdtempSync(join(tmpdir(), 'claude-export-')), 'transcript.jsonl');
  writeFileSync(path, text);
  const [back] = readSourceFile('claude-code', path).sessions;
  if (back === undefined) throw new Error('the export imported no session');
  return Session.create({ header: back.header, seed: back.events });
}

describeClaudeCode('a session exported to Claude Code', () => {
  it('resumes in the real Claude Code with the history the model saw, and imports back', async () => {
    const session = await loopSession();
    const { history, text } = await resumed(session);
    expect(history).toEqual(partsOfSession(session.deriveMessages()));
    const again = reimported(text);
    expect(partsOfSession(again.deriveMessages())).toEqual(
      partsOfSession(session.deriveMessages()),
    );
    expect(checkInvariants(again.events, { requireClosed: true })).toEqual([]);
  }, 120_000);

  it('writes a compaction as Claude Code’s compact boundary and summary, which it resumes from', async () => {
    const session = await loopSession();
    await compact(session, {
      model: scriptedModel([{ text: 'Summary: echoed a and b, then said hello.' }]),
      keepRecentTokens: 0,
    });
    await runTurn({ session, model: scriptedModel([{ text: 'Done.' }]), input: 'Thanks.' });
    const { history, text } = await resumed(session);
    expect(text).toContain('"subtype":"compact_boundary"');
    // Claude Code frames a compact summary in words of its own; the rest is the surface.
    const ours = partsOfSession(session.deriveMessages());
    expect(history[0]).toContain('Summary: echoed a and b, then said hello.');
    expect(history.slice(1)).toEqual(ours.slice(1));
    expect(partsOfSession(reimported(text).deriveMessages())).toEqual(ours);
  }, 120_000);
});
