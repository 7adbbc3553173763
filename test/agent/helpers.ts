/**
 * Helpers for agent tests: compact views of a log and the checks every produced log must pass.
 */
import type {
  LanguageModelV3,
  LanguageModelV3FinishReason,
  LanguageModelV3StreamPart,
} from '@ai-sdk/provider';
import { expect } from 'vitest';
import { z } from 'zod';
import { defineTool } from '../../src/agent/index.js';
import {
  checkInvariants,
  type Session,
  type SessionEvent,
  type TurnEndData,
} from '../../src/core/index.js';

/**
 * The event types of a log, with each run of `assistant/chunk` events collapsed to `chunk×N`,
 * so tests can state the whole order of a turn in one readable array.
 */
export function outline(events: readonly SessionEvent[]): string[] {
  const out: string[] = [];
  let chunks = 0;
  const flush = (): void => {
    if (chunks > 0) out.push(`chunk×${chunks}`);
    chunks = 0;
  };
  for (const event of events) {
    if (event.type === 'assistant/chunk') {
      chunks += 1;
      continue;
    }
    flush();
    out.push(event.type);
  }
  flush();
  return out;
}

/** The same outline with chunk counts hidden (`chunks`), for streams whose size may vary. */
export function shape(events: readonly SessionEvent[]): string[] {
  return outline(events).map((entry) => (entry.startsWith('chunk×') ? 'chunks' : entry));
}

/** Every log the loop leaves behind is closed and passes the linter. */
export function expectValidLog(session: Session): void {
  expect(checkInvariants(session.events, { requireClosed: true })).toEqual([]);
}

/** The data of the events of one type. */
export function dataOf<T>(session: Session, type: string): T[] {
  return session.events.filter((event) => event.type === type).map((event) => event.data as T);
}

/**
 * An `onEvent` hook that aborts `controller` when the `nth` chunk of stream part type
 * `partType` is recorded: cancellation at an exact point of a stream.
 */
export function abortAtChunk(
  controller: AbortController,
  partType: string,
  nth = 1,
): (event: SessionEvent) => void {
  let seen = 0;
  return (event) => {
    const chunk = (event.data as { chunk?: { type?: string } } | null)?.chunk;
    if (chunk?.type === partType && ++seen === nth) controller.abort();
  };
}

/** Resolves after `ms` milliseconds. */
export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** A model that streams exactly the given parts, one list per call. */
export function partsModel(
  calls: readonly (readonly LanguageModelV3StreamPart[])[],
): LanguageModelV3 {
  let call = 0;
  return {
    specificationVersion: 'v3',
    provider: 'parts',
    modelId: 'parts-1',
    supportedUrls: {},
    doGenerate: () => Promise.reject(new Error('not used')),
    doStream: async () => {
      const parts = calls[call++] ?? [];
      return {
        stream: new ReadableStream<LanguageModelV3StreamPart>({
          start(controller) {
            for (const part of parts) controller.enqueue(part);
            controller.close();
          },
        }),
      };
    },
  };
}

/** A finish part with small usage. */
export function finish(
  unified: LanguageModelV3FinishReason['unified'],
  raw: string | undefined = unified,
): LanguageModelV3StreamPart {
  return {
    type: 'finish',
    finishReason: { unified, raw },
    usage: {
      inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
      outputTokens: { total: 5, text: 5, reasoning: undefined },
    },
  };
}

/** A tool that returns its `text` argument. */
export const echo = defineTool({
  name: 'echo',
  description: 'Returns its text.',
  parameters: z.object({ text: z.string() }),
  execute: ({ text }) => text,
});

/** The data of the session's last `turn/end`. */
export function lastTurnEnd(session: Session): TurnEndData {
  const ends = dataOf<TurnEndData>(session, 'turn/end');
  const last = ends[ends.length - 1];
  if (last === undefined) throw new Error('no turn/end');
  return last;
}
