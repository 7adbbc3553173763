/**
 * A full load of an SQL backend reads a chunk run's delta texts as their strings alone
 * (`src/store/sql/chunk-run-texts.ts`). Whatever the texts, the session it seeds must be the session that
 * parsing every text seeds: the same events, the same errors.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ElidedLog } from '../../src/core/backend.js';
import {
  type JsonValue,
  Session,
  type SessionEvent,
  SessionValidationError,
} from '../../src/core/index.js';
import { pushRunTexts, runLineEnds } from '../../src/store/sql/chunk-run-texts.js';
import { event } from '../core/builders.js';
import { fuzzRuns } from '../fuzz-runs.js';
import { HOSTILE_TEXTS } from './chunk-run-events.js';

const T0 = 1_700_000_000_000;
const opening = [
  event(0, 'turn/start', { turn: 1 }, { time: T0 }),
  event(1, 'step/start', { turn: 1, step: 1 }, { time: T0 }),
] as unknown as SessionEvent[];

class NotJson extends Error {}

function parse(text: string, seq: number): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new NotJson(`seq ${seq}`);
  }
}

/** The session `seed` seeds, as its events' JSON, or the error the seed or the load fails with. */
function outcome(seed: () => ElidedLog | unknown[]): string {
  try {
    return JSON.stringify(Session.create({ id: 's', seed: seed(), seedMode: 'parsed' }).events);
  } catch (error) {
    if (error instanceof NotJson) return `not JSON at ${error.message}`;
    if (!(error instanceof SessionValidationError)) throw error;
    return `${error.code}: ${error.message}`;
  }
}

/** The chunk events of `texts[from..to)`, each text parsed. */
function chunkEvents(texts: readonly string[], times: readonly number[], from: number, to: number) {
  return texts.slice(from, to).map((text, i) =>
    event(
      opening.length + from + i,
      'assistant/chunk',
      parse(text, opening.length + from + i) as JsonValue,
      {
        time: times[from + i],
      },
    ),
  );
}

/** A log of the opening, the first `skip` chunks parsed, then the rest pushed as a run's texts. */
function held(texts: readonly string[], times: readonly number[], skip = 0): ElidedLog {
  const log = new ElidedLog();
  for (const event of [...opening, ...chunkEvents(texts, times, 0, skip)]) {
    log.push(event as SessionEvent);
  }
  const text = texts.map((line) => `${line}\n`).join('');
  const ends = runLineEnds(text, texts.length);
  if (ends === undefined) throw new Error('the texts are not one line each');
  pushRunTexts(text, ends, Float64Array.from(times), opening.length, skip, log, true, parse);
  return log;
}

/** The same log with every text parsed. */
function parsed(texts: readonly string[], times: readonly number[]): unknown[] {
  return [...opening, ...chunkEvents(texts, times, 0, texts.length)];
}

const delta = (d: string, fields: Record<string, unknown> = {}): string =>
  JSON.stringify({ turn: 1, step: 1, chunk: { type: 'text-delta', id: 't', delta: d }, ...fields });
const PREFIX = '{"turn":1,"step":1,"chunk":{"type":"text-delta","id":"t","delta":';

describe('the delta texts of a chunk run', () => {
  it('are held as strings and seed the session their parsed chunks seed', () => {
    const texts = [
      JSON.stringify({ turn: 1, step: 1, chunk: { type: 'text-start', id: 't' } }),
      ...HOSTILE_TEXTS.map((text) => delta(text)),
      JSON.stringify({ turn: 1, step: 1, chunk: { type: 'text-end', id: 't' } }),
    ];
    const times = texts.map((_, i) => T0 + i * 3);
    const log = held(texts, times);
    expect(log.holeCount).toBe(HOSTILE_TEXTS.length);
    expect(outcome(() => log)).toBe(outcome(() => parsed(texts, times)));
    expect(outcome(() => log)).not.toMatch(/^[A-Z_]+:/);
  });

  it('read a text that only looks like a delta by parsing it, as the load always did', () => {
    const lookalikes = [
      `${PREFIX}"a" }}`,
      `${PREFIX}"a","x":1}}`,
      `${PREFIX}"a\u0001"}}`,
      `${PREFIX}"a\\"}}`,
      `${PREFIX}"\\u0041"}}`,
      `${PREFIX}"a"}} `,
      `${PREFIX}1}}`,
      `${PREFIX}""}}`,
      `${PREFIX}"}}`,
      '{"turn":1,"step":1,"chunk":{"type":"text-delta","id":"t","delta":"a","more":"b"}}',
      '{"step":1,"turn":1,"chunk":{"type":"text-delta","id":"t","delta":"a"}}',
      '{"turn":-0,"step":1,"chunk":{"type":"text-delta","id":"t","delta":"a"}}',
      '{"turn":1.5,"step":1,"chunk":{"type":"text-delta","id":"t","delta":"a"}}',
      '{"turn":1,"step":1,"chunk":{"type":"text-delta","id":"t","delta":"a"},"__proto__":{}}',
    ];
    for (const lookalike of lookalikes) {
      const texts = [delta('first'), lookalike, delta('last')];
      const times = [T0, T0 + 1, T0 + 2];
      expect(
        outcome(() => held(texts, times)),
        lookalike,
      ).toBe(outcome(() => parsed(texts, times)));
    }
  });

  it('seed the same session as their parsed chunks, whatever the texts and however many are skipped', () => {
    const piece = fc.constantFrom('"', '\\', '\u0001', '}', ' ', 'a', 'é', '\\u0041', ',"x":1');
    const text = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 6 }).map((d) => delta(d)),
      fc.string({ unit: 'binary', maxLength: 6 }).map((d) => delta(d, { turn: 2 })),
      fc.array(piece, { maxLength: 4 }).map((pieces) => `${PREFIX}"${pieces.join('')}"}}`),
      fc.constantFrom(
        JSON.stringify({ turn: 1, step: 1, chunk: { type: 'text-start', id: 't' } }),
        JSON.stringify({
          turn: 1,
          step: 1,
          chunk: { type: 'reasoning-delta', id: 'r', delta: 'x' },
        }),
        '{"turn":1,"step":1,"chunk":{"type":"text-delta","id":"t","delta":1}}',
        'not json',
      ),
    );
    const time = fc.oneof(
      { arbitrary: fc.integer({ min: T0, max: T0 + 10 }), weight: 8 },
      fc.constantFrom(-0, 0.5),
    );
    fc.assert(
      fc.property(
        fc.array(fc.tuple(text, time), { minLength: 1, maxLength: 8 }),
        fc.nat(2),
        (chunks, skip) => {
          const texts = chunks.map(([t]) => t);
          const times = chunks.map(([, at]) => at);
          const from = Math.min(skip, texts.length - 1);
          expect(outcome(() => held(texts, times, from))).toBe(outcome(() => parsed(texts, times)));
        },
      ),
      { numRuns: fuzzRuns(2000) },
    );
  });
});
