/**
 * The recording middleware under the AI SDK's own loop (the real `ai` package, a scripted
 * model): the log it writes is the log palimpsest's loop writes for the same responses.
 */
import type { LanguageModelV3Prompt } from '@ai-sdk/provider';
import {
  generateText,
  Output,
  stepCountIs,
  streamText,
  ToolLoopAgent,
  tool,
  wrapLanguageModel,
} from 'ai';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  type SessionMiddleware,
  sessionMiddleware,
  toModelMessages,
} from '../../../src/adapters/ai-sdk/index.js';
import { defineTool, rebuildRequest, runTurn, sessionCost } from '../../../src/agent/index.js';
import {
  type AssistantMessageData,
  interruptionMarker,
  type Message,
  Session,
  type SessionEvent,
  type ToolResultData,
} from '../../../src/core/index.js';
import { openSession, openStore } from '../../../src/store/index.js';
import { type ScriptStep, scriptedModel } from '../../../src/testing/index.js';
import { dataOf, expectValidLog, outline } from '../../agent/helpers.js';

const script: ScriptStep[] = [
  {
    reasoning: 'I need both files.',
    text: 'Reading them.',
    toolCalls: [
      { name: 'read_file', args: { path: 'a.ts' } },
      { name: 'read_file', args: { path: 'b.ts' } },
    ],
  },
  { toolCalls: [{ name: 'grep', args: { pattern: 'TODO' } }] },
  { text: 'Both files are clean.' },
];

const sdkTools = {
  read_file: tool({
    description: 'Reads a file.',
    inputSchema: z.object({ path: z.string() }),
    execute: async ({ path }) => `contents of ${path}`,
  }),
  grep: tool({
    description: 'Searches.',
    inputSchema: z.object({ pattern: z.string() }),
    execute: async ({ pattern }) => `no match for ${pattern}`,
  }),
};
const loopTools = [
  defineTool({
    name: 'read_file',
    description: 'Reads a file.',
    parameters: z.object({ path: z.string() }),
    execute: ({ path }) => `contents of ${path}`,
  }),
  defineTool({
    name: 'grep',
    description: 'Searches.',
    parameters: z.object({ pattern: z.string() }),
    execute: ({ pattern }) => `no match for ${pattern}`,
  }),
];

/** Messages without their random ids, so two recordings of the same responses compare. */
function withoutIds(messages: readonly Message[]): unknown[] {
  return messages.map(({ id: _id, ...rest }) => rest);
}

/** The surface as event types and citations, seqs included: the same log gives the same list. */
function surfaceShape(session: Session): unknown[] {
  return session.surface.seqs.map((seq) => {
    const event = session.event(seq) as SessionEvent;
    return [seq, event.type, event.sourceEventSeqs?.length];
  });
}

async function loopRecording(): Promise<Session> {
  const session = Session.create();
  await runTurn({
    session,
    model: scriptedModel(script),
    tools: loopTools,
    system: 'Be brief.',
    input: 'Are the files clean?',
  });
  return session;
}

/** The script's tool loop through `streamText`, recorded by `middleware`, read to its end. */
async function streamScript(middleware: SessionMiddleware, maxSteps = 5) {
  const result = streamText({
    model: wrapLanguageModel({ model: scriptedModel(script), middleware }),
    system: 'Be brief.',
    prompt: 'Are the files clean?',
    tools: sdkTools,
    stopWhen: stepCountIs(maxSteps),
  });
  await result.consumeStream();
  return result;
}

