/**
 * A session whose calls went wrong, at times the test chooses: a call retried after an
 * overloaded error, two tools run side by side (one failed), and a turn that ended on a rate
 * limit before its call answered. The trace's model test and its browser test both read it.
 */
import { Session } from '../../src/core/index.js';
import { assistant, toolResult, user } from '../core/builders.js';

/** When each thing happened, in ms after the session began. */
export const AT = {
  call: 1_000,
  firstPart: 1_800,
  answer: 2_000,
  toolA: 2_001,
  toolB: 2_002,
  resultB: 2_300,
  resultA: 2_500,
  failedCall: 3_000,
  failedEnd: 3_500,
} as const;

const START = 1_790_000_000_000;

/** The session, its events timed as {@link AT} says. */
export function retriedSession(id = 'retried'): Session {
  let now = START;
  const session = Session.create({ id, clock: () => now });
  const at = (ms: number): void => {
    now = START + ms;
  };
  const header = {
    provider: 'anthropic.messages',
    model: 'claude-sonnet-4-5',
    system: 'Be brief.',
  };
  session.append('turn/start', { turn: 1 });
  session.append('user/message', user('u1', 'Check both files.'), { surfaceOp: 'append' });
  at(AT.call);
  session.append('step/start', { turn: 1, step: 1 });
  session.append('request/header', { ...header, system: 'Be brief.' });
  session.append('request/retry', {
    turn: 1,
    step: 1,
    attempt: 1,
    delayMs: 500,
    error: { message: 'Overloaded', code: 'overloaded_error', status: 529 },
  });
  at(AT.firstPart);
  const part = session.append('assistant/chunk', {
    turn: 1,
    step: 1,
    attempt: 2,
    chunk: { type: 'text-delta', id: 't1', delta: 'Reading both.' },
  });
  at(AT.answer);
  const answer = {
    ...assistant('a1', 'Reading both.', [
      { id: 'call_a', name: 'read_file' },
      { id: 'call_b', name: 'read_file' },
    ]),
    usage: { inputTokens: 12_000, cachedInputTokens: 10_000, outputTokens: 300 },
  };
  session.append(
    'assistant/message',
    { ...answer, message: { ...answer.message, source: { kind: 'model', ...header } } },
    { surfaceOp: 'append', sourceEventSeqs: [part.seq] },
  );
  at(AT.toolA);
  const callA = session.append('tool/call', {
    turn: 1,
    step: 1,
    callId: 'call_a',
    name: 'read_file',
    arguments: '{"path":"a.txt"}',
  });
  at(AT.toolB);
  const callB = session.append('tool/call', {
    turn: 1,
    step: 1,
    callId: 'call_b',
    name: 'read_file',
    arguments: '{"path":"b.txt"}',
  });
  at(AT.resultB);
  session.append('tool/result', toolResult('r2', 'call_b', 'the text of b'), {
    surfaceOp: 'append',
    sourceEventSeqs: [callB.seq],
  });
  at(AT.resultA);
  session.append(
    'tool/result',
    {
      ...toolResult('r1', 'call_a', 'no such file'),
      error: { code: 'ENOENT', message: 'a.txt is missing' },
    },
    { surfaceOp: 'append', sourceEventSeqs: [callA.seq] },
  );
  session.append('step/end', { turn: 1, step: 1 });
  session.append('turn/end', { turn: 1, reason: { kind: 'completed' } });
  session.append('turn/start', { turn: 2 });
  session.append('user/message', user('u2', 'Again.'), { surfaceOp: 'append' });
  at(AT.failedCall);
  session.append('step/start', { turn: 2, step: 1 });
  session.append('request/header', { ...header, system: 'Be brief.' });
  at(AT.failedEnd);
  session.append('turn/end', {
    turn: 2,
    reason: {
      kind: 'error',
      error: { message: 'Rate limited', code: 'rate_limit_error', status: 429 },
    },
  });
  return session;
}
