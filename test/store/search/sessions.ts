/**
 * Sessions for the search tests: a small project history with user words, an assistant answer
 * calling a tool, the tool's output, a compaction summary, a fork and a subagent's session.
 */
import { forkSession, type JsonObject, Session } from '../../../src/core/index.js';
import type { SessionStore } from '../../../src/store/index.js';
import { assistant, toolResult, user } from '../../core/builders.js';

export const T0 = 1_700_000_000_000;

/** Writes a session whose turn says `words` (user), answers them and reads a file. */
export async function writeTurn(
  store: SessionStore,
  id: string,
  words: string,
  options: { metadata?: JsonObject; time?: number; model?: string } = {},
): Promise<Session> {
  let now = options.time ?? T0;
  const session = Session.create({
    header: {
      version: 1,
      id,
      createdAt: now,
      ...(options.metadata === undefined ? {} : { metadata: options.metadata }),
    },
    clock: () => now++,
  });
  session.append('turn/start', { turn: 1 });
  session.append('request/header', { provider: 'test', model: options.model ?? 'model-a' });
  session.append('user/message', user('u1', words), { surfaceOp: 'append' });
  const answer = assistant('a1', `Looking into ${words}`, [
    { id: 'c1', name: 'grep_files', arguments: '{"pattern":"needle_pattern"}' },
  ]);
  session.append(
    'assistant/message',
    {
      ...answer,
      message: {
        ...answer.message,
        source: { kind: 'model', provider: 'test', model: options.model ?? 'model-a' },
      },
    },
    { surfaceOp: 'append' },
  );
  session.append('tool/call', {
    turn: 1,
    step: 1,
    callId: 'c1',
    name: 'grep_files',
    arguments: '{"pattern":"needle_pattern"}',
  });
  session.append('tool/result', toolResult('r1', 'c1', 'src/haystack.ts: 42 matches'), {
    surfaceOp: 'append',
  });
  session.append('turn/end', { turn: 1, reason: { kind: 'completed' } });
  await store.create(session.header);
  await store.append(id, session.events, { expectedSeq: 0 });
  return session;
}

/** Appends a summary that replaces the session's first three messages. */
export async function compactWith(
  store: SessionStore,
  session: Session,
  summary: string,
): Promise<void> {
  const before = session.events.length;
  const seqs = session.surface.seqs;
  const [first, , third] = seqs;
  session.append(
    'context/message',
    { ...user('s1', summary), source: { kind: 'compaction' } },
    {
      surfaceOp: { op: 'replace', start: first as number, end: third as number },
      sourceEventSeqs: seqs.slice(0, 3),
    },
  );
  await store.append(session.header.id, session.events.slice(before), { expectedSeq: before });
}

/** Forks `parent` and appends a user message of its own to the fork. */
export async function writeFork(
  store: SessionStore,
  parent: Session,
  id: string,
  words: string,
): Promise<void> {
  const fork = forkSession(parent, undefined, { id });
  fork.append('turn/start', { turn: 2 });
  fork.append('user/message', user('u2', words), { surfaceOp: 'append' });
  fork.append('turn/end', { turn: 2, reason: { kind: 'completed' } });
  await store.create(fork.header);
  await store.append(id, fork.events, { expectedSeq: 0 });
}
