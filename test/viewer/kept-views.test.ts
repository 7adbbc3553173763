/**
 * What the page keeps of a session between tab switches and live batches, held equal to a build
 * from scratch: the transcript's rows (core's `Session.transcript()`, whether the model still
 * sees each one read from the surface now), the conversation's index (`ConversationIndex.of`
 * over the whole log), the replaces and the redactions. Sessions come from the surface model's
 * command generator, are seeded as the server sends them (finished chunks as stubs) and grow by
 * random batches, the kept views read at random points in between.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type ProvenanceIntent,
  redactedSeqs,
  Session,
  type SessionEvent,
  type SurfaceIntent,
} from '../../src/core/index.js';
import { replaySurface } from '../../src/core/surface.js';
import { openStore, redact } from '../../src/store/index.js';
import { ConversationIndex } from '../../src/viewer/page/conversation-model.js';
import { ViewedSession } from '../../src/viewer/page/state.js';
import { elidedLoad } from '../core/builders.js';
import { type Command, commandArb, resolve } from '../core/surface-commands.js';
import { ReferenceModel } from '../core/surface-reference-model.js';
import { fuzzRuns } from '../fuzz-runs.js';
import { MARKER_PATTERN, recordGovernedSession } from '../store/governed-session.js';

/** The valid steps of `commands` applied to a session: appends, replaces, chunks, log events. */
function sessionOf(commands: readonly Command[]): Session {
  let time = 1_700_000_000_000;
  const session = Session.create({ id: 'kept', clock: () => time++ });
  const model = new ReferenceModel();
  const append = session.append.bind(session) as (
    type: string,
    data: unknown,
    intent?: SurfaceIntent | ProvenanceIntent,
  ) => SessionEvent;
  for (const command of commands) {
    const attempt = resolve(model, command);
    const decision = model.decide(attempt);
    if (!decision.ok) continue;
    append(attempt.type, attempt.data, attempt.intent as SurfaceIntent | ProvenanceIntent);
    model.commit(attempt, decision);
  }
  return session;
}

/** The transcript as the list view shows it: key, kind, and whether the row is greyed. */
function shownTranscript(viewed: ViewedSession): string[] {
  return viewed
    .transcriptRows()
    .map((row) => `${row.key} ${row.kind}${viewed.onSurface(row.seq) ? '' : ' hidden'}`);
}

/** The same from core's transcript, built whole. */
function coreTranscript(session: Session): string[] {
  return session
    .transcript()
    .map(
      (entry) =>
        `t${entry.seq} ${entry.kind === 'replacement' ? 'marker' : 'message'}${entry.onSurface ? '' : ' hidden'}`,
    );
}

/** The events as the stream carries them: JSON, and finished chunks as stubs in a snapshot. */
const wire = (events: readonly SessionEvent[]): SessionEvent[] =>
  JSON.parse(JSON.stringify(events)) as SessionEvent[];

/** Seeds a viewed session with `seed` events of `session`, then appends the rest in `batches`. */
function grow(
  session: Session,
  seed: number,
  batches: readonly number[],
  read: (viewed: ViewedSession, step: number) => void,
): ViewedSession {
  const events = session.events;
  const viewed = new ViewedSession(session.header, elidedLoad(events.slice(0, seed)), 0);
  read(viewed, 0);
  let from = seed;
  for (const [step, size] of batches.entries()) {
    if (from >= events.length) break;
    viewed.appendEvents(wire(events.slice(from, from + size)), 0);
    from += size;
    read(viewed, step + 1);
  }
  viewed.appendEvents(wire(events.slice(from)), 0);
  return viewed;
}

describe('the views the page keeps', () => {
  it('keeps the transcript rows, the conversation and the replaces equal to a build from scratch, batch after batch', () => {
    fc.assert(
      fc.property(
        fc.array(commandArb, { minLength: 1, maxLength: 80, size: 'max' }),
        fc.nat(80),
        fc.array(fc.integer({ min: 1, max: 12 }), { maxLength: 20 }),
        fc.array(fc.boolean(), { minLength: 21, maxLength: 21 }),
        (commands, seedAt, batches, reads) => {
          const session = sessionOf(commands);
          const seed = seedAt % (session.seq + 1);
          const kept = new ConversationIndex();
          // The kept views are read at some steps only: a later read catches up several batches.
          const viewed = grow(session, seed, batches, (viewed, step) => {
            if (reads[step] !== true) return;
            expect(shownTranscript(viewed)).toEqual(coreTranscript(viewed.session));
            kept.readUpTo(viewed.session);
          });
          expect(shownTranscript(viewed)).toEqual(coreTranscript(session));
          kept.readUpTo(viewed.session);
          const whole = ConversationIndex.of(session.events);
          expect(kept.entries).toEqual(whole.entries);
          expect(kept.calls).toEqual(whole.calls);
          expect(kept.openTurn).toEqual(whole.openTurn);
          const replaces = new Map();
          replaySurface(session.events, session.seq - 1, (r) => replaces.set(r.seq, r));
          expect(viewed.replacements()).toEqual(replaces);
          const at = seedAt % session.seq;
          expect(viewed.surfaceAt(at).seqs).toEqual(replaySurface(session.events, at));
        },
      ),
      { numRuns: fuzzRuns(500) },
    );
  });

  it('hands each event the conversation entries it added, once, as the log grows', () => {
    const [commands] = fc.sample(fc.array(commandArb, { minLength: 80, maxLength: 80 }), {
      numRuns: 1,
      seed: 7,
    });
    const session = sessionOf(commands ?? []);
    const added: string[] = [];
    const index = new ConversationIndex();
    const note = (seq: number, entries: readonly { kind: string }[]): void => {
      for (const entry of entries) added.push(`${seq} ${entry.kind}`);
    };
    const viewed = grow(session, 10, [3, 5, 1, 8], (viewed) =>
      index.readUpTo(viewed.session, note),
    );
    index.readUpTo(viewed.session, note);
    const whole = new ConversationIndex();
    const expected: string[] = [];
    for (const event of session.events) {
      for (const entry of whole.add(event)) expected.push(`${event.seq} ${entry.kind}`);
    }
    expect(expected.length).toBeGreaterThan(10);
    expect(added).toEqual(expected);
  });

  it('knows which redaction erased each event, batch after batch, as core reads the whole log', async () => {
    const store = await openStore('memory:');
    await recordGovernedSession(store, 'erased', { checkpoints: false });
    await redact(store, 'erased', { match: MARKER_PATTERN }, { reason: 'ticket 7' });
    const { header, events } = await store.load('erased');
    const session = Session.create({ header, seed: events });
    const expected = redactedSeqs(session.events);
    expect(expected.size).toBeGreaterThan(0);
    const viewed = grow(session, 5, [4, 4, 4], (viewed) => {
      expect(viewed.redactions).toEqual(redactedSeqs(viewed.session.events));
    });
    expect(viewed.redactions).toEqual(expected);
    await store.close();
  });
});
