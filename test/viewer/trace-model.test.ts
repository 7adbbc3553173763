/**
 * The trace read from a log: calls from their step to their answer with retries and failures,
 * tools from call to result (side by side when they ran so), and a live batch read on from
 * where the last read stopped.
 */
import { describe, expect, it } from 'vitest';
import { Session } from '../../src/core/index.js';
import { Trace, type TraceCall, type TraceTool } from '../../src/viewer/page/trace-model.js';
import { AT, retriedSession } from './trace-sessions.js';

describe('the trace of a log', () => {
  const session = retriedSession();
  const trace = new Trace();
  trace.update(session);
  const [first, second] = trace.groups;
  const start = session.event(0)?.time ?? 0;

  it('groups the calls and tools by turn, with how each turn ended', () => {
    expect(trace.groups.map((group) => group.turn)).toEqual([1, 2]);
    expect(first?.spans.map((span) => span.kind)).toEqual(['call', 'tool', 'tool']);
    expect(first?.ended).toBe('completed');
    expect(second?.ended).toBe('error: rate_limit_error: Rate limited');
    expect(trace.calls).toBe(2);
  });

  it('times a call from its step to its answer, with its first part, retries and finish', () => {
    const call = first?.spans[0] as TraceCall;
    expect([call.start, call.firstPart ?? 0, call.end].map((time) => time - start)).toEqual([
      AT.call,
      AT.firstPart,
      AT.answer,
    ]);
    expect(call.retries).toEqual([
      { seq: 4, attempt: 1, delayMs: 500, error: 'overloaded_error: Overloaded' },
    ]);
    expect(call.finishReason).toBe('tool-calls');
    expect(call.header?.model).toBe('claude-sonnet-4-5');
    expect(call.parts).toEqual([5]);
    expect(call.error).toBeUndefined();
  });

  it('times each tool from its call to its result, the failed one with its error', () => {
    const [a, b] = (first?.spans.slice(1) ?? []) as TraceTool[];
    expect([a?.start, a?.end].map((time) => (time ?? 0) - start)).toEqual([AT.toolA, AT.resultA]);
    expect([b?.start, b?.end].map((time) => (time ?? 0) - start)).toEqual([AT.toolB, AT.resultB]);
    expect(a?.error).toBe('ENOENT: a.txt is missing');
    expect(b?.error).toBeUndefined();
  });

  it('ends a call the turn failed in at the failure, with its error', () => {
    const failed = second?.spans[0] as TraceCall;
    expect(failed.end - failed.start).toBe(AT.failedEnd - AT.failedCall);
    expect(failed.answerSeq).toBeUndefined();
    expect(failed.error).toBe('error: rate_limit_error: Rate limited');
  });

  it('reads a live batch on from where it stopped, and says which group changed', () => {
    const growing = Session.create({
      id: 'growing',
      seed: session.events.slice(0, 10),
      seedMode: 'parsed',
    });
    const live = new Trace();
    expect(live.update(growing)).toBe(0);
    // Up to tool b's result: tool a still runs.
    expect(live.groups[0]?.spans).toHaveLength(3);
    expect((live.groups[0]?.spans[1] as TraceTool | undefined)?.resultSeq).toBeUndefined();
    const append = growing.append.bind(growing) as (
      type: string,
      data: unknown,
      intent: object,
    ) => unknown;
    for (const event of session.events.slice(10)) {
      append(event.type, event.data, {
        ...(event.surfaceOp === undefined ? {} : { surfaceOp: event.surfaceOp }),
        ...(event.sourceEventSeqs === undefined ? {} : { sourceEventSeqs: event.sourceEventSeqs }),
      });
    }
    expect(live.update(growing)).toBe(0);
    expect(live.groups.map((group) => group.spans.length)).toEqual([3, 1]);
    expect(live.update(growing)).toBe(2);
  });
});
