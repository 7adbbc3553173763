/**
 * The surface rules of DESIGN §4 / the session surface RFC, one behaviour per test.
 */
import { describe, expect, it } from 'vitest';
import {
  deriveEventMessage,
  foldSurface,
  isSurfaceEligibleType,
  Session,
  type SessionValidationCode,
  SessionValidationError,
  type SurfaceIntent,
} from '../../src/core/index.js';
import { assistant, context, event, toolResult, user, withHole } from './builders.js';

function expectCode(action: () => unknown, code: SessionValidationCode): SessionValidationError {
  try {
    action();
  } catch (error) {
    expect(error).toBeInstanceOf(SessionValidationError);
    expect((error as SessionValidationError).code).toBe(code);
    return error as SessionValidationError;
  }
  throw new Error(`expected ${code}, but nothing was thrown`);
}

/** A session whose surface is the user messages u0..u{n-1} at seqs 0..n-1. */
function sessionWithUsers(count: number): Session {
  const session = Session.create({ id: 'surface' });
  for (let i = 0; i < count; i++) {
    session.append('user/message', user(`u${i}`, `message ${i}`), { surfaceOp: 'append' });
  }
  return session;
}

function summary(
  id: string,
  start: number,
  end: number,
  sources: number[],
): [UserMessageArgs, SurfaceIntent] {
  return [
    user(id, `summary of ${start}..${end}`),
    { surfaceOp: { op: 'replace', start, end }, sourceEventSeqs: sources },
  ];
}
type UserMessageArgs = ReturnType<typeof user>;

describe('surface eligibility (rule 1)', () => {
  it('has exactly four surface-eligible types', () => {
    for (const type of ['user/message', 'context/message', 'assistant/message', 'tool/result']) {
      expect(isSurfaceEligibleType(type)).toBe(true);
    }
    for (const type of [
      'assistant/chunk',
      'tool/call',
      'turn/start',
      'request/header',
      'app/note',
    ]) {
      expect(isSurfaceEligibleType(type)).toBe(false);
    }
  });

  it('rejects a surface-eligible event without a surfaceOp, even through a widened type', () => {
    const session = Session.create();
    const type: string = 'user/message';
    const error = expectCode(() => session.append(type, user('u', 'hi')), 'SURFACE_OP_REQUIRED');
    expect(error.message).toContain('user/message');
    expect(error.seq).toBe(0);
    expect(session.seq).toBe(0);
  });

  it('rejects a surfaceOp on an event that is not surface-eligible', () => {
    const session = Session.create();
    const type: string = 'assistant/chunk';
    const intent = { surfaceOp: 'append' } as const;
    expectCode(
      () => session.append(type, { turn: 1, step: 1, chunk: { type: 'text-delta' } }, intent),
      'SURFACE_OP_FORBIDDEN',
    );
  });
});

describe('surfaceOp shapes (rule 2)', () => {
  const invalid: [string, unknown][] = [
    ['a string other than append', 'prepend'],
    ['null', null],
    ['an array', ['replace', 0, 0]],
    ['a replace with an extra key', { op: 'replace', start: 0, end: 0, note: 'x' }],
    ['a replace without end', { op: 'replace', start: 0 }],
    ['another op', { op: 'insert', start: 0, end: 0 }],
    ['a fractional start', { op: 'replace', start: 0.5, end: 0 }],
    ['a negative end', { op: 'replace', start: 0, end: -1 }],
    ['a string seq', { op: 'replace', start: '0', end: 0 }],
  ];
  for (const [name, surfaceOp] of invalid) {
    it(`rejects ${name}`, () => {
      const session = sessionWithUsers(1);
      const widened = session.append as (type: string, data: unknown, intent?: unknown) => unknown;
      expectCode(
        () => widened.call(session, 'user/message', user('x', 'x'), { surfaceOp }),
        'INVALID_SURFACE_OP',
      );
      expect(session.seq).toBe(1);
    });
  }
});

