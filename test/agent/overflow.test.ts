/**
 * Context overflow: a request the provider refuses as longer than the context window is
 * recorded (`request/overflow`), the caller's handler compacts, and the model call is retried
 * once as the next step; if that overflows too, or nothing could be freed, the turn ends with
 * the typed reason `context-overflow`. Against the real OpenAI-compatible client and a local
 * server replaying a recorded `context_length_exceeded` response.
 */
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import type { LanguageModelV3 } from '@ai-sdk/provider';
import { describe, expect, it } from 'vitest';
import { type ContextOverflowContext, isContextOverflow, runTurn } from '../../src/agent/index.js';
import { compactOnOverflow } from '../../src/compaction/index.js';
import { type RequestOverflowData, Session } from '../../src/core/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { dataOf, expectValidLog, shape } from './helpers.js';
import { useWireServer } from './wire-server.js';

const server = useWireServer();

const compatible = (): LanguageModelV3 =>
  createOpenAICompatible({
    name: 'local',
    baseURL: server.baseURL,
    apiKey: 'test-key',
    includeUsage: true,
  })('qwen3-coder') as unknown as LanguageModelV3;

/** A session with two answered turns, so that a compaction has history to summarise. */
async function withHistory(): Promise<Session> {
  const session = Session.create();
  const chat = scriptedModel([{ text: 'A long answer about the build. '.repeat(40) }], {
    loop: true,
  });
  for (const input of ['Why did the build fail?', 'Where exactly?'])
    await runTurn({ session, model: chat, input });
  return session;
}

/** A turn on the wire model whose overflow handler compacts with a scripted summary. */
function compactingTurn(session: Session) {
  const writer = scriptedModel([{ text: 'Summary: the build failed on a type error.' }]);
  return runTurn({
    session,
    model: compatible(),
    input: 'How do I fix it?',
    maxRetries: 0,
    onContextOverflow: compactOnOverflow({ model: writer, keepRecentTokens: 0 }),
  });
}

function messagesSent(index: number): number {
  const body = server.requests[index]?.body as { messages?: unknown[] } | undefined;
  return body?.messages?.length ?? 0;
}

describe('a context-length refusal', () => {
  it('is recorded, compacted with the handler, and the model call retried once on the smaller surface', async () => {
    const session = await withHistory();
    server.enqueue('openai-compatible/context-length-400.http', 'openai-compatible/text.http');
    const start = session.seq;
    const result = await compactingTurn(session);

    expect(result.reason).toEqual({ kind: 'completed' });
    expect(result.steps).toBe(2);
    expect(shape(session.events.slice(start))).toEqual([
      'turn/start',
      'user/message',
      'step/start',
      'request/header',
      'assistant/message',
      'step/end',
      'request/overflow',
      'compaction/start',
      'user/message',
      'compaction/end',
      'step/start',
      'chunks',
      'assistant/message',
      'step/end',
      'turn/end',
    ]);
    const [overflow] = session.events.filter((event) => event.type === 'request/overflow');
    const failed = session.events.find(
      (event) => event.type === 'assistant/message' && event.seq > start,
    );
    expect(overflow?.sourceEventSeqs).toEqual([failed?.seq]);
    expect(dataOf<RequestOverflowData>(session, 'request/overflow')[0]?.error.providerCode).toBe(
      'context_length_exceeded',
    );
    // The retry sent the summary in place of the two earlier turns.
    expect(messagesSent(1)).toBeLessThan(messagesSent(0));
    expectValidLog(session);
  });

  it('ends the turn context-overflow (compacted: true) when the retry overflows too', async () => {
    const session = await withHistory();
    server.enqueue(
      'openai-compatible/context-length-400.http',
      'openai-compatible/context-length-400.http',
    );
    const result = await compactingTurn(session);
    expect(result.reason).toMatchObject({
      kind: 'context-overflow',
      compacted: true,
      error: { providerCode: 'context_length_exceeded' },
    });
    expect(result.steps).toBe(2);
    expect(dataOf<RequestOverflowData>(session, 'request/overflow')).toHaveLength(1);
    expectValidLog(session);
  });

  it('ends the turn context-overflow (compacted: false) when the handler frees nothing', async () => {
    const session = Session.create();
    server.enqueue('openai-compatible/context-length-400.http');
    const seen: ContextOverflowContext[] = [];
    const result = await runTurn({
      session,
      model: compatible(),
      input: 'a very long prompt',
      onContextOverflow: (context) => {
        seen.push(context);
        return false;
      },
    });
    expect(result.reason).toMatchObject({ kind: 'context-overflow', compacted: false });
    expect(seen.map(({ turn, step, event }) => ({ turn, step, type: event.type }))).toEqual([
      { turn: 1, step: 1, type: 'request/overflow' },
    ]);
    expectValidLog(session);
  });
});

describe('isContextOverflow', () => {
  it('knows the providers’ codes and messages, and no other failure', () => {
    expect(
      isContextOverflow({
        message: 'x',
        code: 'invalid_request_error',
        providerCode: 'context_length_exceeded',
      }),
    ).toBe(true);
    expect(
      isContextOverflow({
        message: 'prompt is too long: 210000 tokens > 200000 maximum',
        status: 400,
      }),
    ).toBe(true);
    expect(isContextOverflow({ message: 'maximum context length exceeded', status: 500 })).toBe(
      false,
    );
    expect(isContextOverflow({ message: 'Rate limit reached', status: 429 })).toBe(false);
  });
});
