/**
 * The scripted agent workload the agent-loop and AI SDK benchmarks share: each turn a step that
 * streams text and calls one tool, then a step that streams the answer, every step `DELTAS`
 * deltas of `CHUNK_CHARS` characters of the same deterministic prose, so every run streams the
 * same bytes.
 */
import type { ScriptedResponse } from '../src/testing/index.js';

/** Text deltas per step. */
export const DELTAS = 200;
/** Characters per delta. */
export const CHUNK_CHARS = 8;

/** Deterministic prose of `DELTAS × CHUNK_CHARS` characters for one step. */
export function prose(turn: number, step: number): string {
  const words = [
    'log',
    'surface',
    'event',
    'replay',
    'tool',
    'model',
    'turn',
    'chunk',
    'fold',
    'seq',
  ];
  let text = '';
  let i = turn * 31 + step * 7;
  while (text.length < DELTAS * CHUNK_CHARS) {
    text += `${words[i % words.length]} `;
    i = (i * 1103515245 + 12345) % 2147483648;
  }
  return text.slice(0, DELTAS * CHUNK_CHARS);
}

/** The scripted responses of `turns` turns: a step calling `lookup`, then the answer. */
export function twoStepScript(turns: number): ScriptedResponse[] {
  return Array.from({ length: turns }, (_, turn) => [
    {
      text: prose(turn, 1),
      toolCalls: [{ name: 'lookup', args: { key: `k${turn}` } }],
      usage: { inputTokens: 1000, outputTokens: 400 },
    },
    { text: prose(turn, 2), usage: { inputTokens: 1400, outputTokens: 400 } },
  ]).flat();
}

/** A progress line writer: each message on stderr with the seconds since this call. */
export function progressLog(): (message: string) => void {
  const startedNs = process.hrtime.bigint();
  return (message) => {
    const seconds = Number(process.hrtime.bigint() - startedNs) / 1e9;
    process.stderr.write(`[${seconds.toFixed(1).padStart(6)} s] ${message}\n`);
  };
}