describe('append (rule 3)', () => {
  it('puts each appended seq at the tail and skips log-only events', () => {
    const session = Session.create();
    session.append('user/message', user('u0', 'a'), { surfaceOp: 'append' });
    session.append('turn/start', { turn: 1 });
    session.append('context/message', context('c0', 'b'), { surfaceOp: 'append' });
    expect(session.surface.seqs).toEqual([0, 2]);
    expect(session.surface.replaceGeneration).toBe(0);
  });
});

describe('positional, inclusive replace (rule 4)', () => {
  it('replaces a range at the head, in the middle and a single entry, keeping the rest in order', () => {
    const session = sessionWithUsers(6);
    session.append('user/message', ...summary('s1', 0, 1, [0, 1]));
    expect(session.surface.seqs).toEqual([6, 2, 3, 4, 5]);
    session.append('user/message', ...summary('s2', 3, 4, [3, 4]));
    expect(session.surface.seqs).toEqual([6, 2, 7, 5]);
    session.append('user/message', ...summary('s3', 5, 5, [5]));
    expect(session.surface.seqs).toEqual([6, 2, 7, 8]);
    expect(session.surface.replaceGeneration).toBe(3);
  });

  it('orders endpoints by surface position, not by seq, once a replace has reordered the surface', () => {
    const session = sessionWithUsers(3);
    session.append('user/message', ...summary('s', 0, 1, [0, 1])); // surface [3, 2]
    expect(session.surface.seqs).toEqual([3, 2]);
    // start 3 > end 2 numerically, but 3 comes first on the surface: valid.
    session.append('user/message', ...summary('t', 3, 2, [3, 2]));
    expect(session.surface.seqs).toEqual([4]);
  });

  it('rejects a range whose start comes after its end in surface order, although start < end by seq', () => {
    const session = sessionWithUsers(3);
    session.append('user/message', ...summary('s', 0, 1, [0, 1])); // surface [3, 2]
    const error = expectCode(
      () => session.append('user/message', ...summary('t', 2, 3, [2, 3])),
      'REPLACE_RANGE_REVERSED',
    );
    expect(error.message).toContain('position');
  });

  it('supports nested replaces: a replacement replaced again', () => {
    const session = sessionWithUsers(4);
    session.append('user/message', ...summary('s1', 0, 1, [0, 1])); // [4, 2, 3]
    session.append('user/message', ...summary('s2', 4, 2, [4, 2])); // [5, 3]
    expect(session.surface.seqs).toEqual([5, 3]);
    expect(session.deriveMessages().map((message) => message.id)).toEqual(['s2', 'u3']);
    expect(foldSurface(session.events).replacements.map((r) => r.shadowedSeqs)).toEqual([
      [0, 1],
      [4, 2],
    ]);
  });

  it('rejects endpoints that are not on the surface: unknown, shadowed, or log-only', () => {
    const session = sessionWithUsers(3);
    session.append('turn/start', { turn: 1 }); // seq 3, log-only
    session.append('user/message', ...summary('s', 0, 0, [0])); // seq 4 shadows 0
    expectCode(
      () => session.append('user/message', ...summary('a', 0, 1, [0, 1])),
      'REPLACE_ENDPOINT_NOT_ON_SURFACE',
    );
    expectCode(
      () => session.append('user/message', ...summary('b', 1, 3, [1, 2, 3])),
      'REPLACE_ENDPOINT_NOT_ON_SURFACE',
    );
    const error = expectCode(
      () => session.append('user/message', ...summary('c', 1, 99, [1, 2])),
      'REPLACE_ENDPOINT_NOT_ON_SURFACE',
    );
    expect(error.message).toContain('end seq 99');
  });

  it('lets any surface-eligible type replace, and shadowed events stay in the log', () => {
    const session = sessionWithUsers(2);
    session.append('assistant/message', assistant('a', 'recap'), {
      surfaceOp: { op: 'replace', start: 0, end: 1 },
      sourceEventSeqs: [0, 1],
    });
    expect(session.surface.seqs).toEqual([2]);
    expect(session.events).toHaveLength(3);
    expect(session.surface.has(0)).toBe(false);
    expect(session.surface.has(2)).toBe(true);
  });
});

