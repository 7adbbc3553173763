/**
 * Sessions recorded by palimpsest's loop, by the AI SDK middleware and by import (real Claude
 * Code and Codex files) exported over OTLP/HTTP to a real trace backend started here, then read
 * back from it: the span tree, the attributes, the links between sessions, and that no text of
 * any session reached the backend until content was asked for; then the backend's own web UI
 * showing an exported turn.
 */

import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { SpanKind } from '@opentelemetry/api';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { stepCountIs, streamText, tool, wrapLanguageModel } from 'ai';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { sessionMiddleware } from '../../../src/adapters/ai-sdk/index.js';
import {
  exportLive,
  exportSession,
  exportStoredSessions,
  type OtelExportOptions,
  otlpHttpExporter,
} from '../../../src/adapters/otel/index.js';
import { runTurn } from '../../../src/agent/index.js';
import { forkSession, type Session, type SessionEvent } from '../../../src/core/index.js';
import { importSessions } from '../../../src/import/index.js';
import { MemoryStore, type SessionStore } from '../../../src/store/index.js';
import { scriptedModel } from '../../../src/testing/index.js';
import { describeBrowser, launch } from '../../viewer/browser.js';
import { loopSession, readNote, SECRETS } from './helpers.js';
import {
  BACKEND_SCOPE,
  backendInstalled,
  type StoredSpan,
  scalarAttributes,
  startTraceBackend,
  type TraceBackend,
} from './trace-backend.js';

const corpus = join(import.meta.dirname, '../../import/corpus');
const required = process.env.PALIMPSEST_REQUIRE_OTEL_BACKEND === '1';
const run = backendInstalled() || required ? describe : describe.skip;

/** What every export here shares: the scope the backend serves, arrays as JSON text. */
const backendOptions = {
  scopeName: BACKEND_SCOPE,
  redact: scalarAttributes,
  agentName: 'palimpsest-test',
} satisfies Partial<OtelExportOptions>;

