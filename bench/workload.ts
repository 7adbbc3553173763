/**
 * Deterministic workloads for the core benchmark: the data of realistic events (chunk deltas,
 * user prompts, assistant messages with a tool call, tool results) and a whole JSONL log.
 *
 * Every text is a slice of a pseudo-random pool of words, so runs are reproducible and the
 * strings are not all the same (no accidental sharing that a real log would not have).
 */
import type {
  AssistantChunkData,
  AssistantMessageData,
  SurfaceIntent,
  ToolCallData,
  ToolResultData,
  UserMessage,
} from '../src/core/index.js';

/** A small, fast, seeded PRNG (mulberry32): returns floats in [0, 1). */
export function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = [
  'the',
  'session',
  'surface',
  'event',
  'log',
  'model',
  'tool',
  'result',
  'function',
  'returns',
  'value',
  'error',
  'file',
  'line',
  'config',
  'test',
  'passes',
  'because',
  'we',
  'read',
  'write',
  'index',
  'array',
  'string',
  'number',
  'async',
  'await',
  'import',
  'export',
  'const',
  'TypeScript',
  'JSON',
  'replace',
  'append',
  'seq',
  'turn',
  'step',
  'chunk',
  'summary',
  'context',
];

/** A long pseudo-random text; {@link TextSource.take} hands out consecutive slices of it. */
export class TextSource {
  private readonly pool: string;
  private position = 0;

  constructor(seed: number, size = 1 << 20) {
    const random = prng(seed);
    const parts: string[] = [];
    let length = 0;
    while (length < size) {
      const word = WORDS[Math.floor(random() * WORDS.length)] ?? 'x';
      const separator = random() < 0.08 ? '.\n' : random() < 0.1 ? ', ' : ' ';
      parts.push(word, separator);
      length += word.length + separator.length;
    }
    this.pool = parts.join('');
  }

  /** The next `length` characters of the pool (wrapping around). */
  take(length: number): string {
    if (length > this.pool.length) throw new RangeError('text longer than the pool');
    if (this.position + length > this.pool.length) this.position = 0;
    const start = this.position;
    this.position += length;
    return this.pool.slice(start, this.position);
  }
}

/** Length of one streamed text delta. */
export const DELTA_CHARS = 40;

export function chunkData(turn: number, step: number, delta: string): AssistantChunkData {
  return { turn, step, chunk: { type: 'text-delta', id: 't0', delta } };
}

export function userMessage(id: string, text: string, kind = 'user'): UserMessage {
  return { id, role: 'user', content: [{ type: 'text', text }], source: { kind } };
}

export function assistantData(
  turn: number,
  step: number,
  id: string,
  text: string,
  callId: string,
): AssistantMessageData {
  return {
    turn,
    step,
    message: {
      id,
      role: 'assistant',
      content: [
        { type: 'text', text },
        {
          type: 'tool-call',
          id: callId,
          name: 'read_file',
          arguments: `{"path":"src/module-${turn}.ts","startLine":1,"endLine":200}`,
        },
      ],
      source: { kind: 'model', provider: 'bench', model: 'bench-model-1' },
    },
    finishReason: 'tool-calls',
    usage: { inputTokens: 12000 + turn, outputTokens: 900, totalTokens: 12900 + turn },
  };
}

export function toolCallData(turn: number, step: number, callId: string): ToolCallData {
  return {
    turn,
    step,
    callId,
    name: 'read_file',
    arguments: `{"path":"src/module-${turn}.ts","startLine":1,"endLine":200}`,
  };
}

export function toolResultData(
  turn: number,
  step: number,
  id: string,
  callId: string,
  text: string,
): ToolResultData {
  return {
    turn,
    step,
    message: {
      id,
      role: 'tool',
      content: [{ type: 'tool-result', toolCallId: callId, content: [{ type: 'text', text }] }],
    },
  };
}

/** One surface append as the agent loop issues it. */
export type SurfaceAppend =
  | { readonly type: 'user/message'; readonly data: UserMessage; readonly intent: SurfaceIntent }
  | {
      readonly type: 'assistant/message';
      readonly data: AssistantMessageData;
      readonly intent: SurfaceIntent;
    }
  | { readonly type: 'tool/result'; readonly data: ToolResultData; readonly intent: SurfaceIntent };

/** The floor's view of an event: the envelope a store would serialize. */
export interface PlainEvent {
  readonly seq: number;
  readonly time: number;
  readonly type: string;
  readonly data: unknown;
  readonly surfaceOp?: 'append';
  readonly sourceEventSeqs?: readonly number[];
}

/** Chunks an assistant message cites in the surface workload (as one cites its stream). */
export const CITED_CHUNKS = 200;

/**
 * `count` surface appends for a fresh session (seqs 0..count-1), cycling user/message (~460 B,
 * citing the previous event), assistant/message (text 1–8 KB plus a tool-call block, citing the
 * 200 previous seqs as a real one cites its chunks), tool/result (~2 KB, citing the assistant
 * message that requested it).
 */
