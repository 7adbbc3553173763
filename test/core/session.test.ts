/**
 * The Session: atomic validation, immutability, seeding, subscribers, time travel and the
 * transcript.
 */
import { describe, expect, it } from 'vitest';
import {
  InvalidArgumentError,
  type Message,
  PalimpsestError,
  SESSION_FORMAT_VERSION,
  Session,
  type SessionEvent,
  type SessionValidationCode,
  SessionValidationError,
} from '../../src/core/index.js';
import {
  event,
  recordToolTurn,
  roundTrip,
  tickingClock,
  toolResult,
  user,
  withHole,
} from './builders.js';

function captureError(action: () => unknown): SessionValidationError {
  try {
    action();
  } catch (error) {
    if (error instanceof SessionValidationError) return error;
    throw error;
  }
  throw new Error('expected a SessionValidationError');
}

function stateOf(session: Session): unknown {
  return {
    seq: session.seq,
    events: session.events.length,
    surface: [...session.surface.seqs],
    generation: session.surface.replaceGeneration,
    messages: session.deriveMessages().map((message: Message) => message.id),
  };
}

describe('Session.create', () => {
  it('synthesises a header with the format version, id and creation time', () => {
    const session = Session.create({ id: 'demo', clock: () => 42 });
    expect(session.id).toBe('demo');
    expect(session.header).toEqual({ version: SESSION_FORMAT_VERSION, id: 'demo', createdAt: 42 });
    expect(Object.isFrozen(session.header)).toBe(true);
    expect(session.seq).toBe(0);
    expect(session.events).toEqual([]);
  });

  it('generates a random id when none is given', () => {
    expect(Session.create().id).not.toBe(Session.create().id);
  });

  it('takes the id from a supplied header and refuses a header for another id', () => {
    const header = { version: 1 as const, id: 'h1', createdAt: 5, metadata: { title: 'x' } };
    expect(Session.create({ header }).id).toBe('h1');
    const error = captureError(() => Session.create({ id: 'other', header }));
    expect(error.code).toBe('INVALID_HEADER');
  });

  it('refuses headers of another format version, saying which side is newer', () => {
    const newer = captureError(() =>
      Session.create({ header: { version: 2, id: 'x', createdAt: 0 } as never }),
    );
    expect(newer.message).toContain('upgrade palimpsest');
    const older = captureError(() =>
      Session.create({ header: { version: 0, id: 'x', createdAt: 0 } as never }),
    );
    expect(older.message).toContain('older than any supported format');
  });

  it('refuses malformed headers', () => {
    for (const header of [
      { version: 1, id: '', createdAt: 0 },
      { version: 1, id: 'x', createdAt: 1.5 },
      { version: 1, id: 'x', createdAt: 0, seedLength: -1 },
      { version: 1, id: 'x', createdAt: 0, parentSession: 3 },
      { version: 1, id: 'x', createdAt: 0, metadata: [] },
      { version: 1, id: 'x', createdAt: 0, extra: true },
      { version: '0', id: 'x', createdAt: 0 },
    ]) {
      expect(captureError(() => Session.create({ header: header as never })).code).toBe(
        'INVALID_HEADER',
      );
    }
  });
});

