/**
 * Random agent sessions with tool round trips, pruned and compacted at random points. Whatever
 * the order, afterwards: the derived messages pair every tool call with a result, the raw log
 * still holds every original event, the transcript still shows everything the user saw, and what
 * the model saw before the rewrite is unchanged.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { runTurn } from '../../src/agent/index.js';
import { compact, pruneToolResults } from '../../src/compaction/index.js';
import { checkInvariants, type Message, Session, type SessionEvent } from '../../src/core/index.js';
import { type ScriptedResponse, scriptedModel } from '../../src/testing/index.js';
import { fetchTool, isSummaryRequest } from './helpers.js';

type Command =
  | { kind: 'turn'; calls: number[] }
  | { kind: 'prune'; keepRecentTurns: number; minChars: number }
  | { kind: 'compact'; keepRecentTokens: number; summaryWords: number };

const command: fc.Arbitrary<Command> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('turn' as const),
      calls: fc.array(fc.integer({ min: 10, max: 4000 }), { maxLength: 3 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('prune' as const),
      keepRecentTurns: fc.integer({ min: 0, max: 3 }),
      minChars: fc.integer({ min: 0, max: 3000 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('compact' as const),
      keepRecentTokens: fc.integer({ min: 0, max: 3000 }),
      summaryWords: fc.integer({ min: 1, max: 400 }),
    }),
  },
);

interface Snapshot {
  readonly events: readonly SessionEvent[];
  readonly messages: readonly Message[];
  readonly transcriptSeqs: readonly number[];
}

function snapshot(session: Session): Snapshot {
  return {
    events: session.events,
    messages: session.deriveMessages(),
    transcriptSeqs: session
      .transcript()
      .filter((entry) => entry.kind === 'message')
      .map((entry) => entry.seq),
  };
}

function checkRewrite(session: Session, before: Snapshot): void {
  expect(checkInvariants(session.events, { requireClosed: true })).toEqual([]);
  const events = session.events;
  for (const [index, event] of before.events.entries()) expect(events[index]).toBe(event);
  const transcript = new Set(
    session
      .transcript()
      .filter((entry) => entry.kind === 'message')
      .map((entry) => entry.seq),
  );
  for (const seq of before.transcriptSeqs) expect(transcript.has(seq)).toBe(true);
  if (before.events.length > 0) {
    expect(session.messagesAt(before.events.length - 1)).toEqual(before.messages);
  }
}

describe('pruning and compaction at random points', () => {
  it('keep tool pairing, the raw log, the transcript and earlier views intact', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(command, { minLength: 1, maxLength: 14 }), async (commands) => {
        const session = Session.create();
        let plan: number[] = [];
        let summary = 'summary';
        const model = scriptedModel(
          [
            (request, call): ScriptedResponse => {
              if (isSummaryRequest(request)) return { text: summary };
              const last = request.prompt[request.prompt.length - 1];
              if (last?.role === 'tool' || plan.length === 0) return { text: `answer ${call}` };
              const calls = plan.map((size, index) => ({
                name: 'fetch',
                args: { id: `c${call}-${index}`, size },
              }));
              plan = [];
              return { toolCalls: calls };
            },
          ],
          { loop: true },
        );
        let turn = 0;
        for (const next of commands) {
          if (next.kind === 'turn') {
            plan = next.calls;
            turn += 1;
            await runTurn({
              session,
              model,
              tools: [fetchTool],
              system: 'sys',
              input: `turn ${turn}`,
            });
            continue;
          }
          const before = snapshot(session);
          if (next.kind === 'prune') {
            pruneToolResults(session, {
              keepRecentTurns: next.keepRecentTurns,
              minChars: next.minChars,
              headChars: 20,
              tailChars: 10,
            });
          } else {
            summary = 'word '.repeat(next.summaryWords).trim();
            await compact(session, { model, keepRecentTokens: next.keepRecentTokens });
          }
          checkRewrite(session, before);
        }
      }),
      { numRuns: 60 },
    );
  });
});
