/**
 * The branch diff of the Session view: the messages two logs share from the start, and the two
 * continuations side by side, a message both hold facing its twin.
 */
import { describe, expect, it } from 'vitest';
import { forkSession, Session } from '../../src/core/index.js';
import {
  alignBranches,
  type BranchMessage,
  type BranchRow,
  diffBranches,
  sharedPrefix,
} from '../../src/viewer/page/branch-diff.js';
import { assistant, user } from '../core/builders.js';

const message = (seq: number, text: string, role = 'user'): BranchMessage => ({ seq, role, text });
const texts = (rows: readonly BranchRow[]) =>
  rows.map((row) => [row.left?.text ?? null, row.right?.text ?? null, row.same]);

/** A chat of `prompts`, each a turn answered with `answer: <prompt>`. */
function chat(session: Session, prompts: readonly string[], from = 1): void {
  prompts.forEach((prompt, index) => {
    const turn = from + index;
    session.append('turn/start', { turn });
    session.append('user/message', user(`u${turn}`, prompt), { surfaceOp: 'append' });
    session.append('step/start', { turn, step: 1 });
    session.append(
      'assistant/message',
      assistant(`a${turn}`, `answer: ${prompt}`, [], { turn, step: 1 }),
      {
        surfaceOp: 'append',
        sourceEventSeqs: [],
      },
    );
    session.append('step/end', { turn, step: 1 });
    session.append('turn/end', { turn, reason: { kind: 'completed' } });
  });
}

describe('diffBranches', () => {
  it('finds the prefix a fork copied, then each branch’s own messages', () => {
    const parent = Session.create({ id: 'parent' });
    chat(parent, ['one', 'two']);
    const fork = forkSession(parent, parent.seq - 1, { id: 'fork' });
    chat(parent, ['three on the parent'], 3);
    chat(fork, ['three on the fork'], 3);
    const diff = diffBranches(parent.events, fork.events);
    expect(diff.prefix.map((m) => m.text)).toEqual(['one', 'answer: one', 'two', 'answer: two']);
    expect(texts(diff.rows)).toEqual([
      ['three on the parent', 'three on the fork', false],
      ['answer: three on the parent', 'answer: three on the fork', false],
    ]);
  });

  it('counts no shared prefix between logs that begin differently', () => {
    const a = Session.create({ id: 'a' });
    const b = Session.create({ id: 'b' });
    chat(a, ['hello']);
    chat(b, ['goodbye']);
    expect(sharedPrefix(a.events, b.events)).toBe(0);
    expect(diffBranches(a.events, b.events).rows).toHaveLength(2);
  });

  it('shows a branch that stopped at the fork point as one side only', () => {
    const parent = Session.create({ id: 'parent' });
    chat(parent, ['one']);
    const fork = forkSession(parent, parent.seq - 1, { id: 'fork' });
    chat(fork, ['more'], 2);
    expect(texts(diffBranches(parent.events, fork.events).rows)).toEqual([
      [null, 'more', false],
      [null, 'answer: more', false],
    ]);
  });
});

describe('alignBranches', () => {
  it('puts a message both continuations hold on one line, the others facing in order', () => {
    const left = [message(10, 'a'), message(11, 'x'), message(12, 'same'), message(13, 'b')];
    const right = [message(10, 'y'), message(11, 'same'), message(12, 'c'), message(13, 'd')];
    expect(texts(alignBranches(left, right))).toEqual([
      ['a', 'y', false],
      ['x', null, false],
      ['same', 'same', true],
      ['b', 'c', false],
      [null, 'd', false],
    ]);
  });

  it('does not match the same text said by another role', () => {
    const rows = alignBranches([message(1, 'ok', 'user')], [message(1, 'ok', 'assistant')]);
    expect(texts(rows)).toEqual([['ok', 'ok', false]]);
  });

  it('pairs very long continuations in order instead of matching them', () => {
    const many = (side: string) =>
      Array.from({ length: 600 }, (_, i) => message(i, i === 0 ? 'shared' : `${side}${i}`));
    const rows = alignBranches(many('l'), [message(0, 'r0'), ...many('r')]);
    expect(rows).toHaveLength(601);
    expect(texts(rows)[0]).toEqual(['shared', 'r0', false]);
  });
});