describe('sessionMiddleware under streamText', () => {
  it('records a multi-step tool loop as palimpsest’s own loop does: same events, surface and messages', async () => {
    const session = Session.create();
    const middleware = sessionMiddleware(session);
    const result = await streamScript(middleware);
    expect(await result.text).toBe('Both files are clean.');
    const loop = await loopRecording();

    expect(outline(session.events)).toEqual(outline(loop.events));
    expect(surfaceShape(session)).toEqual(surfaceShape(loop));
    expect(withoutIds(session.deriveMessages())).toEqual(withoutIds(loop.deriveMessages()));
    expectValidLog(session);
  });

  it('records the rates it priced the model at, so sessionCost prices the session as billed', async () => {
    const session = Session.create();
    const model = () =>
      scriptedModel(
        [
          {
            text: 'Hi.',
            usage: { inputTokens: 1_000_000, outputTokens: 0, cacheReadTokens: 1_000_000 },
          },
        ],
        { provider: 'openai.responses', modelId: 'gpt-4o-2024-08-06' },
      );
    const recorded = wrapLanguageModel({ model: model(), middleware: sessionMiddleware(session) });
    await generateText({ model: recorded, prompt: 'Hello' });
    const header = session.events.find((event) => event.type === 'request/header');
    expect(header?.data).toMatchObject({
      price: {
        table: 'palimpsest-2026-12',
        effectiveFrom: '2024-10-01',
        rates: { input: 2.5, cacheRead: 1.25 },
      },
    });
    const cost = sessionCost(session, { prices: { name: 'later', currency: 'USD', entries: [] } });
    expect(cost.calls[0]?.price).toEqual({
      table: 'palimpsest-2026-12',
      effectiveFrom: '2024-10-01',
      recorded: true,
    });
    expect(cost.total.cost.total).toBeCloseTo(1.25, 12);
    const unpriced = Session.create();
    const quiet = wrapLanguageModel({
      model: model(),
      middleware: sessionMiddleware(unpriced, { prices: false }),
    });
    await generateText({ model: quiet, prompt: 'Hello' });
    expect(
      unpriced.events.find((event) => event.type === 'request/header')?.data,
    ).not.toHaveProperty('price');
  });

  it('cites exactly its chunks from each assistant message, and the tool call from each result', async () => {
    const session = Session.create();
    const middleware = sessionMiddleware(session);
    await streamScript(middleware);
    for (const event of session.events) {
      if (event.type === 'assistant/message') {
        const { step } = event.data as unknown as AssistantMessageData;
        const chunks = session.events
          .filter((e) => e.type === 'assistant/chunk' && (e.data as { step: number }).step === step)
          .map((e) => e.seq);
        expect(event.sourceEventSeqs).toEqual(chunks);
      }
      if (event.type === 'tool/result') {
        const cited = session.event(event.sourceEventSeqs?.[0] ?? -1);
        const { message } = event.data as unknown as ToolResultData;
        expect(cited?.type).toBe('tool/call');
        expect(cited?.data).toMatchObject({ callId: message.content[0].toolCallId });
      }
    }
  });

  it('continues the same session on the next streamText call as a second turn', async () => {
    const session = Session.create();
    const middleware = sessionMiddleware(session);
    const model = wrapLanguageModel({
      model: scriptedModel([{ text: 'Hello.' }, { text: 'Still here.' }]),
      middleware,
    });
    const first = streamText({ model, prompt: 'Hi' });
    await first.consumeStream();
    const second = streamText({
      model,
      messages: [
        { role: 'user', content: 'Hi' },
        ...(await first.response).messages,
        { role: 'user', content: 'Are you there?' },
      ],
    });
    await second.consumeStream();
    expect(dataOf<{ turn: number }>(session, 'turn/start').map((data) => data.turn)).toEqual([
      1, 2,
    ]);
    expect(session.deriveMessages().map((message) => message.role)).toEqual([
      'user',
      'assistant',
      'user',
      'assistant',
    ]);
    expectValidLog(session);
  });
});