export function surfaceAppends(count: number, seed: number): SurfaceAppend[] {
  const text = new TextSource(seed);
  const random = prng(seed + 1);
  const out: SurfaceAppend[] = [];
  for (let seq = 0; seq < count; seq++) {
    const turn = Math.floor(seq / 3);
    switch (seq % 3) {
      case 0: {
        const intent: SurfaceIntent =
          seq === 0 ? { surfaceOp: 'append' } : { surfaceOp: 'append', sourceEventSeqs: [seq - 1] };
        out.push({ type: 'user/message', data: userMessage(`u${turn}`, text.take(400)), intent });
        break;
      }
      case 1: {
        const cited = Math.min(seq, CITED_CHUNKS);
        const sources = Array.from({ length: cited }, (_, i) => seq - cited + i);
        const length = 1024 + Math.floor(random() * 7 * 1024);
        out.push({
          type: 'assistant/message',
          data: assistantData(turn, 0, `a${turn}`, text.take(length), `c${turn}`),
          intent: { surfaceOp: 'append', sourceEventSeqs: sources },
        });
        break;
      }
      default:
        out.push({
          type: 'tool/result',
          data: toolResultData(turn, 0, `r${turn}`, `c${turn}`, text.take(2048)),
          intent: { surfaceOp: 'append', sourceEventSeqs: [seq - 1] },
        });
    }
  }
  return out;
}

/** The same appends as the plain envelopes the stringify floor serializes. */
export function plainSurfaceEvents(appends: readonly SurfaceAppend[], time: number): PlainEvent[] {
  return appends.map((append, seq) => {
    const sources = append.intent.sourceEventSeqs;
    return sources === undefined
      ? { seq, time, type: append.type, data: append.data, surfaceOp: 'append' }
      : {
          seq,
          time,
          type: append.type,
          data: append.data,
          surfaceOp: 'append',
          sourceEventSeqs: sources,
        };
  });
}

/** Shape of the generated conversation log. */
export interface LogShape {
  readonly turns: number;
  /** Text-delta chunks per turn. */
  readonly chunksPerTurn: number;
}

/** A generated log as JSONL text (one event per line, each line ending in `\n`). */
export interface GeneratedLog {
  readonly jsonl: string;
  readonly events: number;
  readonly bytes: number;
  readonly surfaceEvents: number;
}

/**
 * A whole conversation as JSONL. Per turn: `turn/start`, `user/message` (~460 B), `step/start`,
 * `chunksPerTurn` × `assistant/chunk` (~150 B), `assistant/message` (the concatenated deltas plus
 * a tool call, citing every chunk), `tool/call`, `tool/result` (~2 KB, citing the call),
 * `step/end`, `turn/end`: chunksPerTurn + 8 events.
 */
export function generateLog(shape: LogShape, seed: number): GeneratedLog {
  const text = new TextSource(seed);
  const lines: string[] = [];
  const time0 = 1_700_000_000_000;
  let seq = 0;
  let surfaceEvents = 0;
  const push = (
    type: string,
    data: unknown,
    surfaceOp?: 'append',
    sourceEventSeqs?: readonly number[],
  ): number => {
    const event: PlainEvent =
      surfaceOp === undefined
        ? sourceEventSeqs === undefined
          ? { seq, time: time0 + seq, type, data }
          : { seq, time: time0 + seq, type, data, sourceEventSeqs }
        : sourceEventSeqs === undefined
          ? { seq, time: time0 + seq, type, data, surfaceOp }
          : { seq, time: time0 + seq, type, data, surfaceOp, sourceEventSeqs };
    if (surfaceOp !== undefined) surfaceEvents++;
    lines.push(JSON.stringify(event));
    return seq++;
  };
  for (let turn = 0; turn < shape.turns; turn++) {
    push('turn/start', { turn });
    push('user/message', userMessage(`u${turn}`, text.take(400)), 'append');
    push('step/start', { turn, step: 0 });
    const deltas: string[] = [];
    const chunkSeqs: number[] = [];
    for (let i = 0; i < shape.chunksPerTurn; i++) {
      const delta = text.take(DELTA_CHARS);
      deltas.push(delta);
      chunkSeqs.push(push('assistant/chunk', chunkData(turn, 0, delta)));
    }
    push(
      'assistant/message',
      assistantData(turn, 0, `a${turn}`, deltas.join(''), `c${turn}`),
      'append',
      chunkSeqs,
    );
    const callSeq = push('tool/call', toolCallData(turn, 0, `c${turn}`));
    push(
      'tool/result',
      toolResultData(turn, 0, `r${turn}`, `c${turn}`, text.take(2048)),
      'append',
      [callSeq],
    );
    push('step/end', { turn, step: 0 });
    push('turn/end', { turn, reason: { kind: 'completed' } });
  }
  const jsonl = `${lines.join('\n')}\n`;
  return { jsonl, events: seq, bytes: Buffer.byteLength(jsonl), surfaceEvents };
}
