/**
 * Fork (DESIGN §5): a new session seeded with a prefix of another.
 */
import { describe, expect, it } from 'vitest';
import { ForkError, forkSession, Session } from '../../src/core/index.js';
import { recordToolTurn, tickingClock, user } from './builders.js';

function twoTurns(): Session {
  const session = Session.create({
    id: 'parent',
    clock: tickingClock(),
    header: { version: 1, id: 'parent', createdAt: 1, metadata: { cwd: '/work' } },
  });
  recordToolTurn(session, 1);
  recordToolTurn(session, 2);
  return session;
}

function forkError(action: () => unknown): ForkError {
  try {
    action();
  } catch (error) {
    if (error instanceof ForkError) return error;
    throw error;
  }
  throw new Error('expected a ForkError');
}

describe('forkSession', () => {
  it('copies the whole log by default and records the lineage in the header', () => {
    const parent = twoTurns();
    const child = forkSession(parent, undefined, { id: 'child', clock: () => 99 });
    expect(child.id).toBe('child');
    expect(child.events).toEqual(parent.events);
    expect(child.header).toEqual({
      version: 1,
      id: 'child',
      createdAt: 99,
      parentSession: 'parent',
      seedLength: parent.seq,
      metadata: { cwd: '/work' },
    });
    expect(child.deriveMessages()).toEqual(parent.deriveMessages());
  });

  it('forks at an inclusive boundary after a closed turn, including log-only events after it', () => {
    const parent = twoTurns();
    const firstTurnEnd = parent.events.findIndex((event) => event.type === 'turn/end');
    parent.append('app/note', { text: 'between turns' });
    const child = forkSession(parent, firstTurnEnd);
    expect(child.seq).toBe(firstTurnEnd + 1);
    expect(child.header.seedLength).toBe(firstTurnEnd + 1);
    expect(child.deriveMessages()).toEqual(parent.messagesAt(firstTurnEnd));
  });

  it('keeps the child independent: appends to either side do not reach the other', () => {
    const parent = twoTurns();
    const child = forkSession(parent);
    child.append('user/message', user('c', 'child only'), { surfaceOp: 'append' });
    parent.append('user/message', user('p', 'parent only'), { surfaceOp: 'append' });
    expect(child.deriveMessages().at(-1)?.id).toBe('c');
    expect(parent.deriveMessages().at(-1)?.id).toBe('p');
  });

  it('forks an empty session into an empty child, but refuses an explicit boundary on it', () => {
    const empty = Session.create();
    expect(forkSession(empty).seq).toBe(0);
    expect(forkError(() => forkSession(empty, 0)).code).toBe('INVALID_BOUNDARY');
  });

  it('refuses boundaries that are not the seq of an event', () => {
    const parent = twoTurns();
    for (const boundary of [-1, 0.5, parent.seq, Number.NaN, Number.MAX_SAFE_INTEGER + 2]) {
      const error = forkError(() => forkSession(parent, boundary));
      expect(error.code).toBe('INVALID_BOUNDARY');
    }
  });

  it('refuses a boundary inside an open turn, naming the turn and where it opened', () => {
    const parent = twoTurns();
    const secondTurnStart =
      parent.events.filter((event) => event.type === 'turn/start')[1]?.seq ?? -1;
    for (const boundary of [secondTurnStart, secondTurnStart + 1, secondTurnStart + 4]) {
      const error = forkError(() => forkSession(parent, boundary));
      expect(error.code).toBe('OPEN_TURN');
      expect(error.boundarySeq).toBe(boundary);
      expect(error.message).toContain(`turn 2, opened at seq ${secondTurnStart}`);
    }
  });

  it('carries compaction replaces in the prefix over to the child', () => {
    const parent = twoTurns();
    parent.append('user/message', user('s', 'summary'), {
      surfaceOp: { op: 'replace', start: 1, end: 10 },
      sourceEventSeqs: [1, 4, 6, 10],
    });
    const child = forkSession(parent);
    expect(child.surface.seqs).toEqual(parent.surface.seqs);
    expect(child.surface.replaceGeneration).toBe(1);
  });

  it('gives the child the parent limits, so it accepts what the parent accepted', () => {
    const parent = Session.create({ limits: { maxNodes: 10 } });
    const child = forkSession(parent);
    expect(child.limits.maxNodes).toBe(10);
    expect(() => child.append('app/x', [1, 2, 3, 4, 5, 6, 7, 8, 9, 10])).toThrow(
      /more than 10 values/,
    );
  });
});