describe('sessionMiddleware between streamText calls', () => {
  it('finish() records the results of a last step the SDK stopped after, and closes the turn', async () => {
    const session = Session.create();
    const middleware = sessionMiddleware(session);
    // Stopped after one step, its tool results reach no further model call.
    const result = await streamScript(middleware, 1);
    expect(outline(session.events).at(-1)).toBe('assistant/message');
    await middleware.finish((await result.response).messages);
    expect(outline(session.events).slice(-7)).toEqual([
      'assistant/message',
      'tool/call',
      'tool/call',
      'tool/result',
      'tool/result',
      'step/end',
      'turn/end',
    ]);
    const results = dataOf<ToolResultData>(session, 'tool/result');
    expect(results.map((data) => data.message.content[0].content)).toEqual([
      [{ type: 'text', text: 'contents of a.ts' }],
      [{ type: 'text', text: 'contents of b.ts' }],
    ]);
    expectValidLog(session);
  });

  it('lets a middleware made per request continue the turn an earlier one left waiting', async () => {
    const session = Session.create();
    const first = await streamScript(sessionMiddleware(session), 1);
    // A new request handler, a new middleware: the log alone says where the turn stands.
    const again = streamText({
      model: wrapLanguageModel({
        model: scriptedModel([{ text: 'Yes.' }]),
        middleware: sessionMiddleware(session),
      }),
      system: 'Be brief.',
      messages: [
        { role: 'user', content: 'Are the files clean?' },
        ...(await first.response).messages,
        { role: 'user', content: 'Sure?' },
      ],
    });
    await again.consumeStream();
    expect(dataOf<ToolResultData>(session, 'tool/result')).toHaveLength(2);
    expect(dataOf<{ turn: number; reason: unknown }>(session, 'turn/end')).toEqual([
      { turn: 1, reason: { kind: 'completed' } },
      { turn: 2, reason: { kind: 'completed' } },
    ]);
    expectValidLog(session);
  });

  it('without finish(), a next prompt that omits the results records their outcome as unknown, not as never run', async () => {
    const session = Session.create();
    await streamScript(sessionMiddleware(session), 1);
    // The SDK ran both tools before it stopped, and the session never heard of their results.
    // streamText refuses such a history itself (MissingToolResultsError); a caller of the
    // provider interface (another framework, a hand-built prompt) can send it.
    const model = wrapLanguageModel({
      model: scriptedModel([{ text: 'Let me check.' }]),
      middleware: sessionMiddleware(session),
    });
    const history = toModelMessages(session) as LanguageModelV3Prompt;
    const { stream } = await model.doStream({
      prompt: [
        { role: 'system', content: 'Be brief.' },
        ...history,
        { role: 'user', content: [{ type: 'text', text: 'Sure?' }] },
      ],
    });
    await stream.pipeTo(new WritableStream());
    const results = dataOf<ToolResultData>(session, 'tool/result');
    expect(results.map((data) => data.error?.code)).toEqual([
      'TOOL_OUTCOME_UNKNOWN',
      'TOOL_OUTCOME_UNKNOWN',
    ]);
    const [told] = results.map((data) => data.message.content[0].content[0]);
    expect(told).toMatchObject({ text: expect.stringContaining('may or may not have run') });
    expect(JSON.stringify(results)).not.toContain('never ran');
    expectValidLog(session);
  });

  it('finish() with the response that lacks a result records that call as never run', async () => {
    const session = Session.create();
    const middleware = sessionMiddleware(session);
    const result = streamText({
      model: wrapLanguageModel({ model: scriptedModel(script), middleware }),
      prompt: 'Are the files clean?',
      // Tools without execute: the SDK hands the calls to the application and runs nothing.
      tools: {
        read_file: tool({ inputSchema: z.object({ path: z.string() }) }),
        grep: tool({ inputSchema: z.object({ pattern: z.string() }) }),
      },
    });
    await result.consumeStream();
    await middleware.finish((await result.response).messages);
    expect(dataOf<ToolResultData>(session, 'tool/result').map((data) => data.error?.code)).toEqual([
      'TOOL_NOT_STARTED',
      'TOOL_NOT_STARTED',
    ]);
    expectValidLog(session);
  });

  it('records into a store through openSession, durable once finish() resolves', async () => {
    const store = await openStore('memory:');
    const live = await openSession(store, 'sdk-1');
    const middleware = sessionMiddleware(live);
    await streamScript(middleware);
    await middleware.finish();
    const stored = await store.load('sdk-1');
    expect(stored.events.map((event) => event.type)).toEqual(
      live.events.map((event) => event.type),
    );
    expectValidLog(live);
    await live.close();
    await store.close();
  });
});

