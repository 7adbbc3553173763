/**
 * The chain's fast paths give the documented digests: a payload's text put together by hand is
 * `JSON.stringify` of it, a leaf is the SHA-256 of the JSON array of the envelope and the payload
 * digest, and a tracker that hashes its leaves when a checkpoint is asked for makes the same
 * checkpoints as one resumed from the log.
 */
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Session } from '../../src/core/index.js';
import { ChainTracker } from '../../src/store/index.js';
import { leafDigest } from '../../src/store/integrity/chain.js';
import { payloadText } from '../../src/store/integrity/payload-text.js';
import { fuzzRuns } from '../fuzz-runs.js';

const sha256 = (text: string) => `sha256:${createHash('sha256').update(text).digest('base64url')}`;

/** Numbers JSON writes in every form: integers, -0, fractions, exponents, non-finite. */
const anyNumber = fc.oneof(
  fc.integer(),
  fc.nat(),
  fc.double(),
  fc.constantFrom(-0, 1e21, 1.5e-7, Number.MAX_SAFE_INTEGER, Number.NaN, Number.POSITIVE_INFINITY),
);
/** Strings with what JSON escapes: quotes, backslashes, controls, lone surrogates. */
const anyString = fc.oneof(
  fc.string(),
  fc.string({ unit: 'binary' }),
  fc.string({ unit: fc.constantFrom('"', '\\', '\n', '\u0000', '\u2028', '\ud800', 'é', 'a') }),
);

/** Data of the delta-chunk shape, and values one step away from it. */
const chunkLike = fc
  .record({
    turn: fc.oneof(anyNumber, anyString),
    step: anyNumber,
    type: fc.oneof(fc.constantFrom('text-delta', 'reasoning-delta'), anyString),
    id: fc.oneof(anyString, fc.integer()),
    delta: fc.oneof(anyString, fc.constant(null)),
    variant: fc.constantFrom(
      'plain',
      'plain',
      'plain',
      'keys reordered',
      'part keys reordered',
      'extra key',
      'missing key',
      'no prototype',
      'toJSON',
      'array part',
    ),
  })
  .map(({ turn, step, type, id, delta, variant }): unknown => {
    const part: Record<string, unknown> = { type, id, delta };
    switch (variant) {
      case 'keys reordered':
        return { step, turn, chunk: part };
      case 'part keys reordered':
        return { turn, step, chunk: { id, type, delta } };
      case 'extra key':
        return { turn, step, chunk: { ...part, more: 1 } };
      case 'missing key':
        return { turn, chunk: part };
      case 'no prototype':
        return { turn, step, chunk: Object.assign(Object.create(null), part) };
      case 'toJSON':
        return {
          turn,
          step,
          chunk: Object.defineProperty({ ...part }, 'toJSON', { value: () => 'x' }),
        };
      case 'array part':
        return { turn, step, chunk: [type, id, delta] };
      default:
        return { turn, step, chunk: part };
    }
  });

describe('a payload text', () => {
  it('is JSON.stringify of the data, for chunk-shaped data and data one step from it', () => {
    fc.assert(
      fc.property(chunkLike, (data) => {
        expect(payloadText(data)).toBe(JSON.stringify(data));
      }),
      { numRuns: fuzzRuns(5000) },
    );
  });

  it('is JSON.stringify of the data, for any JSON value', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (data) => {
        expect(payloadText(data)).toBe(JSON.stringify(data));
      }),
      { numRuns: fuzzRuns(2000) },
    );
  });

  it('is JSON.stringify of chunks that follow one another with the same or other parts', () => {
    // The text before the delta is kept from one chunk to the next: a change of any part of it
    // must make it anew.
    fc.assert(
      fc.property(fc.array(chunkLike, { minLength: 2, maxLength: 20 }), (datas) => {
        for (const data of datas) expect(payloadText(data)).toBe(JSON.stringify(data));
      }),
      { numRuns: fuzzRuns(1000) },
    );
  });

  it('leaves an inherited enumerable key to JSON.stringify', () => {
    const polluted = Object.create({ extra: 1 }) as Record<string, unknown>;
    Object.assign(polluted, { turn: 1, step: 1, chunk: { type: 't', id: 'i', delta: 'd' } });
    expect(payloadText(polluted)).toBe(JSON.stringify(polluted));
  });
});

type Step = readonly [kind: string, text: string, withSources: boolean];

/** Appends one event: a chunk, a turn's start, or a message with a surface op and maybe sources. */
function appendStep(session: Session, [kind, text, withSources]: Step): void {
  const seq = session.events.length;
  if (kind === 'chunk') {
    session.append('assistant/chunk', {
      turn: 1,
      step: 1,
      chunk: { type: 'text-delta', id: 't', delta: text },
    });
  } else if (kind === 'turn') {
    session.append('turn/start', { turn: seq });
  } else {
    session.append(
      'user/message',
      { id: `u${seq}`, role: 'user', content: [{ type: 'text', text }], source: { kind: 'user' } },
      { surfaceOp: 'append', ...(withSources && seq > 0 ? { sourceEventSeqs: [seq - 1] } : {}) },
    );
  }
}

function appendedSession(steps: readonly Step[]): Session {
  const session = Session.create({ id: 'leaves' });
  for (const step of steps) appendStep(session, step);
  return session;
}

const script = fc.array(
  fc.tuple(
    fc.constantFrom('chunk', 'chunk', 'turn', 'message'),
    anyString,
    fc.boolean(),
  ) as fc.Arbitrary<Step>,
  { minLength: 1, maxLength: 40 },
);

describe('a leaf', () => {
  it('is the SHA-256 of the JSON array of the envelope and the SHA-256 of the data JSON', () => {
    fc.assert(
      fc.property(script, (steps) => {
        for (const event of appendedSession(steps).events) {
          const envelope = [
            event.time,
            event.type,
            sha256(JSON.stringify(event.data)),
            event.surfaceOp ?? null,
            event.sourceEventSeqs ?? null,
          ];
          expect(leafDigest(event)).toBe(sha256(JSON.stringify(envelope)));
        }
      }),
      { numRuns: fuzzRuns(500) },
    );
  });
});

describe('a tracker fed event by event', () => {
  it('makes the checkpoints a tracker resumed from the log makes, wherever they fall', () => {
    fc.assert(
      fc.property(script, fc.array(fc.nat(40)), (steps, cuts) => {
        const session = appendedSession([]);
        const fed = ChainTracker.resume(session.header, session.events);
        const unsubscribe = session.subscribe((event) => fed.feed(event));
        const due = new Set(cuts);
        steps.forEach((step, i) => {
          appendStep(session, step);
          // An anchor asked for between checkpoints hashes the leaves so far, and no others.
          if (step[0] === 'message' && step[2]) fed.anchor();
          if (due.has(i)) {
            const resumed = ChainTracker.resume(session.header, session.events).checkpoint();
            // Every other checkpoint is made by another tracker (as a redaction or `palimpsest
            // checkpoint` makes one): this one has not hashed the events it covers.
            if (i % 2 === 0) expect(fed.checkpoint()).toEqual(resumed);
            session.append('log/checkpoint', resumed);
          }
        });
        expect(fed.anchor()).toEqual(ChainTracker.resume(session.header, session.events).anchor());
        unsubscribe();
      }),
      { numRuns: fuzzRuns(300) },
    );
  });
});
