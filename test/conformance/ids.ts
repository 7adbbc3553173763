/**
 * The session-id rule of the contract, the same in every backend: hostile ids are refused with
 * `InvalidSessionIdError` before anything is written, and the store stays usable.
 */
import { describe, expect, it } from 'vitest';
import { InvalidSessionIdError, type SessionStore } from '../../src/store/index.js';
import { rejection } from './helpers.js';

/** Ids every backend must refuse, by why. */
export const HOSTILE_IDS: readonly (readonly [string, string])[] = [
  ['a lone high surrogate', 'a\ud800b'],
  ['a lone low surrogate', '\udc00'],
  ['a reversed surrogate pair', '\ude00\ud83d'],
  ['NUL', 'a\u0000b'],
  ['a newline', 'a\nb'],
  ['an escape (ESC)', '\u001b]52;c;aGk=\u0007'],
  ['DEL', 'a\u007f'],
  ['a C1 control (CSI)', 'a\u009b2J'],
  ['201 ASCII bytes', 'x'.repeat(201)],
  ['201 UTF-8 bytes in 101 characters', `${'é'.repeat(100)}x`],
];

/** Ids at the edge of the rule that every backend must store and read back unchanged. */
export const EDGE_IDS: readonly string[] = [
  'x'.repeat(200),
  '🌍'.repeat(50),
  'é'.repeat(100),
  'id with spaces, "quotes", \\ and / slashes',
  '\u2028line separator',
];

function header(id: string) {
  return { version: 1 as const, id, createdAt: 1_700_000_000_000 };
}

export function describeIdRules(store: () => SessionStore): void {
  describe('session ids', () => {
    for (const [what, id] of HOSTILE_IDS) {
      it(`refuses an id with ${what} in every method, writing nothing`, async () => {
        const s = store();
        await s.create(header('ok'));
        const calls: readonly (() => Promise<unknown>)[] = [
          () => s.create(header(id)),
          () => s.append(id, [], { expectedSeq: 0 }),
          () => s.load(id),
          () => s.delete(id),
          () => s.lock(id),
        ];
        for (const call of calls)
          expect(await rejection(call())).toBeInstanceOf(InvalidSessionIdError);
        const page = await s.list();
        expect(page.sessions.map((summary) => summary.header.id)).toEqual(['ok']);
        expect((await s.load('ok')).events).toEqual([]);
      });
    }

    it('stores ids at the edge of the rule and reads them back unchanged', async () => {
      const s = store();
      for (const id of EDGE_IDS) await s.create(header(id));
      for (const id of EDGE_IDS) expect((await s.load(id)).header.id).toBe(id);
      const listed = (await s.list()).sessions.map((summary) => summary.header.id).sort();
      expect(listed).toEqual([...EDGE_IDS].sort());
    });
  });
}
