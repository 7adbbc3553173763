/**
 * Sessions for compaction tests, recorded by the real agent loop on the scripted model, and a
 * summarizer model that answers summary requests.
 */
import type { LanguageModelV3CallOptions } from '@ai-sdk/provider';
import { defineTool, runTurn } from '../../src/agent/index.js';
import { Session } from '../../src/core/index.js';
import { type ScriptedResponse, scriptedModel } from '../../src/testing/index.js';

/** A tool whose result is as long as asked. */
export const fetchTool = defineTool({
  name: 'fetch',
  description: 'Fetches a document.',
  parameters: {
    type: 'object',
    properties: { id: { type: 'string' }, size: { type: 'integer' } },
    required: ['id'],
  },
  execute: (args) => document(String(args.id), Number(args.size ?? 100)),
});

/** Deterministic text of `size` characters. */
export function document(id: string, size: number): string {
  const words = ['alpha', 'beta', 'gamma', 'delta', 'surface', 'replay', 'seq', 'event'];
  let text = `doc ${id}:`;
  for (let i = 0; text.length < size; i++) text += ` ${words[(i * 7 + id.length) % words.length]}`;
  return text.slice(0, size);
}

/** True when the request is a compaction summary request (its last message asks for it). */
export function isSummaryRequest(request: LanguageModelV3CallOptions): boolean {
  const last = request.prompt[request.prompt.length - 1];
  return (
    last?.role === 'user' &&
    last.content.some((part) => part.type === 'text' && part.text.includes('replaced by a summary'))
  );
}

/**
 * A model for whole sessions: summary requests get `summary`; a request whose last message is
 * a tool result gets an answer; any other request asks for one `fetch` of `resultSize` chars.
 */
export function sessionModel(options: { resultSize?: number; summary?: string } = {}) {
  return scriptedModel(
    [
      (request, call): ScriptedResponse => {
        if (isSummaryRequest(request))
          return { text: options.summary ?? 'Goal: read documents. Next step: continue.' };
        const last = request.prompt[request.prompt.length - 1];
        if (last?.role === 'tool') return { text: `Read it (call ${call}).` };
        return {
          toolCalls: [
            { name: 'fetch', args: { id: `d${call}`, size: options.resultSize ?? 3000 } },
          ],
        };
      },
    ],
    { loop: true },
  );
}

/** A session of `turns` recorded turns, each one fetch round trip and an answer. */
export async function recordedSession(turns: number, resultSize = 3000): Promise<Session> {
  const session = Session.create();
  const model = sessionModel({ resultSize });
  for (let turn = 1; turn <= turns; turn++) {
    await runTurn({
      session,
      model,
      tools: [fetchTool],
      system: 'You read documents.',
      input: `read document ${turn}`,
    });
  }
  return session;
}
