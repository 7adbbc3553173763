/**
 * The session the PostgreSQL damage and upgrade tests store: one that holds every kind of row
 * (a chunk run, single chunk rows, surface events with sources, tool calls and results).
 */
import { Session } from '../../../src/core/index.js';
import { assistant, recordToolTurn, tickingClock, user } from '../../core/builders.js';

/**
 * Session `id`: a turn whose message finishes six streamed chunks (stored as one chunk run,
 * seqs 3..8), then a tool turn (seqs 12..24, its chunks single rows).
 */
export function recorded(id: string): Session {
  const session = Session.create({ id, clock: tickingClock() });
  session.append('turn/start', { turn: 1 });
  session.append('user/message', user('u1', 'the question'), { surfaceOp: 'append' });
  session.append('step/start', { turn: 1, step: 1 });
  const chunks = Array.from(
    { length: 6 },
    (_, i) =>
      session.append('assistant/chunk', {
        turn: 1,
        step: 1,
        chunk: { type: 'text-delta', id: 't0', delta: `word${i} ` },
      }).seq,
  );
  session.append('assistant/message', assistant('a1', 'word0 word1 word2 word3 word4 word5'), {
    surfaceOp: 'append',
    sourceEventSeqs: chunks,
  });
  session.append('step/end', { turn: 1, step: 1 });
  session.append('turn/end', { turn: 1, reason: { kind: 'completed' } });
  recordToolTurn(session, 2);
  return session;
}