describe('provenance (rule 5)', () => {
  it('accepts absent provenance on appends and [] on assistant/message only', () => {
    const session = Session.create();
    session.append('user/message', user('u', 'hi'), { surfaceOp: 'append' });
    const empty = session.append('assistant/message', assistant('a', ''), {
      surfaceOp: 'append',
      sourceEventSeqs: [],
    });
    expect(empty.sourceEventSeqs).toEqual([]);
    expectCode(
      () =>
        session.append('user/message', user('u2', 'x'), {
          surfaceOp: 'append',
          sourceEventSeqs: [],
        }),
      'EMPTY_SOURCE_EVENT_SEQS',
    );
    expectCode(
      () => session.append('app/note', { n: 1 }, { sourceEventSeqs: [] }),
      'EMPTY_SOURCE_EVENT_SEQS',
    );
  });

  it('allows provenance on log-only events', () => {
    const session = sessionWithUsers(2);
    const event = session.append('compaction/end', { id: 'c1' }, { sourceEventSeqs: [0, 1] });
    expect(event.sourceEventSeqs).toEqual([0, 1]);
  });

  const bad: [string, unknown][] = [
    ['not an array', 3],
    ['a duplicate', [0, 0]],
    ['a self reference', [2]],
    ['a forward reference', [5]],
    ['a negative seq', [-1]],
    ['a fractional seq', [0.5]],
    ['a string seq', ['0']],
    ['a sparse array', withHole(3)],
  ];
  for (const [name, sources] of bad) {
    it(`rejects ${name}`, () => {
      const session = sessionWithUsers(2);
      const widened = session.append as (type: string, data: unknown, intent?: unknown) => unknown;
      expectCode(
        () =>
          widened.call(session, 'user/message', user('x', 'x'), {
            surfaceOp: 'append',
            sourceEventSeqs: sources,
          }),
        'INVALID_SOURCE_EVENT_SEQS',
      );
      expect(session.seq).toBe(2);
    });
  }

  it('requires a replace to cite every shadowed seq and names the missing ones', () => {
    const session = sessionWithUsers(4);
    const error = expectCode(
      () => session.append('user/message', ...summary('s', 0, 3, [0, 2])),
      'REPLACE_SOURCES_INCOMPLETE',
    );
    expect(error.message).toContain('missing 1, 3');
    expectCode(
      () =>
        session.append('user/message', user('s', 'x'), {
          surfaceOp: { op: 'replace', start: 0, end: 0 },
        }),
      'REPLACE_SOURCES_INCOMPLETE',
    );
  });

  it('accepts a replace that cites more than it shadows (such as its compaction/start)', () => {
    const session = sessionWithUsers(2);
    const start = session.append('compaction/start', { id: 'c1' });
    session.append('user/message', ...summary('s', 0, 1, [start.seq, 0, 1]));
    expect(session.surface.seqs).toEqual([3]);
  });

  it('snapshots the caller provenance and replace op, so later mutation changes nothing', () => {
    const session = sessionWithUsers(2);
    const sources = [0, 1];
    const op = { op: 'replace' as const, start: 0, end: 1 };
    const event = session.append('user/message', user('s', 'x'), {
      surfaceOp: op,
      sourceEventSeqs: sources,
    });
    sources.push(99);
    (op as { start: number }).start = 1;
    expect(event.sourceEventSeqs).toEqual([0, 1]);
    expect(event.surfaceOp).toEqual({ op: 'replace', start: 0, end: 1 });
  });
});

