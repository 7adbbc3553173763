/**
 * The golden logs the seed fuzzing starts from (test/core/seed-fuzz.test.ts), recorded through a
 * real Session: turns with tool round trips, stream chunks, an empty assistant stream, a
 * compaction replace, nested replaces with start > end by seq, tool/result prunes, custom event
 * types and `__proto__` data keys. Each is kept live (the session's frozen events) and as JSON.
 */
import {
  Session,
  type SessionEvent,
  type ToolResultData,
  type UserMessage,
} from '../../src/core/index.js';

const MODEL = { kind: 'model', provider: 'test', model: 'scripted' } as const;

function newSession(): Session {
  let time = 1_700_000_000_000;
  return Session.create({ id: 'golden', clock: () => time++ });
}

function userMessage(id: string, text: string, kind = 'user'): UserMessage {
  return { id, role: 'user', content: [{ type: 'text', text }], source: { kind } };
}

function toolResult(
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

function pruned(data: ToolResultData, text: string): ToolResultData {
  const [block] = data.message.content;
  return {
    ...data,
    message: { ...data.message, content: [{ ...block, content: [{ type: 'text', text }] }] },
  };
}

/** Two turns with tool round trips, then a compaction and a tool/result prune. */
function agentLog(): readonly SessionEvent[] {
  const s = newSession();
  s.append('turn/start', { turn: 1 });
  const prompt = s.append('user/message', userMessage('u1', 'list and read'), {
    surfaceOp: 'append',
  });
  s.append('step/start', { turn: 1, step: 1 });
  s.append('request/header', {
    provider: 'test',
    model: 'scripted',
    system: 'be brief',
    tools: [{ name: 'ls', parameters: { type: 'object' } }],
  });
  const chunks = [
    s.append('assistant/chunk', { turn: 1, step: 1, chunk: { type: 'text-delta', text: 'ok' } }),
    s.append('assistant/chunk', {
      turn: 1,
      step: 1,
      chunk: { type: 'tool-input-delta', id: 'c1', delta: '{}' },
    }),
    s.append('assistant/chunk', { turn: 1, step: 1, chunk: { type: 'finish' } }),
  ];
  const request = s.append(
    'assistant/message',
    {
      turn: 1,
      step: 1,
      message: {
        id: 'a1',
        role: 'assistant',
        content: [
          { type: 'text', text: 'ok' },
          { type: 'tool-call', id: 'c1', name: 'ls', arguments: '{}' },
          { type: 'tool-call', id: 'c2', name: 'cat', arguments: '{"path":"x"}' },
        ],
        source: MODEL,
      },
      finishReason: 'tool-calls',
      usage: { inputTokens: 10, outputTokens: 5 },
    },
    { surfaceOp: 'append', sourceEventSeqs: chunks.map((c) => c.seq) },
  );
  const call1 = s.append(
    'tool/call',
    { turn: 1, step: 1, callId: 'c1', name: 'ls', arguments: '{}' },
    { sourceEventSeqs: [request.seq] },
  );
  const result1 = s.append('tool/result', toolResult(1, 1, 'r1', 'c1', 'a b c'), {
    surfaceOp: 'append',
    sourceEventSeqs: [call1.seq],
  });
  const call2 = s.append(
    'tool/call',
    { turn: 1, step: 1, callId: 'c2', name: 'cat', arguments: '{"path":"x"}' },
    { sourceEventSeqs: [request.seq] },
  );
  const failed: ToolResultData = {
    ...toolResult(1, 1, 'r2', 'c2', 'no such file '.repeat(20)),
    error: { code: 'ENOENT', message: 'no such file' },
  };
  const result2 = s.append('tool/result', failed, {
    surfaceOp: 'append',
    sourceEventSeqs: [call2.seq],
  });
  s.append('step/end', { turn: 1, step: 1 });
  s.append('step/start', { turn: 1, step: 2 });
  const chunk = s.append('assistant/chunk', {
    turn: 1,
    step: 2,
    chunk: { type: 'text-delta', text: 'done' },
  });
  s.append(
    'assistant/message',
    {
      turn: 1,
      step: 2,
      message: {
        id: 'a2',
        role: 'assistant',
        content: [{ type: 'text', text: 'done' }],
        source: MODEL,
      },
      finishReason: 'stop',
    },
    { surfaceOp: 'append', sourceEventSeqs: [chunk.seq] },
  );
  s.append('step/end', { turn: 1, step: 2 });
  s.append('turn/end', { turn: 1, reason: { kind: 'completed' } });
  s.append(
    'app/note',
    JSON.parse('{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}}}'),
  );
  s.append('turn/start', { turn: 2 });
  s.append('user/message', userMessage('u2', 'and now?'), { surfaceOp: 'append' });
  s.append('step/start', { turn: 2, step: 1 });
  s.append(
    'assistant/message',
    {
      turn: 2,
      step: 1,
      message: { id: 'a3', role: 'assistant', content: [], source: MODEL },
      finishReason: 'stop',
    },
    { surfaceOp: 'append', sourceEventSeqs: [] },
  );
  s.append('step/end', { turn: 2, step: 1 });
  s.append('turn/end', { turn: 2, reason: { kind: 'completed' } });
  s.append('compaction/start', { id: 'k1', reason: 'budget' });
  const shadowed = [prompt.seq, request.seq, result1.seq];
  s.append('user/message', userMessage('s1', 'summary: listed files', 'compaction'), {
    surfaceOp: { op: 'replace', start: prompt.seq, end: result1.seq },
    sourceEventSeqs: shadowed,
  });
  s.append('compaction/end', { id: 'k1' });
  s.append('compaction/start', { id: 'p1' });
  s.append('tool/result', pruned(failed, '[pruned 260 chars]'), {
    surfaceOp: { op: 'replace', start: result2.seq, end: result2.seq },
    sourceEventSeqs: [result2.seq],
  });
  s.append('compaction/end', { id: 'p1' });
  s.append('context/message', userMessage('x1', 'cwd is /tmp', 'context'), { surfaceOp: 'append' });
  return s.events;
}

/** Nested replaces (one with start > end by seq), a rewrite of a rewrite, an open turn. */
function nestedLog(): readonly SessionEvent[] {
  const s = newSession();
  const append = { surfaceOp: 'append' } as const;
  const first = s.append(
    'user/message',
    {
      id: 'u1',
      role: 'user',
      content: [
        { type: 'text', text: 'look' },
        { type: 'image', mediaType: 'image/png', url: 'https://example.test/a.png' },
      ],
      source: { kind: 'user' },
    },
    append,
  );
  const context = s.append('context/message', userMessage('x1', 'rules', 'context'), append);
  const thought = s.append(
    'assistant/message',
    {
      turn: 1,
      step: 1,
      message: {
        id: 'a1',
        role: 'assistant',
        content: [
          {
            type: 'reasoning',
            text: 'hmm',
            providerMetadata: JSON.parse('{"__proto__":{"signature":"sig"}}'),
          },
          { type: 'text', text: 'seen' },
        ],
        source: MODEL,
      },
      finishReason: 'stop',
    },
    append,
  );
  const second = s.append('user/message', userMessage('u2', 'run it'), append);
  s.append('turn/start', { turn: 1 });
  s.append('step/start', { turn: 1, step: 1 });
  const caller = s.append(
    'assistant/message',
    {
      turn: 1,
      step: 1,
      message: {
        id: 'a2',
        role: 'assistant',
        content: [{ type: 'tool-call', id: 'x', name: 'run', arguments: '{}' }],
        source: MODEL,
      },
      finishReason: 'tool-calls',
    },
    append,
  );
  const result = toolResult(1, 1, 'r1', 'x', 'output '.repeat(10));
  const resultEvent = s.append('tool/result', result, { ...append, sourceEventSeqs: [caller.seq] });
  const summary = s.append('user/message', userMessage('s1', 'summary', 'compaction'), {
    surfaceOp: { op: 'replace', start: context.seq, end: second.seq },
    sourceEventSeqs: [context.seq, thought.seq, second.seq],
  });
  const rewrite = s.append('tool/result', pruned(result, '[pruned]'), {
    surfaceOp: { op: 'replace', start: resultEvent.seq, end: resultEvent.seq },
    sourceEventSeqs: [resultEvent.seq],
  });
  // Surface is now [first, summary, caller, rewrite]: replace summary..caller, which are
  // numerically start > end (summary was appended after caller).
  const outer = s.append(
    'assistant/message',
    {
      turn: 1,
      step: 1,
      message: {
        id: 'a3',
        role: 'assistant',
        content: [{ type: 'text', text: 'recap' }],
        source: MODEL,
      },
      finishReason: 'stop',
    },
    {
      surfaceOp: { op: 'replace', start: summary.seq, end: caller.seq },
      sourceEventSeqs: [caller.seq, summary.seq],
    },
  );
  s.append('app/deep/custom-type.v2', { nested: { list: [1, 'two', null, true, { x: 1.25 }] } });
  s.append('tool/result', pruned(result, '[pruned again]'), {
    surfaceOp: { op: 'replace', start: rewrite.seq, end: rewrite.seq },
    sourceEventSeqs: [rewrite.seq, first.seq, outer.seq],
  });
  return s.events;
}

/** The smallest log with a replace. */
function tinyLog(): readonly SessionEvent[] {
  const s = newSession();
  const u = s.append('user/message', userMessage('u', 'hi'), { surfaceOp: 'append' });
  const a = s.append(
    'assistant/message',
    {
      turn: 0,
      step: 0,
      message: {
        id: 'a',
        role: 'assistant',
        content: [{ type: 'text', text: 'yo' }],
        source: MODEL,
      },
      finishReason: 'stop',
    },
    { surfaceOp: 'append' },
  );
  s.append('user/message', userMessage('s', 'greeting', 'compaction'), {
    surfaceOp: { op: 'replace', start: u.seq, end: a.seq },
    sourceEventSeqs: [u.seq, a.seq],
  });
  return s.events;
}

export type GoldenName = 'agent' | 'nested' | 'tiny' | 'empty';

export interface Golden {
  readonly name: GoldenName;
  readonly live: readonly SessionEvent[];
  readonly json: string;
}

function golden(name: GoldenName, events: readonly SessionEvent[]): Golden {
  return { name, live: events, json: JSON.stringify(events) };
}

export const GOLDENS: Readonly<Record<GoldenName, Golden>> = {
  agent: golden('agent', agentLog()),
  nested: golden('nested', nestedLog()),
  tiny: golden('tiny', tinyLog()),
  empty: golden('empty', []),
};

/** Longest acceptable error message: enough to say expected vs found, never a payload. */
export const MAX_MESSAGE_LENGTH = 4096;