run('exporting sessions to a real trace backend', () => {
  let backend: TraceBackend;
  let store: SessionStore;
  const ids: string[] = [];

  beforeAll(async () => {
    backend = await startTraceBackend();
    store = new MemoryStore();
    const keep = async (session: Session) => {
      await store.create(session.header);
      await store.append(session.id, session.events, { expectedSeq: 0 });
      ids.push(session.id);
    };
    const loop = await loopSession('bk-loop');
    await keep(loop);
    const callId = toolCallIds(loop.events)[0] ?? '';
    await keep(await subagent('bk-child', 'bk-loop', callId));
    const firstEnd = loop.events.find((event) => event.type === 'turn/end')?.seq ?? -1;
    const fork = forkSession(loop, firstEnd, { id: 'bk-fork' });
    await runTurn({
      session: fork,
      model: scriptedModel([{ text: SECRETS.answer }]),
      input: SECRETS.input,
    });
    await keep(fork);
    await keep(await aiSdkSession('bk-ai-sdk'));
    const imported = [
      await importSessions({
        from: 'claude-code',
        path: join(corpus, 'claude-code/claude-code-2.1.337-loopback'),
        store,
      }),
      await importSessions({
        from: 'codex',
        path: join(
          corpus,
          'codex/codex-0.171-loopback--rollout-2026-12-06T17-22-38-01a24c61-0bdb-76d3-8417-2fc27dea8e6e.jsonl',
        ),
        store,
      }),
    ];
    for (const report of imported) ids.push(...report.sessions.map((session) => session.id));
    const exporter = otlpHttpExporter({ endpoint: backend.endpoint });
    await exportStoredSessions(store, ids, { ...backendOptions, exporter });
    await exporter.shutdown();
  }, 120_000);

  afterAll(async () => {
    await store?.close();
    await backend?.close();
  });

  /** The spans an in-process export builds for a stored session: what the backend must hold. */
  async function expected(id: string): Promise<ReadableSpan[]> {
    const exporter = new InMemorySpanExporter();
    await exportStoredSessions(store, [id], { ...backendOptions, exporter });
    return exporter.getFinishedSpans();
  }

  async function stored(spans: readonly ReadableSpan[]): Promise<StoredSpan[]> {
    const traces = new Set(spans.map((span) => span.spanContext().traceId));
    const out: StoredSpan[] = [];
    for (const trace of traces) out.push(...(await backend.spansOf(trace)));
    return out;
  }

  it('the backend holds every span of every session, with the tree and ids the export built', async () => {
    expect(ids.length).toBeGreaterThanOrEqual(6);
    for (const id of ids) {
      const spans = await expected(id);
      expect(spans.length, id).toBeGreaterThan(0);
      const back = await stored(spans);
      const shape = (span: { id: string; parent: string | null; name: string }) =>
        `${span.id} ${span.parent ?? '-'} ${span.name}`;
      const mine = spans.map((span) =>
        shape({
          id: span.spanContext().spanId,
          parent: span.parentSpanContext?.spanId ?? null,
          name: span.name,
        }),
      );
      const theirs = back
        .filter((span) => span.attributes['gen_ai.conversation.id'] === id)
        .map((span) => shape({ id: span.span_id, parent: span.parent_span_id, name: span.name }));
      expect(theirs.sort(), id).toEqual(mine.sort());
    }
  });

  it("a loop turn reads back as invoke_agent over its model calls and tool executions, with the conventions' attributes", async () => {
    const back = await stored(await expected('bk-loop'));
    const root = back.find(
      (span) =>
        span.name === 'invoke_agent palimpsest-test' && span.attributes['palimpsest.turn'] === 1,
    );
    expect(root?.parent_span_id).toBeNull();
    const children = back.filter((span) => span.parent_span_id === root?.span_id);
    expect(children.map((span) => span.name).sort()).toEqual([
      'chat deepseek-chat',
      'chat deepseek-chat',
      'execute_tool explode',
      'execute_tool read_note',
    ]);
    const call = children.find((span) => span.attributes['gen_ai.usage.input_tokens'] === 120);
    expect(call?.kind).toBe('Client');
    expect(call?.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'deepseek',
      'gen_ai.request.model': 'deepseek-chat',
      'gen_ai.response.model': 'deepseek-chat',
      'gen_ai.response.finish_reasons': '["tool_call"]',
      'gen_ai.usage.output_tokens': 30,
      'gen_ai.usage.cache_read.input_tokens': 100,
      'gen_ai.usage.cache_creation.input_tokens': 10,
      'gen_ai.conversation.id': 'bk-loop',
    });
    // Priced by sessionCost from the shipped table (DeepSeek's rates), as the CLI does.
    expect(call?.attributes['palimpsest.cost.usd']).toBeGreaterThan(0);
    const failed = children.find((span) => span.name === 'execute_tool explode');
    expect(failed?.status.code).toBe(2);
    expect(failed?.attributes['error.type']).toBe('TOOL_FAILED');
    expect(root?.resource_attributes['service.name']).toBe('palimpsest');
  });

  it("a subagent's turn reads back under its parent's execute_tool span; a fork's links to its origin", async () => {
    const parent = await stored(await expected('bk-loop'));
    const child = await stored(await expected('bk-child'));
    const tool = parent.find((span) => span.name === 'execute_tool read_note');
    const childTurn = child.find(
      (span) =>
        span.attributes['gen_ai.conversation.id'] === 'bk-child' &&
        span.name.startsWith('invoke_agent'),
    );
    expect(childTurn?.parent_span_id).toBe(tool?.span_id);
    expect(childTurn?.trace_id).toBe(tool?.trace_id);
    const fork = await stored(await expected('bk-fork'));
    const forkTurn = fork.find((span) => span.name.startsWith('invoke_agent'));
    const origin = parent.find(
      (span) => span.name.startsWith('invoke_agent') && span.attributes['palimpsest.turn'] === 1,
    );
    expect(forkTurn?.links.map((link) => link.span_id)).toEqual([origin?.span_id]);
    expect(forkTurn?.attributes['palimpsest.fork.parent_session']).toBe('bk-loop');
  });

  it('sessions recorded by the AI SDK middleware and imported from Claude Code and Codex read back with their models and usage', async () => {
    for (const id of ids.filter((id) => !id.startsWith('bk-') || id === 'bk-ai-sdk')) {
      const back = await stored(await expected(id));
      const calls = back.filter(
        (span) =>
          span.attributes['gen_ai.operation.name'] === 'chat' && span.name.startsWith('chat '),
      );
      expect(calls.length, id).toBeGreaterThan(0);
      for (const call of calls) {
        expect(typeof call.attributes['gen_ai.response.model'], id).toBe('string');
        expect(typeof call.attributes['gen_ai.provider.name'], id).toBe('string');
      }
      expect(
        calls.some((call) => typeof call.attributes['gen_ai.usage.input_tokens'] === 'number'),
        id,
      ).toBe(true);
    }
  });

  it('a live export sends each turn as it ends, and the backend holds it under the ids an export after the fact computes', async () => {
    const { Session } = await import('../../../src/core/index.js');
    const session = Session.create({ id: 'bk-live' });
    const exporter = otlpHttpExporter({ endpoint: backend.endpoint });
    const live = exportLive(session, { ...backendOptions, exporter });
    await runTurn({
      session,
      model: scriptedModel([
        { toolCalls: [{ name: 'read_note', args: { name: SECRETS.argument } }] },
        { text: SECRETS.answer },
      ]),
      tools: [readNote],
      input: SECRETS.input,
    });
    const report = await live.close();
    await exporter.shutdown();
    expect(report.turns).toBe(1);
    const local = new InMemorySpanExporter();
    await exportSession(session, { ...backendOptions, exporter: local });
    const back = await stored(local.getFinishedSpans());
    expect(back.map((span) => span.span_id).sort()).toEqual(
      local
        .getFinishedSpans()
        .map((span) => span.spanContext().spanId)
        .sort(),
    );
  });

  it('no text of any session reached the backend without content: true', async () => {
    const everything = backend.storedText();
    let scanned = 0;
    for (const id of ids) {
      const loaded = await store.load(id);
      const texts = textsOf(loaded.events);
      scanned += texts.length;
      for (const text of texts) expect(everything, `${id}: ${text}`).not.toContain(text);
    }
    // A scan that found no text would pass on any backend (the loop sessions' texts are the
    // SECRETS, checked below; the imported ones give the runs).
    expect(scanned).toBeGreaterThanOrEqual(10);
    expect(everything.length).toBeGreaterThan(10_000);
    for (const secret of Object.values(SECRETS)) expect(everything).not.toContain(secret);
    expect(everything).not.toContain('gen_ai.input.messages');
  });

  it('with content: true the backend receives the messages, system instructions and tool results', async () => {
    const loop = await loopSession('bk-content');
    await store.create(loop.header);
    await store.append(loop.id, loop.events, { expectedSeq: 0 });
    const exporter = otlpHttpExporter({ endpoint: backend.endpoint });
    await exportStoredSessions(store, ['bk-content'], {
      ...backendOptions,
      exporter,
      content: true,
    });
    await exporter.shutdown();
    const back = await stored(await expected('bk-content'));
    const call = back.find((span) => span.attributes['gen_ai.usage.input_tokens'] === 120);
    expect(String(call?.attributes['gen_ai.input.messages'])).toContain(SECRETS.input);
    expect(String(call?.attributes['gen_ai.system_instructions'])).toContain(SECRETS.system);
    const tool = back.find((span) => span.name === 'execute_tool read_note');
    expect(String(tool?.attributes['gen_ai.tool.call.result'])).toContain(SECRETS.output);
  });

  // The backend's own web UI, in Debian's Chromium. With PALIMPSEST_UPDATE_SCREENSHOTS=1 the page
  // is saved as docs/observability/backend-trace.png (the picture in docs/observability.md).
  // Here, not in a file of its own: the backend also listens on a fixed port of its own, so two
  // of them cannot run at once.
  describeBrowser("the backend's UI", () => {
    let browser: Browser;
    beforeAll(async () => {
      browser = await launch();
    }, 60_000);
    afterAll(async () => {
      await browser?.close();
    });

    it('shows an exported turn with its model calls and tool executions, under the HTTP request that ran it', async () => {
      const session = await loopSession('ui-session');
      const first = session.events[0]?.time ?? Date.now();
      const last = session.events.at(-1)?.time ?? first;
      // This backend's UI shows traces that begin with an HTTP server span named `request`: the
      // application's own instrumentation makes it (here through the SDK's tracer), and the
      // export hangs the session's turns under it with `parentCall`.
      const exporter = otlpHttpExporter({ endpoint: backend.endpoint });
      const provider = new BasicTracerProvider({
        resource: resourceFromAttributes({ 'service.name': 'palimpsest-demo' }),
        spanProcessors: [new SimpleSpanProcessor(exporter)],
      });
      const request = provider.getTracer(BACKEND_SCOPE).startSpan('request', {
        kind: SpanKind.SERVER,
        startTime: first - 2,
        attributes: {
          'http.request.method': 'POST',
          'url.full': 'http://localhost:3000/chat',
          'fpx.http.request.pathname': '/chat',
          'http.response.status_code': 200,
        },
      });
      request.end(last + 2);
      await provider.forceFlush();
      const parentCall = request.spanContext();
      const options = {
        scopeName: BACKEND_SCOPE,
        redact: scalarAttributes,
        agentName: 'palimpsest-demo',
        serviceName: 'palimpsest-demo',
        parentCall,
      };
      await exportSession(session, { ...options, exporter });
      await provider.shutdown();

      const page = await browser.newPage({ viewport: { width: 1400, height: 1250 } });
      // The page may reach for fonts or telemetry on the internet: only loopback is allowed.
      await page.route('**/*', (route) => {
        const host = new URL(route.request().url()).hostname;
        return host === '127.0.0.1' || host === 'localhost' ? route.continue() : route.abort();
      });
      await page.goto(`${backend.ui}/requests/${parentCall.traceId}`);
      await page.getByText('Routes').first().waitFor({ timeout: 20_000 });
      // The footer's panel toggles (their icons come from the internet, so they show blank here):
      // one opens the timeline of the request's spans.
      const toggles = page.locator('nav button');
      for (let index = (await toggles.count()) - 1; index >= 0; index--) {
        await toggles.nth(index).click();
        await page.waitForTimeout(1000);
        if ((await page.getByText('execute_tool read_note').count()) > 0) break;
      }
      await page.getByText('execute_tool read_note').first().waitFor({ timeout: 20_000 });
      for (const name of [
        'invoke_agent palimpsest-demo',
        'chat deepseek-chat',
        'execute_tool explode',
      ]) {
        await expect(page.getByText(name).first().isVisible()).resolves.toBe(true);
      }
      const artifacts = join(import.meta.dirname, '../../viewer/.artifacts');
      mkdirSync(artifacts, { recursive: true });
      await page.screenshot({ path: join(artifacts, 'otel-backend-trace.png') });
      if (process.env.PALIMPSEST_UPDATE_SCREENSHOTS === '1') {
        const docs = join(import.meta.dirname, '../../../docs/observability');
        mkdirSync(docs, { recursive: true });
        await page.screenshot({ path: join(docs, 'backend-trace.png') });
      }
    });
  });
});