describe('append', () => {
  it('returns the frozen event with contiguous seqs and the clock time', () => {
    const session = Session.create({
      header: { version: 1, id: 't', createdAt: 0 },
      clock: tickingClock(1000),
    });
    const first = session.append('turn/start', { turn: 1 });
    const second = session.append('app/note', { text: 'hello' });
    expect(first).toEqual(event(0, 'turn/start', { turn: 1 }, { time: 1000 }));
    expect(second.seq).toBe(1);
    expect(session.seq).toBe(2);
    expect(session.event(1)).toBe(second);
  });

  it('snapshots data: later changes by the caller are invisible', () => {
    const session = Session.create();
    const data = { items: [1, 2], nested: { a: 'b' } };
    const event = session.append('app/note', data);
    data.items.push(3);
    data.nested.a = 'changed';
    expect(event.data).toEqual({ items: [1, 2], nested: { a: 'b' } });
  });

  it('deep-freezes events and messages: mutation throws in strict mode', () => {
    const session = Session.create();
    const event = session.append('user/message', user('u', 'hi'), { surfaceOp: 'append' });
    expect(() => {
      (event as { seq: number }).seq = 9;
    }).toThrow(TypeError);
    const message = session.deriveMessages()[0] as Message;
    expect(() => {
      (message.content as unknown[]).push({ type: 'text', text: 'x' });
    }).toThrow(TypeError);
    const block = message.content[0] as { text: string };
    expect(() => {
      block.text = 'changed';
    }).toThrow(TypeError);
  });

  it('keeps events snapshots that never grow', () => {
    const session = Session.create();
    session.append('app/a', 1);
    const snapshot = session.events;
    session.append('app/b', 2);
    expect(snapshot).toHaveLength(1);
    expect(session.events).toHaveLength(2);
    expect(Object.isFrozen(snapshot)).toBe(true);
    expect(session.events).toBe(session.events);
  });

  it('leaves log, surface, generation, messages and seq exactly as before when it rejects', () => {
    const session = Session.create();
    recordToolTurn(session, 1);
    session.append('user/message', user('s', 'summary'), {
      surfaceOp: { op: 'replace', start: 1, end: 4 },
      sourceEventSeqs: [1, 4],
    });
    const before = stateOf(session);
    const derived = session.deriveMessages();
    const attempts: (() => unknown)[] = [
      () =>
        session.append('user/message', user('x', 'x'), {
          surfaceOp: { op: 'replace', start: 1, end: 1 },
          sourceEventSeqs: [1],
        }),
      () =>
        session.append('tool/result', toolResult('r', 'c', 'x'), {
          surfaceOp: { op: 'replace', start: 15, end: 15 },
          sourceEventSeqs: [15],
        }),
      () => session.append('app/note', { bad: Number.NaN }),
      () => session.append('Not A Type' as 'app/x', 1),
    ];
    for (const attempt of attempts) {
      expect(attempt).toThrow(SessionValidationError);
      expect(stateOf(session)).toEqual(before);
    }
    expect(session.deriveMessages()).toBe(derived);
  });

  it('refuses a clock that returns something other than integer ms, without appending', () => {
    let value = 1.5;
    const session = Session.create({
      id: 'c',
      header: { version: 1, id: 'c', createdAt: 0 },
      clock: () => value,
    });
    expect(captureError(() => session.append('app/a', 1)).code).toBe('INVALID_TIME');
    expect(session.seq).toBe(0);
    value = 7;
    expect(session.append('app/a', 1).time).toBe(7);
  });

  it('refuses event types that are not lowercase area/name', () => {
    const session = Session.create();
    for (const type of ['', 'noslash', 'Upper/case', '/lead', 'trail/', 'a//b', 'sp ace/x']) {
      expect(captureError(() => session.append(type as 'app/x', 1)).code).toBe(
        'INVALID_EVENT_TYPE',
      );
    }
    expect(session.append('my-app/tool.v2/done', 1).type).toBe('my-app/tool.v2/done');
  });

  it('refuses intents with unknown fields', () => {
    const session = Session.create();
    const widened = session.append as (type: string, data: unknown, intent?: unknown) => unknown;
    expect(
      captureError(() => widened.call(session, 'app/a', 1, { sourceEventSeq: [0] })).code,
    ).toBe('INVALID_ENVELOPE');
    expect(captureError(() => widened.call(session, 'app/a', 1, 'append')).code).toBe(
      'INVALID_ENVELOPE',
    );
  });

  it('validates the message shape of surface events', () => {
    const session = Session.create();
    const widened = session.append as (type: string, data: unknown, intent?: unknown) => unknown;
    const append = { surfaceOp: 'append' };
    const cases: [string, unknown, string][] = [
      ['user/message', { ...user('u', 'x'), role: 'assistant' }, 'data.role'],
      ['user/message', { ...user('u', 'x'), id: '' }, 'data.id'],
      [
        'user/message',
        {
          ...user('u', 'x'),
          content: [{ type: 'tool-call', id: 'c', name: 'n', arguments: '{}' }],
        },
        'data.content[0].type',
      ],
      ['context/message', { ...user('u', 'x'), source: {} }, 'data.source'],
      [
        'assistant/message',
        {
          turn: 1,
          step: 1,
          finishReason: 'stop',
          message: { id: 'a', role: 'assistant', content: [], source: { kind: 'user' } },
        },
        'data.message.source.kind',
      ],
      [
        'assistant/message',
        {
          turn: 1,
          step: 1,
          message: {
            id: 'a',
            role: 'assistant',
            content: [],
            source: { kind: 'model', provider: 'p', model: 'm' },
          },
        },
        'data.finishReason',
      ],
      [
        'tool/result',
        { turn: 1, step: 1, message: { id: 'r', role: 'tool', content: [] } },
        'data.message.content',
      ],
      [
        'tool/result',
        { turn: 'one', step: 1, message: toolResult('r', 'c', 'x').message },
        'data.turn',
      ],
      ['tool/result', { ...toolResult('r', 'c', 'x'), error: 'boom' }, 'data.error'],
      [
        'tool/result',
        {
          turn: 1,
          step: 1,
          message: {
            id: 'r',
            role: 'tool',
            content: [{ type: 'tool-result', toolCallId: 'c', content: [], providerMetadata: 'x' }],
          },
        },
        'data.message.content[0].providerMetadata',
      ],
      [
        'tool/result',
        {
          turn: 1,
          step: 1,
          message: {
            id: 'r',
            role: 'tool',
            content: [
              {
                type: 'tool-result',
                toolCallId: 'c',
                content: [{ type: 'text', text: 'not JSON' }],
                isJson: true,
              },
            ],
          },
        },
        'data.message.content[0].content[0].text',
      ],
      [
        'user/message',
        { ...user('u', 'x'), content: [{ type: 'image', mediaType: 'image/png' }] },
        'data.content[0]',
      ],
    ];
    for (const [type, data, path] of cases) {
      const error = captureError(() => widened.call(session, type, data, append));
      expect(error.code).toBe('INVALID_MESSAGE');
      expect(error.path).toBe(path);
    }
    expect(session.seq).toBe(0);
  });

  it('keeps error messages short even for huge payloads', () => {
    const session = Session.create();
    const huge = 'x'.repeat(100_000);
    const error = captureError(() => session.append(huge as 'app/x', { huge }));
    expect(error.message.length).toBeLessThan(300);
  });

  it('marks its errors so they are recognised across package copies', () => {
    const error = captureError(() =>
      Session.create().append('app/x', { value: undefined } as never),
    );
    expect(PalimpsestError.isInstance(error)).toBe(true);
    expect(PalimpsestError.isInstance(new Error('x'))).toBe(false);
    expect(error.name).toBe('SessionValidationError');
  });
});

