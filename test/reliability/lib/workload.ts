/**
 * The agent workload of the crash tests: turns with streamed chunks, tool calls (flushed before
 * a tool "runs", as an agent loop would), tool results, and now and then a compaction. It calls
 * `durable()` wherever an agent needs durability before going on.
 */
import type { Session } from '../../../src/core/index.js';

/** A small deterministic PRNG (mulberry32), so a seed reproduces a workload. */
export function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The id of the n-th session a crash writer records. */
export function crashSessionId(n: number): string {
  return `crash-${n}`;
}

const model = { kind: 'model', provider: 'crash', model: 'test' } as const;

/** The number of the last turn started in the log (0 when none). */
export function lastTurn(session: Session): number {
  for (let seq = session.seq - 1; seq >= 0; seq--) {
    const event = session.event(seq);
    if (event?.type === 'turn/start') return (event.data as { turn: number }).turn;
  }
  return 0;
}

/** Records `turns` turns (forever when undefined), calling `durable` at the agent's sync points. */
export async function recordTurns(
  session: Session,
  next: () => number,
  durable: () => Promise<void>,
  turns?: number,
): Promise<void> {
  const first = lastTurn(session) + 1;
  for (let turn = first; turns === undefined || turn < first + turns; turn++) {
    session.append('turn/start', { turn });
    session.append(
      'user/message',
      {
        id: `u${turn}`,
        role: 'user',
        content: [{ type: 'text', text: `request ${turn}` }],
        source: { kind: 'user' },
      },
      { surfaceOp: 'append' },
    );
    for (let step = 1; step <= 2; step++) {
      session.append('step/start', { turn, step });
      const chunks: number[] = [];
      const chunkCount = 1 + Math.floor(next() * 30);
      for (let i = 0; i < chunkCount; i++) {
        chunks.push(
          session.append('assistant/chunk', {
            turn,
            step,
            chunk: { type: 'text-delta', id: 't', delta: `w${i} ` },
          }).seq,
        );
      }
      const calls = step === 1 ? Math.floor(next() * 3) : 0;
      const callIds = Array.from({ length: calls }, (_, i) => `c${turn}.${i}`);
      session.append(
        'assistant/message',
        {
          turn,
          step,
          finishReason: calls > 0 ? 'tool-calls' : 'stop',
          message: {
            id: `a${turn}.${step}`,
            role: 'assistant',
            content: [
              { type: 'text', text: `thinking about ${turn}` },
              ...callIds.map((id) => ({
                type: 'tool-call' as const,
                id,
                name: 'work',
                arguments: '{}',
              })),
            ],
            source: model,
          },
        },
        { surfaceOp: 'append', sourceEventSeqs: chunks },
      );
      await durable();
      for (const callId of callIds) {
        const call = session.append('tool/call', {
          turn,
          step,
          callId,
          name: 'work',
          arguments: '{}',
        });
        await durable();
        const text = 'r'.repeat(Math.floor(next() * 4000));
        session.append(
          'tool/result',
          {
            turn,
            step,
            message: {
              id: `r-${callId}`,
              role: 'tool',
              content: [
                { type: 'tool-result', toolCallId: callId, content: [{ type: 'text', text }] },
              ],
            },
          },
          { surfaceOp: 'append', sourceEventSeqs: [call.seq] },
        );
        await durable();
      }
      session.append('step/end', { turn, step });
      if (calls === 0) break;
    }
    session.append('turn/end', { turn, reason: { kind: 'completed' } });
    if (next() < 0.2) compact(session, turn);
    await durable();
  }
}

/** Replaces the whole surface with one summary (between turns, so every tool pair is inside). */
function compact(session: Session, turn: number): void {
  const seqs = session.surface.seqs;
  const first = seqs[0];
  const last = seqs.at(-1);
  if (first === undefined || last === undefined || seqs.length < 3) return;
  session.append(
    'user/message',
    {
      id: `summary-${turn}`,
      role: 'user',
      content: [{ type: 'text', text: `summary up to turn ${turn}` }],
      source: { kind: 'compaction', id: `k${turn}` },
    },
    { surfaceOp: { op: 'replace', start: first, end: last }, sourceEventSeqs: [...seqs] },
  );
}