function toolCallIds(events: readonly SessionEvent[]): string[] {
  return events.flatMap((event) => (event.type === 'tool/call' ? [event.data.callId] : []));
}

/** A child session whose header names the parent's call, as a subagent's does. */
async function subagent(id: string, parent: string, toolCallId: string): Promise<Session> {
  const { Session } = await import('../../../src/core/index.js');
  const child = Session.create({
    header: {
      version: 1,
      id,
      createdAt: Date.now(),
      metadata: { subagentOf: { session: parent, toolCallId } },
    },
  });
  await runTurn({
    session: child,
    model: scriptedModel([
      { toolCalls: [{ name: 'read_note', args: { name: SECRETS.argument } }] },
      { text: SECRETS.answer },
    ]),
    tools: [readNote],
    input: SECRETS.input,
  });
  return child;
}

/** A session the AI SDK's own loop recorded through palimpsest's middleware. */
async function aiSdkSession(id: string): Promise<Session> {
  const { Session } = await import('../../../src/core/index.js');
  const session = Session.create({ id });
  const result = streamText({
    model: wrapLanguageModel({
      model: scriptedModel(
        [
          {
            toolCalls: [{ name: 'read_note', args: { name: SECRETS.argument } }],
            usage: { inputTokens: 50, outputTokens: 5 },
          },
          { text: SECRETS.answer },
        ],
        { provider: 'openai.responses', modelId: 'gpt-5-mini' },
      ),
      middleware: sessionMiddleware(session),
    }),
    system: SECRETS.system,
    prompt: SECRETS.input,
    tools: {
      read_note: tool({
        description: 'Reads a note.',
        inputSchema: z.object({ name: z.string() }),
        execute: async ({ name }) => `${SECRETS.output} for ${name}`,
      }),
    },
    stopWhen: stepCountIs(4),
  });
  await result.consumeStream();
  return session;
}

/**
 * Distinctive runs of text from every message, tool call and result of a log: at least 16
 * letters, digits or spaces in a row, so each is plain in any JSON encoding and unlikely to be
 * an attribute's own value by chance.
 */
function textsOf(events: readonly SessionEvent[]): string[] {
  const texts = new Set<string>();
  const add = (text: string) => {
    const run = /[A-Za-z0-9 ]{16,}/.exec(text)?.[0].trim();
    if (run !== undefined && run.length >= 16) texts.add(run.slice(0, 40));
  };
  for (const event of events) {
    if (event.type === 'user/message' || event.type === 'context/message') {
      for (const block of event.data.content) if (block.type === 'text') add(block.text);
    } else if (event.type === 'assistant/message') {
      for (const block of event.data.message.content) {
        if (block.type === 'text' || block.type === 'reasoning') add(block.text);
        if (block.type === 'tool-call') add(block.arguments);
      }
    } else if (event.type === 'tool/result') {
      for (const block of event.data.message.content[0].content)
        if (block.type === 'text') add(block.text);
    } else if (event.type === 'request/header' && event.data.system !== undefined) {
      add(event.data.system);
    }
  }
  return [...texts];
}