describe('appendAdopted', () => {
  it('makes the caller’s object the frozen event data instead of copying it', () => {
    const session = Session.create();
    const data = { turn: 1, step: 1, chunk: { type: 'text-delta', id: 't', delta: 'hi' } };
    const event = session.appendAdopted('assistant/chunk', data);
    expect(event.data).toBe(data);
    expect(Object.isFrozen(data)).toBe(true);
    expect(Object.isFrozen(data.chunk)).toBe(true);
  });

  it('applies the same rules and errors as append, and a refused event changes nothing', () => {
    const session = Session.create();
    session.appendAdopted('note/a', { ok: true });
    const before = session.events;
    expect(() => session.appendAdopted('note/b', { bad: Number.NaN })).toThrowError(
      expect.objectContaining({ code: 'NON_JSON_DATA' }),
    );
    // @ts-expect-error a user/message needs a SurfaceIntent
    expect(() => session.appendAdopted('user/message', user('u', 'hi'))).toThrowError(
      expect.objectContaining({ code: 'SURFACE_OP_REQUIRED' }),
    );
    expect(session.events).toEqual(before);
    expect(session.seq).toBe(1);
  });
});

describe('data shapes of log-only core events', () => {
  const cases: [string, unknown, string][] = [
    ['turn/start', { turn: -1 }, 'data.turn'],
    ['turn/start', null, 'data'],
    ['turn/end', { turn: 1, reason: { kind: 'finished' } }, 'data.reason'],
    ['turn/end', { turn: 1, reason: { kind: 'error' } }, 'data.reason.error'],
    ['step/start', { turn: 1, step: 1.5 }, 'data.step'],
    ['assistant/chunk', { turn: 1, step: 1, chunk: 'text' }, 'data.chunk'],
    [
      'tool/call',
      { turn: 1, step: 1, callId: 'c', name: 'ls', arguments: { path: '.' } },
      'data.arguments',
    ],
    ['tool/call', { turn: 1, step: 1, callId: '', name: 'ls', arguments: '{}' }, 'data.callId'],
    ['request/header', { provider: 'p' }, 'data.model'],
    ['request/header', { provider: 'p', model: 'm', tools: {} }, 'data.tools'],
    ['request/retry', { turn: 1, step: 1, attempt: 0.5, delayMs: 10, error: {} }, 'data.attempt'],
    ['request/retry', { turn: 1, step: 1, attempt: 1, delayMs: -1, error: {} }, 'data.delayMs'],
    ['request/retry', { turn: 1, step: 1, attempt: 1, delayMs: 10, error: 'busy' }, 'data.error'],
    ['compaction/start', {}, 'data.id'],
    ['turn/end', { turn: 1, reason: { kind: 'context-overflow' } }, 'data.reason.error'],
    ['request/overflow', { turn: 1, error: { message: 'too long' } }, 'data.step'],
    ['request/overflow', { turn: 1, step: 1, error: {} }, 'data.error'],
    [
      'queue/steer',
      { id: 'q', role: 'user', content: 'hi', source: { kind: 'user' } },
      'data.content',
    ],
    [
      'queue/follow-up',
      { id: 'q', role: 'assistant', content: [], source: { kind: 'user' } },
      'data.role',
    ],
  ];
  for (const [type, data, path] of cases) {
    it(`refuses ${type} with ${JSON.stringify(data)} at ${path}`, () => {
      const session = Session.create();
      const widened = session.append as (type: string, data: unknown) => unknown;
      const error = captureError(() => widened.call(session, type, data));
      expect(error.code).toBe('INVALID_EVENT_DATA');
      expect(error.path).toBe(path);
      expect(session.seq).toBe(0);
    });
  }

  it('accepts extra fields beyond the ones it checks', () => {
    const session = Session.create();
    const event = session.append('turn/start', { turn: 1, trigger: 'user' } as never);
    expect(event.data).toEqual({ turn: 1, trigger: 'user' });
  });
});