describe('tool/result rewrite (rule 6)', () => {
  function withResult(): Session {
    const session = Session.create();
    session.append('user/message', user('u', 'go'), { surfaceOp: 'append' }); // 0
    session.append('assistant/message', assistant('a', '', [{ id: 'c1', name: 'ls' }]), {
      surfaceOp: 'append',
    }); // 1
    session.append('tool/result', toolResult('r1', 'c1', 'a'.repeat(1000)), {
      surfaceOp: 'append',
    }); // 2
    session.append('user/message', user('u2', 'next'), { surfaceOp: 'append' }); // 3
    return session;
  }
  const rewrite = (start: number, end: number, sources: number[]): SurfaceIntent => ({
    surfaceOp: { op: 'replace', start, end },
    sourceEventSeqs: sources,
  });

  it('accepts a rewrite that changes only the result content', () => {
    const session = withResult();
    session.append('tool/result', toolResult('r1', 'c1', '[pruned 990 chars]'), rewrite(2, 2, [2]));
    expect(session.surface.seqs).toEqual([0, 1, 4, 3]);
    const last = session.deriveMessages()[2];
    expect(last?.role).toBe('tool');
  });

  it('rejects a rewrite that spans more than one entry', () => {
    const session = withResult();
    expectCode(
      () => session.append('tool/result', toolResult('r1', 'c1', 'x'), rewrite(2, 3, [2, 3])),
      'TOOL_RESULT_REWRITE_INVALID',
    );
  });

  it('rejects a rewrite that targets something other than a tool/result', () => {
    const session = withResult();
    expectCode(
      () => session.append('tool/result', toolResult('r1', 'c1', 'x'), rewrite(3, 3, [3])),
      'TOOL_RESULT_REWRITE_INVALID',
    );
  });

  const drifts: [string, (data: ReturnType<typeof toolResult>) => unknown][] = [
    ['the message id', (d) => ({ ...d, message: { ...d.message, id: 'other' } })],
    ['the call id', (d) => toolResult('r1', 'c2', 'x', d)],
    [
      'the error flag',
      (d) => ({
        ...d,
        message: { ...d.message, content: [{ ...d.message.content[0], isError: true }] },
      }),
    ],
    ['the step', (d) => ({ ...d, step: 2 })],
    ['an added error field', (d) => ({ ...d, error: { code: 'X', message: 'x' } })],
    ['an added extra field', (d) => ({ ...d, meta: { pruned: true } })],
  ];
  for (const [field, change] of drifts) {
    it(`rejects a rewrite that changes ${field}`, () => {
      const session = withResult();
      const data = change(toolResult('r1', 'c1', 'short'));
      const widened = session.append as (type: string, data: unknown, intent?: unknown) => unknown;
      const error = expectCode(
        () => widened.call(session, 'tool/result', data, rewrite(2, 2, [2])),
        'TOOL_RESULT_REWRITE_INVALID',
      );
      expect(error.message).toContain('only the result content');
    });
  }
});

