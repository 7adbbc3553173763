/**
 * The events the chunk-run tests of both SQL backends append: chunks with hostile text and
 * times that go back and jump, and the message that finishes them.
 */
import type { SessionEvent } from '../../src/core/index.js';

export const chunk = (seq: number, time: number, delta: string): SessionEvent => ({
  seq,
  time,
  type: 'assistant/chunk',
  data: { turn: 1, step: 1, chunk: { type: 'text-delta', id: 't0', delta } },
});

export const message = (seq: number, sources: number[]): SessionEvent => ({
  seq,
  time: 1_700_000_000_500 + seq,
  type: 'assistant/message',
  data: {
    turn: 1,
    step: 1,
    message: {
      id: `m${seq}`,
      role: 'assistant',
      content: [{ type: 'text', text: 'done' }],
      source: { kind: 'model', provider: 'p', model: 'm' },
    },
    finishReason: 'stop',
  },
  surfaceOp: 'append',
  sourceEventSeqs: sources,
});

/** Every kind of text a JSON string can hold. */
export const HOSTILE_TEXTS = ['plain ', 'é ü ', '😀\u2028', '\u0000\\"\n', '\ud800 lone'];

/** Times that go back and jump, deltas taking `texts` in turn. */
export function streamed(first: number, count: number, texts = HOSTILE_TEXTS): SessionEvent[] {
  return Array.from({ length: count }, (_, i) =>
    chunk(
      first + i,
      1_700_000_000_000 + (i % 3 === 2 ? -5 * i : 7 * i),
      texts[i % texts.length] as string,
    ),
  );
}