describe('sessionMiddleware with the SDK’s tool approval (needsApproval)', () => {
  const approvalScript: ScriptStep[] = [
    { toolCalls: [{ name: 'remove', args: { path: 'build/' } }] },
    { text: 'Done.' },
  ];
  const tools = {
    remove: tool({
      inputSchema: z.object({ path: z.string() }),
      needsApproval: true,
      execute: async ({ path }) => `removed ${path}`,
    }),
  };

  /** The first call, stopped for approval and finished; the approval request's id. */
  async function askApproval(session: Session, model: ReturnType<typeof scriptedModel>) {
    const middleware = sessionMiddleware(session);
    const first = await generateText({
      model: wrapLanguageModel({ model, middleware }),
      prompt: 'Clean the build.',
      tools,
    });
    await middleware.finish(first.response.messages);
    for (const message of first.response.messages) {
      if (message.role !== 'assistant' || typeof message.content === 'string') continue;
      for (const part of message.content) {
        if (part.type === 'tool-approval-request') {
          return { history: first.response.messages, approvalId: part.approvalId };
        }
      }
    }
    throw new Error('no approval request');
  }

  async function answer(
    session: Session,
    model: ReturnType<typeof scriptedModel>,
    approved: boolean,
  ) {
    const { history, approvalId } = await askApproval(session, model);
    // The turn waits for the person: finish() left it open.
    expect(outline(session.events).at(-1)).toBe('assistant/message');
    await generateText({
      model: wrapLanguageModel({ model, middleware: sessionMiddleware(session) }),
      messages: [
        { role: 'user', content: 'Clean the build.' },
        ...history,
        {
          role: 'tool',
          content: [
            {
              type: 'tool-approval-response',
              approvalId,
              approved,
              ...(approved ? {} : { reason: 'Not on a Friday.' }),
            },
          ],
        },
      ],
      tools,
    });
  }

  it('records an approved call as a call that ran, in the same turn', async () => {
    const session = Session.create();
    await answer(session, scriptedModel(approvalScript), true);
    const [result] = dataOf<ToolResultData>(session, 'tool/result');
    expect(result?.message.content[0].content).toEqual([{ type: 'text', text: 'removed build/' }]);
    expect(dataOf(session, 'tool/call')).toHaveLength(1);
    expect(dataOf(session, 'turn/start')).toHaveLength(1);
    expectValidLog(session);
  });

  it('records a denied call as palimpsest’s hooks record a denial: TOOL_DENIED with the reason, no tool/call', async () => {
    const session = Session.create();
    await answer(session, scriptedModel(approvalScript), false);
    const [result] = dataOf<ToolResultData>(session, 'tool/result');
    expect(result?.error?.code).toBe('TOOL_DENIED');
    expect(result?.decision).toEqual({ action: 'deny', reason: 'Not on a Friday.' });
    expect(dataOf(session, 'tool/call')).toHaveLength(0);
    expectValidLog(session);
  });
});

describe('sessionMiddleware with structured output', () => {
  it('records Output.object’s JSON response format in the header, so the request rebuilds with it', async () => {
    const session = Session.create();
    const model = scriptedModel([{ text: '{"files":2,"clean":true}' }]);
    const result = await generateText({
      model: wrapLanguageModel({ model, middleware: sessionMiddleware(session) }),
      prompt: 'Are the files clean?',
      output: Output.object({ schema: z.object({ files: z.number(), clean: z.boolean() }) }),
    });
    expect(result.output).toEqual({ files: 2, clean: true });
    const sent = model.calls[0];
    expect(sent?.responseFormat).toMatchObject({ type: 'json' });
    expect(rebuildRequest(session, 1, 1).callOptions.responseFormat).toEqual(sent?.responseFormat);
    expectValidLog(session);
  });
});