describe('deriveMessages over the surface (rule 10)', () => {
  it('derives messages in surface order, skipping log-only events and empty assistant messages', () => {
    const session = Session.create();
    session.append('turn/start', { turn: 1 });
    session.append('user/message', user('u', 'q'), { surfaceOp: 'append' });
    session.append('context/message', context('c', 'ctx'), { surfaceOp: 'append' });
    session.append('assistant/chunk', {
      turn: 1,
      step: 1,
      chunk: { type: 'text-delta', delta: 'x' },
    });
    session.append('assistant/message', assistant('empty', ''), {
      surfaceOp: 'append',
      sourceEventSeqs: [],
    });
    session.append('assistant/message', assistant('a', 'answer'), {
      surfaceOp: 'append',
      sourceEventSeqs: [3],
    });
    expect(session.deriveMessages().map((message) => message.id)).toEqual(['u', 'c', 'a']);
    expect(deriveEventMessage(session.events[4] as (typeof session.events)[number])).toBeNull();
    expect(deriveEventMessage(session.events[0] as (typeof session.events)[number])).toBeNull();
  });

  it('returns the events own frozen messages, the same array until the surface changes', () => {
    const session = sessionWithUsers(2);
    const first = session.deriveMessages();
    expect(session.deriveMessages()).toBe(first);
    expect(first[0]).toBe(session.events[0]?.data);
    expect(Object.isFrozen(first)).toBe(true);
    session.append('app/note', { text: 'log-only' });
    expect(session.deriveMessages()).toBe(first);
    session.append('user/message', user('u2', 'x'), { surfaceOp: 'append' });
    expect(session.deriveMessages()).not.toBe(first);
    expect(first).toHaveLength(2);
  });

  it('rebuilds after a replace and grows incrementally otherwise, always equal to a full derivation', () => {
    const session = sessionWithUsers(5);
    const full = (): unknown[] =>
      session.surface.seqs
        .map((seq) =>
          deriveEventMessage(session.event(seq) as NonNullable<ReturnType<typeof session.event>>),
        )
        .filter((message) => message !== null);
    expect(session.deriveMessages()).toEqual(full());
    session.append('user/message', ...summary('s', 1, 3, [1, 2, 3]));
    expect(session.deriveMessages()).toEqual(full());
    session.append('user/message', user('u9', 'tail'), { surfaceOp: 'append' });
    expect(session.deriveMessages()).toEqual(full());
  });

  it('reports tail growth since a cursor, and a reset after a replace', () => {
    const session = sessionWithUsers(3);
    const first = session.deriveMessagesSince();
    expect(first.reset).toBe(true);
    expect(first.messages).toHaveLength(3);
    session.append('user/message', user('u3', 'x'), { surfaceOp: 'append' });
    const second = session.deriveMessagesSince(first.cursor);
    expect(second.reset).toBe(false);
    expect(second.messages.map((message) => message.id)).toEqual(['u3']);
    session.append('user/message', ...summary('s', 0, 1, [0, 1]));
    const third = session.deriveMessagesSince(second.cursor);
    expect(third.reset).toBe(true);
    expect(third.messages.map((message) => message.id)).toEqual(['s', 'u2', 'u3']);
  });
});

describe('foldSurface and the incremental manager (rule 9)', () => {
  it('agree on every prefix of a log with nested replaces', () => {
    const session = sessionWithUsers(5);
    session.append('user/message', ...summary('s1', 1, 2, [1, 2]));
    session.append('turn/start', { turn: 1 });
    session.append('user/message', ...summary('s2', 0, 5, [0, 5]));
    session.append('user/message', user('u9', 'x'), { surfaceOp: 'append' });
    const events = session.events;
    for (let end = 0; end <= events.length; end++) {
      const prefix = events.slice(0, end);
      const replayed = Session.create({ seed: prefix });
      expect(foldSurface(prefix).seqs).toEqual(replayed.surface.seqs);
      expect(foldSurface(prefix).replaceGeneration).toBe(replayed.surface.replaceGeneration);
    }
    expect(foldSurface(events).seqs).toEqual(session.surface.seqs);
  });

  it('throws the same error from a fold and from a seed', () => {
    const session = sessionWithUsers(3);
    const log: unknown[] = JSON.parse(JSON.stringify(session.events));
    log.push(
      event(3, 'user/message', user('s', 'x'), {
        time: 1,
        surfaceOp: { op: 'replace', start: 2, end: 0 },
        sourceEventSeqs: [0, 1, 2],
      }),
    );
    const fromFold = expectCode(() => foldSurface(log), 'REPLACE_RANGE_REVERSED');
    const fromSeed = expectCode(() => Session.create({ seed: log }), 'REPLACE_RANGE_REVERSED');
    expect(fromFold.message).toBe(fromSeed.message);
    expect(fromSeed.index).toBe(3);
  });

  it('neither copies nor freezes the folded input', () => {
    const log = JSON.parse(JSON.stringify(sessionWithUsers(2).events)) as object[];
    foldSurface(log);
    expect(Object.isFrozen(log[0])).toBe(false);
  });

  it('offers one stable read-only surface view per session', () => {
    const session = sessionWithUsers(3);
    const surface = session.surface;
    expect(session.surface).toBe(surface);
    expect(surface.size).toBe(3);
    expect(surface.at(-1)).toBe(2);
    expect(surface.indexOf(1)).toBe(1);
    expect(surface.indexOf(42)).toBe(-1);
    expect(surface.has(1.5)).toBe(false);
    expect(() => (surface.seqs as number[]).push(9)).toThrow(TypeError);
  });
});
