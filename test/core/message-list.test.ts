/**
 * `deriveMessageList()`: the derived messages as a list taken without a copy, which no later
 * append or replace changes, read like an array's `at` and `slice`. The work a derive does is
 * counted through the one projection every derivation calls.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import * as derive from '../../src/core/derive.js';
import { Session } from '../../src/core/index.js';
import { recordToolTurn, user } from './builders.js';

vi.mock('../../src/core/derive.js', async (importOriginal) => {
  const original = await importOriginal<typeof import('../../src/core/derive.js')>();
  return { ...original, deriveEventMessage: vi.fn(original.deriveEventMessage) };
});

const projections = vi.mocked(derive.deriveEventMessage);

afterEach(() => {
  projections.mockClear();
});

/** A session whose surface holds `count` user messages. */
function sessionOf(count: number): Session {
  const session = Session.create();
  for (let i = 0; i < count; i++) {
    session.append('user/message', user(`u${i}`, `message ${i}`), { surfaceOp: 'append' });
  }
  return session;
}

const ids = (messages: Iterable<{ readonly id: string }>): string[] =>
  Array.from(messages, (message) => message.id);

describe('deriveMessageList', () => {
  it('holds the messages of deriveMessages, the same objects in the same order', () => {
    const session = Session.create();
    recordToolTurn(session, 1);
    recordToolTurn(session, 2);
    const list = session.deriveMessageList();
    expect([...list]).toEqual([...session.deriveMessages()]);
    expect([...list].every((message, i) => message === session.deriveMessages()[i])).toBe(true);
  });

  it('keeps a list unchanged after later appends and replacements', () => {
    const session = sessionOf(4);
    const before = session.deriveMessageList();
    session.append('user/message', user('u4', 'later'), { surfaceOp: 'append' });
    session.append('user/message', user('s', 'summary of u1..u3'), {
      surfaceOp: { op: 'replace', start: 1, end: 3 },
      sourceEventSeqs: [1, 2, 3],
    });
    session.append('user/message', user('u5', 'after the summary'), { surfaceOp: 'append' });
    expect(ids(before)).toEqual(['u0', 'u1', 'u2', 'u3']);
    expect(before.length).toBe(4);
    expect(ids(session.deriveMessageList())).toEqual(['u0', 's', 'u4', 'u5']);
  });

  it('returns the same list until the messages change', () => {
    const session = sessionOf(2);
    const list = session.deriveMessageList();
    session.append('app/note', { text: 'not on the surface' });
    expect(session.deriveMessageList()).toBe(list);
    session.append('user/message', user('u2', 'new'), { surfaceOp: 'append' });
    expect(session.deriveMessageList()).not.toBe(list);
  });

  it('reads at and slice as an array does, negative, fractional and out-of-range bounds included', () => {
    const session = sessionOf(5);
    const list = session.deriveMessageList();
    const array = session.deriveMessages();
    for (const index of [0, 2, 4, 5, -1, -5, -6, 1.7, -1.2, Number.NaN, Infinity]) {
      expect(list.at(index), `at(${index})`).toBe(array.at(index));
    }
    const bounds = [undefined, 0, 1, 3, 5, 9, -1, -2, -9, 2.5, Number.NaN];
    for (const start of bounds) {
      for (const end of bounds) {
        expect(list.slice(start, end), `slice(${start}, ${end})`).toEqual(array.slice(start, end));
      }
    }
  });

  it('cannot be changed by its reader', () => {
    const session = sessionOf(2);
    const list = session.deriveMessageList();
    expect(Object.isFrozen(list)).toBe(true);
    expect(Object.isFrozen(list.slice())).toBe(true);
    expect(() => {
      (list as { length: number }).length = 0;
    }).toThrow(TypeError);
    expect(ids(list)).toEqual(['u0', 'u1']);
  });

  it('projects only the new event when a list is taken after one append, at 20,000 messages', () => {
    const session = sessionOf(20_000);
    session.deriveMessageList();
    projections.mockClear();
    session.append('user/message', user('last', 'one more'), { surfaceOp: 'append' });
    const list = session.deriveMessageList();
    expect(projections).toHaveBeenCalledTimes(1);
    expect(list.length).toBe(20_001);
    expect(list.at(-1)?.id).toBe('last');
  });
});