describe('sessionMiddleware under generateText and ToolLoopAgent', () => {
  it('records generateText’s doGenerate calls by the same rules as a stream', async () => {
    const session = Session.create();
    const middleware = sessionMiddleware(session);
    const result = await generateText({
      model: wrapLanguageModel({ model: scriptedModel(script), middleware }),
      system: 'Be brief.',
      prompt: 'Are the files clean?',
      tools: sdkTools,
      stopWhen: stepCountIs(5),
    });
    expect(result.text).toBe('Both files are clean.');
    const loop = await loopRecording();
    expect(withoutIds(session.deriveMessages())).toEqual(withoutIds(loop.deriveMessages()));
    const messages = dataOf<AssistantMessageData>(session, 'assistant/message');
    expect(messages.map((data) => data.finishReason)).toEqual(['tool-calls', 'tool-calls', 'stop']);
    expectValidLog(session);
  });

  it('records a ToolLoopAgent run', async () => {
    const session = Session.create();
    const middleware = sessionMiddleware(session);
    const agent = new ToolLoopAgent({
      model: wrapLanguageModel({ model: scriptedModel(script), middleware }),
      instructions: 'Be brief.',
      tools: sdkTools,
    });
    const result = await agent.generate({ prompt: 'Are the files clean?' });
    expect(result.text).toBe('Both files are clean.');
    const loop = await loopRecording();
    expect(withoutIds(session.deriveMessages())).toEqual(withoutIds(loop.deriveMessages()));
    expectValidLog(session);
  });
});

describe('sessionMiddleware when a call does not complete', () => {
  it('records an abort mid-stream as the loop does: the partial text with its marker, turn aborted', async () => {
    const session = Session.create();
    const middleware = sessionMiddleware(session);
    const controller = new AbortController();
    const model = wrapLanguageModel({
      model: scriptedModel([{ text: 'A long answer that is cut off early.', delayMs: 5 }], {
        chunkSize: 4,
      }),
      middleware,
    });
    const result = streamText({
      model,
      prompt: 'Talk.',
      abortSignal: controller.signal,
      onChunk: ({ chunk }) => {
        if (chunk.type === 'text-delta' && chunk.text === 'ng a') controller.abort('stop');
      },
    });
    await result.consumeStream();
    const [message] = dataOf<AssistantMessageData>(session, 'assistant/message');
    expect(message?.interrupted).toBe(true);
    expect(message?.finishReason).toBe('aborted');
    const [partial, marker] = message?.message.content ?? [];
    expect(partial).toMatchObject({ type: 'text', text: expect.stringMatching(/^A long a/) });
    expect(marker).toEqual(interruptionMarker('aborted'));
    const [end] = dataOf<{ reason: unknown }>(session, 'turn/end');
    expect(end?.reason).toEqual({ kind: 'aborted', cause: 'stop' });
    expectValidLog(session);
  });

  it('records a stream to its end past an error part, and ends the turn with the error', async () => {
    const session = Session.create();
    const middleware = sessionMiddleware(session);
    const errors: unknown[] = [];
    const result = streamText({
      model: wrapLanguageModel({
        model: scriptedModel([{ text: 'Partial', error: 'upstream exploded' }]),
        middleware,
      }),
      prompt: 'Talk.',
      onError: ({ error }) => {
        errors.push(error);
      },
    });
    await result.consumeStream();
    expect(errors).toHaveLength(1);
    const kinds = session.events
      .filter((event) => event.type === 'assistant/chunk')
      .map((event) => (event.data as { chunk: { type: string } }).chunk.type);
    expect(kinds).toEqual(expect.arrayContaining(['text-delta', 'error']));
    const [message] = dataOf<AssistantMessageData>(session, 'assistant/message');
    expect(message?.finishReason).toBe('error');
    const [end] = dataOf<{ reason: { kind: string; error: { message: string } } }>(
      session,
      'turn/end',
    );
    expect(end?.reason.kind).toBe('error');
    expect(end?.reason.error.message).toContain('upstream exploded');
    expectValidLog(session);
  });
});
