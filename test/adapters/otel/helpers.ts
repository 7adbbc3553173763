/**
 * Shared by the OpenTelemetry export tests: sessions recorded by the loop, an exporter that
 * counts without keeping, and a scan for any recorded text in what was exported.
 */
import type { ExportResult } from '@opentelemetry/core';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';
import { z } from 'zod';
import { defineTool, runTurn } from '../../../src/agent/index.js';
import { Session } from '../../../src/core/index.js';
import { scriptedModel } from '../../../src/testing/index.js';

/** Texts the loop session below holds; none may leave without `content: true`. */
export const SECRETS = {
  system: 'SYSTEM-PROMPT-7f3a',
  input: 'USER-INPUT-91c2',
  argument: 'TOOL-ARG-5d0e',
  output: 'TOOL-OUTPUT-c4b8',
  answer: 'MODEL-ANSWER-2a6f',
  reasoning: 'MODEL-REASONING-e19d',
} as const;

export const readNote = defineTool({
  name: 'read_note',
  description: 'Reads a note.',
  parameters: z.object({ name: z.string() }),
  execute: ({ name }) => `${SECRETS.output} for ${name}`,
});

export const failing = defineTool({
  name: 'explode',
  description: 'Always fails.',
  parameters: z.object({}),
  execute: () => {
    throw new Error(`${SECRETS.output} exploded`);
  },
});

/** Two turns recorded by palimpsest's loop: tools (one failing), reasoning, usage. */
export async function loopSession(id = 'otel-loop'): Promise<Session> {
  const session = Session.create({ id });
  const model = scriptedModel(
    [
      {
        reasoning: SECRETS.reasoning,
        toolCalls: [
          { name: 'read_note', args: { name: SECRETS.argument } },
          { name: 'explode', args: {} },
        ],
        usage: { inputTokens: 120, outputTokens: 30, cacheReadTokens: 100, cacheWriteTokens: 10 },
      },
      { text: SECRETS.answer, usage: { inputTokens: 200, outputTokens: 12 } },
      { text: `${SECRETS.answer} again` },
    ],
    { provider: 'deepseek.chat', modelId: 'deepseek-chat' },
  );
  const tools = [readNote, failing];
  await runTurn({ session, model, tools, input: SECRETS.input, system: SECRETS.system });
  await runTurn({ session, model, tools, input: `${SECRETS.input} 2`, system: SECRETS.system });
  return session;
}

/** Every string an exported span carries: name, attributes (keys and values), status, links. */
export function exportedText(spans: readonly ReadableSpan[]): string {
  return JSON.stringify(
    spans.map((span) => ({
      name: span.name,
      attributes: span.attributes,
      status: span.status,
      links: span.links,
      events: span.events,
      resource: span.resource.attributes,
    })),
  );
}

/** An exporter that counts spans and batches and keeps nothing, as a backend far away would. */
export class CountingExporter implements SpanExporter {
  spans = 0;
  batches = 0;
  largestBatch = 0;
  readonly ids = new Set<string>();
  constructor(private readonly keepIds = false) {}

  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    this.spans += spans.length;
    this.batches++;
    this.largestBatch = Math.max(this.largestBatch, spans.length);
    if (this.keepIds) for (const span of spans) this.ids.add(span.spanContext().spanId);
    // Asynchronous like a network exporter, so the exporting side really waits.
    setImmediate(() => done({ code: 0 }));
  }

  async shutdown(): Promise<void> {}
}
