/**
 * Continuing sessions through the AI SDK: `toModelMessages(session)` as the history of the next
 * `streamText` call, whether palimpsest's loop or the middleware recorded the session and
 * whether it was compacted; compaction inside the SDK's loop through `beforeStep`; and the
 * prompts the middleware refuses.
 */
import { createOpenAI } from '@ai-sdk/openai';
import { stepCountIs, streamText, type Tool, tool, wrapLanguageModel } from 'ai';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  AiSdkError,
  fromModelMessages,
  sessionMiddleware,
  toModelMessages,
} from '../../../src/adapters/ai-sdk/index.js';
import { rebuildRequest, runTurn } from '../../../src/agent/index.js';
import { autoCompaction, compact } from '../../../src/compaction/index.js';
import { Session } from '../../../src/core/index.js';
import { buildPrompt } from '../../../src/model/index.js';
import { openSession, openStore } from '../../../src/store/index.js';
import { scriptedModel } from '../../../src/testing/index.js';
import { dataOf, expectValidLog } from '../../agent/helpers.js';
import { tempDir } from '../../store/jsonl/helpers.js';

/** A prompt as JSON, without palimpsest's stash (which no provider reads). */
function wire(prompt: unknown): unknown {
  return JSON.parse(
    JSON.stringify(prompt, (key, value) => {
      if (key !== 'providerOptions' || typeof value !== 'object' || value === null) return value;
      const { palimpsest: _stash, ...rest } = value as Record<string, unknown>;
      return Object.keys(rest).length === 0 ? undefined : rest;
    }),
  );
}

async function loopSession(): Promise<Session> {
  const session = Session.create();
  for (const input of ['Why did the build fail?', 'Where exactly?']) {
    await runTurn({
      session,
      model: scriptedModel([{ text: 'A long answer about the build. '.repeat(20) }]),
      input,
    });
  }
  return session;
}

describe('streamText over toModelMessages(session)', () => {
  it('continues a session palimpsest’s loop recorded, adding only the new turn', async () => {
    const session = await loopSession();
    const before = session.deriveMessages();
    const model = scriptedModel([{ text: 'In src/config.ts.' }]);
    const result = streamText({
      model: wrapLanguageModel({ model, middleware: sessionMiddleware(session) }),
      messages: [...toModelMessages(session), { role: 'user', content: 'Show me.' }],
    });
    await result.consumeStream();
    expect(session.deriveMessages().slice(0, before.length)).toEqual(before);
    expect(
      session
        .deriveMessages()
        .map((message) => message.role)
        .slice(before.length),
    ).toEqual(['user', 'assistant']);
    expect(dataOf(session, 'turn/start')).toHaveLength(3);
    expect(wire(model.calls[0]?.prompt)).toEqual(
      wire(rebuildRequest(session, 3, 1).callOptions.prompt),
    );
    expectValidLog(session);
  });

  it('continues a compacted session: the model gets the summary, not the replaced history', async () => {
    const session = await loopSession();
    const writer = scriptedModel([{ text: 'Summary: the build failed in the config.' }]);
    const compacted = await compact(session, { model: writer, keepRecentTokens: 0 });
    expect(compacted.replaced).toBe(true);
    const summary = session.deriveMessages()[0];
    const model = scriptedModel([{ text: 'In src/config.ts.' }]);
    const result = streamText({
      model: wrapLanguageModel({ model, middleware: sessionMiddleware(session) }),
      messages: [...toModelMessages(session), { role: 'user', content: 'Show me.' }],
    });
    await result.consumeStream();
    const sent = model.calls[0]?.prompt ?? [];
    expect(sent[0]).toMatchObject({
      role: 'user',
      content: [{ type: 'text', text: expect.stringContaining('Summary') }],
    });
    expect(session.deriveMessages()[0]).toEqual(summary);
    expect(wire(sent)).toEqual(wire(rebuildRequest(session, 3, 1).callOptions.prompt));
    expectValidLog(session);
  });
});

describe('sessionMiddleware with autoCompaction as beforeStep', () => {
  it('compacts inside the SDK’s loop, and every later call sends the compacted surface', async () => {
    const session = Session.create();
    const big = 'x'.repeat(4_000);
    const dump = { toolCalls: [{ name: 'dump', args: {} }] };
    const model = scriptedModel([
      { ...dump, usage: { inputTokens: 50, outputTokens: 10 } },
      { ...dump, usage: { inputTokens: 1_100, outputTokens: 10 } },
      { ...dump, usage: { inputTokens: 100, outputTokens: 10 } },
      { ...dump, usage: { inputTokens: 100, outputTokens: 10 } },
      { text: 'Done.' },
    ]);
    const writer = scriptedModel([{ text: 'Summary: two dumps were read.' }]);
    const actions: string[] = [];
    const middleware = sessionMiddleware(session, {
      beforeStep: autoCompaction({
        model: writer,
        contextWindow: 2_000,
        keepRecentTokens: 600,
        pruneFirst: false,
        onAction: (action) => actions.push(action.kind),
      }),
    });
    const result = streamText({
      model: wrapLanguageModel({ model, middleware }),
      prompt: 'Read the dumps.',
      tools: { dump: tool({ inputSchema: z.object({}), execute: async () => big }) },
      stopWhen: stepCountIs(6),
    });
    await result.consumeStream();
    expect(await result.text).toBe('Done.');
    expect(actions).toEqual(['compact']);
    // The SDK's own history for the later calls held both dumps; the model got the surface,
    // each call's prompt extending the previous one's.
    for (const step of [3, 4, 5]) {
      const sent = model.calls[step - 1]?.prompt ?? [];
      expect(wire(sent)).toEqual(wire(rebuildRequest(session, 1, step).callOptions.prompt));
      expect(JSON.stringify(sent)).toContain('Summary: two dumps were read.');
    }
    const third = model.calls[2]?.prompt ?? [];
    expect(wire(third)).not.toEqual(
      wire(
        buildPrompt(undefined, fromModelMessages([{ role: 'user', content: 'Read the dumps.' }])),
      ),
    );
    expectValidLog(session);
  });
});