describe('seeding', () => {
  function validLog(): Record<string, unknown>[] {
    const session = Session.create({ clock: tickingClock() });
    recordToolTurn(session, 1);
    recordToolTurn(session, 2);
    return roundTrip(session.events) as Record<string, unknown>[];
  }

  it('replays a valid log to the same surface and messages', () => {
    const original = Session.create({ clock: tickingClock() });
    recordToolTurn(original, 1);
    const replayed = Session.create({ seed: roundTrip(original.events) });
    expect(replayed.events).toEqual(original.events);
    expect(replayed.surface.seqs).toEqual(original.surface.seqs);
    expect(replayed.deriveMessages()).toEqual(original.deriveMessages());
    expect(replayed.seq).toBe(original.seq);
  });

  it('snapshots a borrowed seed and adopts a handed-over one in place', () => {
    const log = validLog();
    const copied = Session.create({ seed: log });
    expect(copied.events[0]).not.toBe(log[0]);
    expect(Object.isFrozen(log[0])).toBe(false);
    const adopted = Session.create({ seed: log, seedMode: 'adopt' });
    expect(adopted.events[0]?.data).toBe(log[0]?.data);
    expect(Object.isFrozen(log[0]?.data)).toBe(true);
  });

  const rejections: [
    string,
    (log: Record<string, unknown>[]) => void,
    SessionValidationCode,
    number,
  ][] = [
    [
      'a surface event without its marker',
      (log) => delete log[1]?.surfaceOp,
      'SURFACE_OP_REQUIRED',
      1,
    ],
    ['a seq gap', (log) => log.splice(3, 1), 'SEQ_NOT_CONTIGUOUS', 3],
    ['a fractional seq', (log) => Object.assign(log[2] ?? {}, { seq: 2.5 }), 'INVALID_ENVELOPE', 2],
    ['a string seq', (log) => Object.assign(log[2] ?? {}, { seq: '2' }), 'INVALID_ENVELOPE', 2],
    ['a fractional time', (log) => Object.assign(log[4] ?? {}, { time: 1.5 }), 'INVALID_TIME', 4],
    [
      'non-JSON data',
      (log) => Object.assign(log[5] ?? {}, { data: { n: Number.POSITIVE_INFINITY } }),
      'NON_JSON_DATA',
      5,
    ],
    ['missing data', (log) => delete log[5]?.data, 'INVALID_ENVELOPE', 5],
    [
      'an unknown envelope key',
      (log) => Object.assign(log[6] ?? {}, { extra: 1 }),
      'INVALID_ENVELOPE',
      6,
    ],
    [
      'provenance citing a later event',
      (log) => Object.assign(log[4] ?? {}, { sourceEventSeqs: [9] }),
      'INVALID_SOURCE_EVENT_SEQS',
      4,
    ],
    [
      'a replace missing a shadowed seq',
      (log) =>
        Object.assign(log[6] ?? {}, {
          surfaceOp: { op: 'replace', start: 1, end: 4 },
          sourceEventSeqs: [1],
        }),
      'REPLACE_SOURCES_INCOMPLETE',
      6,
    ],
    ['a non-object entry', (log) => log.splice(2, 1, null as never), 'INVALID_ENVELOPE', 2],
    [
      'a class-instance entry',
      (log) => log.splice(2, 1, Object.create(log[2] ?? null)),
      'INVALID_ENVELOPE',
      2,
    ],
    ['a -0 seq', (log) => Object.assign(log[0] ?? {}, { seq: -0 }), 'INVALID_ENVELOPE', 0],
  ];
  for (const [name, mutate, code, index] of rejections) {
    it(`rejects the whole seed for ${name}, naming the code and index`, () => {
      const log = validLog();
      mutate(log);
      const error = captureError(() => Session.create({ seed: log }));
      expect(error.code).toBe(code);
      expect(error.index).toBe(index);
      expect(error.message).toContain(`index ${index}`);
    });
  }

  it('re-validates a copy of an admitted event (the admitted mark does not travel with a spread)', () => {
    const session = Session.create();
    const event = session.append('app/x', { ok: true });
    const forged = { ...event, data: { ok: Number.NaN } };
    expect(captureError(() => Session.create({ seed: [forged] })).code).toBe('NON_JSON_DATA');
    expect(Session.create({ seed: [event] }).events[0]).toBe(event);
  });

  it('refuses a seed that is not an array', () => {
    expect(captureError(() => Session.create({ seed: { length: 0 } as never })).code).toBe(
      'INVALID_ENVELOPE',
    );
  });
});

