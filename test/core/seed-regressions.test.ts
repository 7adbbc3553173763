/**
 * Regressions found by seed fuzzing (test/core/seed-fuzz.test.ts): each pins a defect that
 * fuzzing once found in src/core, with its minimal input.
 */
import { describe, expect, it } from 'vitest';
import {
  ForkError,
  forkSession,
  type JsonValue,
  planRepair,
  Session,
  SessionValidationError,
} from '../../src/core/index.js';
import { GOLDENS, MAX_MESSAGE_LENGTH } from './seed-goldens.js';
import { isRecord, type Mutable } from './seed-mutations.js';

describe('regressions found by fuzzing', () => {
  it('refuses malformed turn numbers at admission, so every accepted log can be crash-repaired', () => {
    // Once, turn/start {turn: -1} was accepted and planRepair copied the turn into a closer that
    // the session then refused: a log the session accepted could not be repaired.
    const failures: string[] = [];
    for (const log of Object.values(GOLDENS)) {
      for (let length = 1; length <= log.live.length; length++) {
        for (const turn of [0, -1, 1.5, '1', null, 2 ** 53 - 1]) {
          const prefix = JSON.parse(JSON.stringify(log.live.slice(0, length))) as Mutable[];
          const starts = prefix.filter(
            (event) => event.type === 'turn/start' && isRecord(event.data),
          );
          for (const event of starts) if (isRecord(event.data)) event.data.turn = turn;
          const valid = typeof turn === 'number' && Number.isSafeInteger(turn) && turn >= 0;
          if (!valid && starts.length > 0) {
            const error = rejectionOf(() => Session.create({ seed: prefix }));
            expect(error.code).toBe('INVALID_EVENT_DATA');
            expect(error.path).toBe('data.turn');
            continue;
          }
          const session = Session.create({ seed: prefix });
          try {
            const repaired = Session.create({
              seed: [...session.events, ...planRepair(session.events)],
            });
            expect(planRepair(repaired.events), 'a second repair plan').toEqual([]);
          } catch (error) {
            failures.push(`${log.name}[0..${length - 1}] turn ${String(turn)}: ${String(error)}`);
          }
        }
      }
    }
    expect(failures.slice(0, 3), `${failures.length} repaired prefixes rejected`).toEqual([]);
  });

  it('forks any accepted log or refuses with a ForkError, whatever data its turn/start carries', () => {
    // Once, turn/start with data null was accepted and forkSession threw a TypeError reading it.
    for (const data of [null, 42, 'x', [], {}, { turn: null }, { turn: 1 }]) {
      const seed = [{ seq: 0, time: 0, type: 'turn/start', data }];
      let session: Session;
      try {
        session = Session.create({ seed });
      } catch (error) {
        expect(error, `turn/start data ${JSON.stringify(data)}`).toBeInstanceOf(
          SessionValidationError,
        );
        expect((error as SessionValidationError).code).toBe('INVALID_EVENT_DATA');
        continue;
      }
      let error: unknown;
      try {
        forkSession(session);
      } catch (caught) {
        error = caught;
      }
      expect(error, `turn/start data ${JSON.stringify(data)}: ${String(error)}`).toBeInstanceOf(
        ForkError,
      );
    }
  });

  it('keeps error messages short when the offending value is huge', () => {
    // Once, a NON_JSON_DATA message embedded a 100,000-character data key verbatim.
    const key = 'k'.repeat(100_000);
    const seed = [{ seq: 0, time: 0, type: 'app/x', data: { [key]: Number.NaN } }];
    const error = rejectionOf(() => Session.create({ seed }));
    expect(error.code).toBe('NON_JSON_DATA');
    expect(error.message.length, 'NON_JSON_DATA message').toBeLessThanOrEqual(MAX_MESSAGE_LENGTH);
    const refused = rejectionOf(() =>
      Session.create({ seed: [{ seq: 0, time: 0, type: 'turn/start', data: { turn: key } }] }),
    );
    expect(refused.message.length, 'INVALID_EVENT_DATA message').toBeLessThanOrEqual(
      MAX_MESSAGE_LENGTH,
    );
    const open = Session.create({
      seed: [{ seq: 0, time: 0, type: 'turn/start', data: { turn: 2 ** 53 - 1 } }],
    });
    let forkError: unknown;
    try {
      forkSession(open);
    } catch (caught) {
      forkError = caught;
    }
    expect(forkError).toBeInstanceOf(ForkError);
    const message = forkError instanceof Error ? forkError.message : '';
    expect(message.length, 'OPEN_TURN message').toBeLessThanOrEqual(MAX_MESSAGE_LENGTH);
  });

  it('bounds the work of validating data that shares subtrees, however large its expansion', () => {
    // Once, the walk re-visited shared objects with no bound on values: an array DAG 64 levels
    // deep (2^64 leaves once expanded, no strings) never finished. The leaf counts its reads and
    // stops the walk after a million; the maxNodes limit must refuse the value before that.
    const budget = 1_000_000;
    let reads = 0;
    const leaf: unknown[] = [];
    Object.defineProperty(leaf, 0, {
      enumerable: true,
      get() {
        reads++;
        if (reads > budget) throw new Error(`walked the shared leaf ${budget} times`);
        return 1;
      },
    });
    let node: unknown = leaf;
    for (let level = 0; level < 64; level++) node = [node, node];
    const error = rejectionOf(() => Session.create().append('app/dag', node as JsonValue));
    expect(error.code).toBe('DATA_LIMIT_EXCEEDED');
  });
});

function rejectionOf(fn: () => unknown): SessionValidationError {
  try {
    fn();
  } catch (error) {
    if (error instanceof SessionValidationError) return error;
    throw error;
  }
  throw new Error('expected a SessionValidationError');
}
