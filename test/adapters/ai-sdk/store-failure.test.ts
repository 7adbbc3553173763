/**
 * A store that fails under the middleware: the JSONL store over a file system that runs out of
 * space part-way through a streamed step. The failure reaches the application's own stream as a
 * typed error, the provider's stream is cancelled, the call is released, and `finish()` reports
 * the writer's failure; a stream that completes was recorded.
 */
import type { LanguageModelV3, LanguageModelV3StreamPart } from '@ai-sdk/provider';
import { streamText, wrapLanguageModel } from 'ai';
import { afterEach, describe, expect, it } from 'vitest';
import { sessionMiddleware } from '../../../src/adapters/ai-sdk/index.js';
import { PalimpsestError } from '../../../src/core/index.js';
import { type LiveSession, openSession } from '../../../src/store/index.js';
import { openJsonlStore } from '../../../src/store/jsonl/index.js';
import { scriptedModel } from '../../../src/testing/index.js';
import { errno, faultyFs, tempDir } from '../../store/jsonl/helpers.js';

const sessions: LiveSession[] = [];
afterEach(async () => {
  for (const session of sessions.splice(0)) await session.close().catch(() => undefined);
});

/** A JSONL session whose log writes fail with ENOSPC once `full` is set. */
async function sessionOnDisk(disk: { full: boolean }): Promise<LiveSession> {
  const fs = faultyFs({
    write: (path) => {
      if (disk.full && path.endsWith('.jsonl')) throw errno('ENOSPC', 'no space left on device');
      return undefined;
    },
  });
  const store = await openJsonlStore(await tempDir(), { fs });
  const session = await openSession(store, 'disk-full', { durability: { mode: 'each' } });
  sessions.push(session);
  return session;
}

/** `inner`, with the parts its streams handed out and whether they were cancelled. */
function watched(inner: LanguageModelV3) {
  const seen = { parts: 0, cancelled: false };
  const model: LanguageModelV3 = {
    specificationVersion: 'v3',
    provider: inner.provider,
    modelId: inner.modelId,
    supportedUrls: inner.supportedUrls,
    doGenerate: (options) => inner.doGenerate(options),
    async doStream(options) {
      const result = await inner.doStream(options);
      const reader = result.stream.getReader();
      const stream = new ReadableStream<LanguageModelV3StreamPart>({
        async pull(controller) {
          const next = await reader.read();
          if (next.done) controller.close();
          else {
            seen.parts++;
            controller.enqueue(next.value);
          }
        },
        cancel(reason) {
          seen.cancelled = true;
          return reader.cancel(reason);
        },
      });
      return { ...result, stream };
    },
  };
  return { model, seen };
}

/**
 * Reads the application's stream to its end and returns how it failed: the error the stream
 * threw, or the error parts it carried.
 */
async function failureOf(
  stream: AsyncIterable<{ readonly type: string; readonly error?: unknown }>,
  onPart: (part: { readonly type: string }) => void = () => undefined,
): Promise<unknown[]> {
  const errors: unknown[] = [];
  try {
    for await (const part of stream) {
      if (part.type === 'error') errors.push(part.error);
      onPart(part);
    }
  } catch (error) {
    errors.push(error);
  }
  return errors;
}

const codes = (errors: readonly unknown[]) =>
  errors.map((error) => (PalimpsestError.isInstance(error) ? error.code : String(error)));

const longAnswer = 'The log is append-only, so nothing is ever lost. '.repeat(40);

describe('sessionMiddleware over a store that fails mid-stream', () => {
  it('fails the application’s stream with WRITER_FAILED, cancels the provider and releases the call', async () => {
    const disk = { full: false };
    const session = await sessionOnDisk(disk);
    const { model, seen } = watched(scriptedModel([{ text: longAnswer, delayMs: 1 }]));
    const middleware = sessionMiddleware(session);
    const result = streamText({
      model: wrapLanguageModel({ model, middleware }),
      prompt: 'Is anything lost?',
    });
    let deltas = 0;
    const errors = await failureOf(result.fullStream, (part) => {
      if (part.type === 'text-delta' && ++deltas === 3) disk.full = true;
    });
    expect(codes(errors)).toEqual(['WRITER_FAILED']);
    expect(seen.cancelled).toBe(true);
    // The failure stopped the stream well before its end (about 300 deltas).
    expect(deltas).toBeLessThan(100);
    const finished = await middleware.finish().then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(PalimpsestError.isInstance(finished) && finished.code).toBe('WRITER_FAILED');
  });

  it('does not complete a stream whose step the store failed to write', async () => {
    const disk = { full: false };
    const session = await sessionOnDisk(disk);
    const middleware = sessionMiddleware(session);
    const result = streamText({
      model: wrapLanguageModel({ model: scriptedModel([{ text: 'Short.' }]), middleware }),
      prompt: 'Is anything lost?',
    });
    disk.full = true;
    expect(codes(await failureOf(result.fullStream))).toEqual(['WRITER_FAILED']);
  });
});