describe('prompts the middleware refuses', () => {
  it('refuses history with a model answer the session never recorded, appending nothing', async () => {
    const session = await loopSession();
    const length = session.seq;
    const errors: unknown[] = [];
    const result = streamText({
      model: wrapLanguageModel({
        model: scriptedModel([{ text: 'never' }]),
        middleware: sessionMiddleware(session),
      }),
      onError: ({ error }) => {
        errors.push(error);
      },
      messages: [
        { role: 'user', content: 'Hi' },
        { role: 'assistant', content: 'An answer from somewhere else.' },
        { role: 'user', content: 'And?' },
      ],
    });
    await result.consumeStream();
    expect(errors).toHaveLength(1);
    const [error] = errors;
    expect(AiSdkError.isInstance(error) && error.code).toBe('PROMPT_DIVERGED');
    expect(String((error as Error).message)).toContain('toModelMessages(session)');
    // What the application reads besides onError: no output at all.
    const text = await Promise.resolve(result.text).then(String, (thrown: Error) => thrown.name);
    expect(text).toBe('AI_NoOutputGeneratedError');
    expect(session.seq).toBe(length);
  });

  it('leaves no session in the store when the first call of a new session is refused', async () => {
    const store = await openStore(`jsonl:${await tempDir()}`);
    const session = await openSession(store, 'refused-at-once');
    try {
      const result = streamText({
        model: wrapLanguageModel({
          model: scriptedModel([{ text: 'never' }]),
          middleware: sessionMiddleware(session),
        }),
        onError: () => {},
        messages: [
          { role: 'user', content: 'Hi' },
          { role: 'assistant', content: 'An answer from somewhere else.' },
          { role: 'user', content: 'And?' },
        ],
      });
      await result.consumeStream();
      expect(session.seq).toBe(0);
    } finally {
      await session.close();
    }
    expect((await store.list()).sessions).toEqual([]);
    await expect(openSession(store, 'refused-at-once', { create: false })).rejects.toMatchObject({
      code: 'NOT_FOUND',
    });
    await store.close();
  });

  it('refuses a second call on a session while one is recording, from any middleware', async () => {
    const session = Session.create();
    const slow = wrapLanguageModel({
      model: scriptedModel([{ text: 'A slow answer.', delayMs: 5 }]),
      middleware: sessionMiddleware(session),
    });
    const other = wrapLanguageModel({
      model: scriptedModel([{ text: 'never' }]),
      middleware: sessionMiddleware(session),
    });
    const errors: unknown[] = [];
    let second: PromiseLike<void> | undefined;
    // The second call starts while the first one streams.
    const first = streamText({
      model: slow,
      prompt: 'One.',
      onChunk: () => {
        second ??= streamText({
          model: other,
          prompt: 'Two.',
          onError: ({ error }) => {
            errors.push(error);
          },
        }).consumeStream();
      },
    });
    await first.consumeStream();
    await second;
    expect(errors[0]).toMatchObject({ code: 'CALL_IN_PROGRESS' });
    expect(await first.text).toBe('A slow answer.');
    expectValidLog(session);
  });

  it('refuses call options the request header cannot record, appending nothing', async () => {
    const session = Session.create();
    const errors: unknown[] = [];
    const result = streamText({
      model: wrapLanguageModel({
        model: scriptedModel([{ text: 'never' }]),
        middleware: sessionMiddleware(session),
      }),
      prompt: 'Search the web.',
      // @ai-sdk/openai types its tools against its own copy of provider-utils; the shape is one.
      tools: {
        web_search: createOpenAI({ apiKey: 'unused' }).tools.webSearch({}) as unknown as Tool,
      },
      onError: ({ error }) => {
        errors.push(error);
      },
    });
    await result.consumeStream();
    expect(errors[0]).toMatchObject({ code: 'UNSUPPORTED_CALL' });
    expect((errors[0] as Error).message).toContain('a provider-defined tool (openai.web_search)');
    expect(session.seq).toBe(0);
  });

  it.each([
    ['a system message', { role: 'system', content: 'x' }, 'system'],
    [
      'a PDF file',
      { role: 'user', content: [{ type: 'file', data: 'AAAA', mediaType: 'application/pdf' }] },
      'file',
    ],
    [
      'a provider-executed tool call',
      {
        role: 'assistant',
        content: [
          {
            type: 'tool-call',
            toolCallId: 'c',
            toolName: 'web',
            input: {},
            providerExecuted: true,
          },
        ],
      },
      'tool-call',
    ],
    [
      'a tool approval',
      {
        role: 'tool',
        content: [{ type: 'tool-approval-response', approvalId: 'a', approved: true }],
      },
      'tool-approval-response',
    ],
  ] as const)(
    'fromModelMessages refuses %s with UNSUPPORTED_CONTENT naming it',
    (_what, message, part) => {
      let thrown: unknown;
      try {
        fromModelMessages([{ role: 'user', content: 'first' }, message as never]);
      } catch (error) {
        thrown = error;
      }
      expect(AiSdkError.isInstance(thrown)).toBe(true);
      expect(thrown).toMatchObject({ code: 'UNSUPPORTED_CONTENT', messageIndex: 1, part });
      expect((thrown as Error).message).toMatch(
        /^message 1: expected content a palimpsest message can hold, found /,
      );
    },
  );
});