describe('JSON data boundary', () => {
  class Point {
    constructor(readonly x: number) {}
  }
  const cyclic: Record<string, unknown> = {};
  cyclic.self = cyclic;
  const withSymbol = { [Symbol('s')]: 1 };
  const withHidden = Object.defineProperty({}, 'hidden', { value: 1, enumerable: false });
  const cases: [string, unknown, SessionValidationCode, string][] = [
    ['undefined', { a: undefined }, 'NON_JSON_DATA', 'data.a'],
    ['NaN', [1, Number.NaN], 'NON_JSON_DATA', 'data[1]'],
    ['-0', { n: -0 }, 'NON_JSON_DATA', 'data.n'],
    ['Infinity', { n: Number.NEGATIVE_INFINITY }, 'NON_JSON_DATA', 'data.n'],
    ['a function', { f: () => 1 }, 'NON_JSON_DATA', 'data.f'],
    ['a bigint', { b: 1n }, 'NON_JSON_DATA', 'data.b'],
    ['a class instance', { p: new Point(1) }, 'NON_JSON_DATA', 'data.p'],
    ['a Date', { d: new Date(0) }, 'NON_JSON_DATA', 'data.d'],
    ['a Map', new Map(), 'NON_JSON_DATA', 'data'],
    ['a sparse array', withHole(3), 'NON_JSON_DATA', 'data[1]'],
    ['a cycle', cyclic, 'NON_JSON_DATA', 'data'],
    ['a symbol key', withSymbol, 'NON_JSON_DATA', 'data'],
    ['a non-enumerable key', withHidden, 'NON_JSON_DATA', 'data'],
  ];
  for (const [name, data, code, pathPrefix] of cases) {
    it(`rejects ${name} with a typed error and changes nothing`, () => {
      const session = Session.create();
      const error = captureError(() => session.append('app/x', data as never));
      expect(error.code).toBe(code);
      expect(error.path?.startsWith(pathPrefix)).toBe(true);
      expect(session.seq).toBe(0);
    });
  }

  it('keeps a literal __proto__ key as data, never as a prototype', () => {
    const parsed = JSON.parse('{"__proto__": {"polluted": true}, "ok": 1}') as object;
    const session = Session.create();
    const event = session.append('app/x', parsed as never);
    const data = event.data as Record<string, unknown>;
    expect(Object.getPrototypeOf(data)).toBe(Object.prototype);
    expect(Object.keys(data)).toEqual(['__proto__', 'ok']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(JSON.stringify(event.data)).toBe('{"__proto__":{"polluted":true},"ok":1}');
  });

  it('accepts null-prototype objects and reads each getter once', () => {
    let reads = 0;
    const data = Object.create(null) as Record<string, unknown>;
    Object.defineProperty(data, 'value', {
      enumerable: true,
      get: () => {
        reads++;
        return reads;
      },
    });
    const event = Session.create().append('app/x', data as never);
    expect(reads).toBe(1);
    expect(event.data).toEqual({ value: 1 });
  });

  it('rejects deeply nested data with a limit error instead of overflowing the stack', () => {
    let deep: unknown = 0;
    for (let i = 0; i < 100_000; i++) deep = [deep];
    const error = captureError(() => Session.create().append('app/x', deep as never));
    expect(error.code).toBe('DATA_LIMIT_EXCEEDED');
  });

  it('rejects data above the character limit and honours configured limits', () => {
    const session = Session.create({ limits: { maxChars: 1000, maxDepth: 3 } });
    expect(captureError(() => session.append('app/x', { text: 'x'.repeat(2000) })).code).toBe(
      'DATA_LIMIT_EXCEEDED',
    );
    expect(captureError(() => session.append('app/x', [[[[1]]]])).code).toBe('DATA_LIMIT_EXCEEDED');
    expect(session.append('app/x', [[[1]]]).seq).toBe(0);
  });

  it('accepts large but reasonable data, such as a 10 MB tool result', () => {
    const session = Session.create();
    const event = session.append('tool/result', toolResult('r', 'c', 'y'.repeat(10_000_000)), {
      surfaceOp: 'append',
    });
    expect(event.seq).toBe(0);
  });
});

describe('subscribe', () => {
  it('notifies listeners after commit, in order, and stops after unsubscribe', () => {
    const session = Session.create();
    const seen: string[] = [];
    const unsubscribe = session.subscribe((event, source) => {
      seen.push(`${event.seq}:${source.seq}`);
    });
    session.append('app/a', 1);
    unsubscribe();
    session.append('app/b', 2);
    expect(seen).toEqual(['0:1']);
  });

  it('never lets a throwing or rejecting listener undo or block an append', async () => {
    const reported: unknown[] = [];
    const session = Session.create({ onListenerError: (error) => reported.push(error) });
    const later: number[] = [];
    session.subscribe(() => {
      throw new Error('sync boom');
    });
    session.subscribe(async () => {
      throw new Error('async boom');
    });
    session.subscribe((event) => {
      later.push(event.seq);
    });
    const event = session.append('app/a', 1);
    expect(event.seq).toBe(0);
    expect(session.seq).toBe(1);
    expect(later).toEqual([0]);
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(reported.map((error) => (error as Error).message)).toEqual(['sync boom', 'async boom']);
  });

  it('refuses a reentrant append from a listener, without losing the first event', () => {
    const session = Session.create({ onListenerError: () => {} });
    let reentrant: unknown;
    session.subscribe(() => {
      try {
        session.append('app/inner', 1);
      } catch (error) {
        reentrant = error;
      }
    });
    session.append('app/outer', 1);
    expect((reentrant as SessionValidationError).code).toBe('REENTRANT_APPEND');
    expect(session.events.map((event) => event.type)).toEqual(['app/outer']);
    session.append('app/after', 1);
    expect(session.seq).toBe(2);
  });
});

describe('messagesAt', () => {
  it('equals deriveMessages() of a session seeded with events[0..seq] for every seq', () => {
    const session = Session.create({ clock: tickingClock() });
    recordToolTurn(session, 1);
    session.append('user/message', user('s', 'summary'), {
      surfaceOp: { op: 'replace', start: 1, end: 10 },
      sourceEventSeqs: [1, 4, 6, 10],
    });
    recordToolTurn(session, 2);
    session.append('tool/result', toolResult('r2', 'c2', '[pruned]', { turn: 2, step: 1 }), {
      surfaceOp: { op: 'replace', start: 20, end: 20 },
      sourceEventSeqs: [20],
    });
    const events = session.events;
    for (const event of events) {
      const expected = Session.create({ seed: events.slice(0, event.seq + 1) }).deriveMessages();
      expect(session.messagesAt(event.seq)).toEqual(expected);
    }
  });

  it('refuses seqs that are not events of the log', () => {
    const session = Session.create();
    session.append('app/a', 1);
    for (const seq of [-1, 1, 0.5, Number.NaN]) {
      expect(() => session.messagesAt(seq)).toThrow(InvalidArgumentError);
    }
  });
});

describe('transcript', () => {
  it('shows every appended message in log order with markers where history was replaced', () => {
    const session = Session.create({ clock: tickingClock() });
    const turn = recordToolTurn(session, 1);
    const prune = session.append('tool/result', toolResult('r1', 'c1', '[pruned]'), {
      surfaceOp: { op: 'replace', start: turn.result, end: turn.result },
      sourceEventSeqs: [turn.result],
    });
    const compaction = session.append('user/message', user('sum', 'summary of turn 1'), {
      surfaceOp: { op: 'replace', start: turn.user, end: turn.answer },
      sourceEventSeqs: [turn.user, 4, prune.seq, turn.answer],
    });
    const entries = session.transcript();
    expect(entries.map((entry) => `${entry.kind}@${entry.seq}`)).toEqual([
      'message@1',
      'message@4',
      'message@6',
      'message@10',
      `replacement@${prune.seq}`,
      `replacement@${compaction.seq}`,
    ]);
    const original = entries.find((entry) => entry.seq === turn.result);
    expect(original?.onSurface).toBe(false);
    expect(original?.shadowedBy).toBe(prune.seq);
    const marker = entries.at(-1);
    expect(marker?.kind === 'replacement' && marker.shadowedSeqs).toEqual([
      turn.user,
      4,
      prune.seq,
      turn.answer,
    ]);
    expect(marker?.onSurface).toBe(true);
    expect(session.deriveMessages().map((message) => message.id)).toEqual(['sum']);
  });
});

describe('events are plain JSON', () => {
  it('round-trips through JSON.stringify without loss', () => {
    const session = Session.create({ clock: tickingClock() });
    recordToolTurn(session, 1);
    const restored = roundTrip(session.events) as SessionEvent[];
    expect(restored).toEqual(session.events);
  });
});
