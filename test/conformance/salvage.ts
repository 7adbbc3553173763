/**
 * Salvage, the same in every backend: a load with `salvage` gives a damaged log's acknowledged
 * events before the damage (and the error a plain load gives), and `salvageSession` copies them
 * into a new session a writer can go on with, leaving the damaged one as it was.
 */
import { describe, expect, it } from 'vitest';
import { checkInvariants, Session, type SessionEvent } from '../../src/core/index.js';
import {
  CorruptLogError,
  inspectSession,
  NotFoundError,
  type SessionStore,
  salvageSession,
} from '../../src/store/index.js';
import { recordToolTurn, tickingClock } from '../core/builders.js';
import { rejection } from './helpers.js';

/** How a backend's fixture damages one stored event in place (undefined: it cannot). */
export type PlantDamagedEvent = ((id: string, seq: number) => Promise<void>) | undefined;

/** Three complete turns, each with a tool round trip. */
function threeTurns(): SessionEvent[] {
  const session = Session.create({ id: 'source', clock: tickingClock() });
  recordToolTurn(session, 1);
  recordToolTurn(session, 2);
  recordToolTurn(session, 3);
  return [...session.events];
}

/** Stores `events` one batch per event, so damage to one event spoils exactly that batch. */
async function storeOneByOne(store: SessionStore, id: string, events: readonly SessionEvent[]) {
  await store.create({ version: 1, id, createdAt: 1 });
  for (const event of events) await store.append(id, [event], { expectedSeq: event.seq });
}

export function describeSalvage(
  store: () => SessionStore,
  plantDamagedEvent: () => PlantDamagedEvent,
  fingerprint: () => ((id: string) => Promise<string>) | undefined,
): void {
  describe('salvage', () => {
    it('loads an intact session whole, with no damage, when asked to salvage', async () => {
      const s = store();
      const events = threeTurns();
      await storeOneByOne(s, 'whole', events);
      const loaded = await s.load('whole', { salvage: true });
      expect(loaded.damage).toBeUndefined();
      expect(loaded.events).toEqual(events);
    });

    it('leaves an intact session alone and creates nothing', async () => {
      const s = store();
      await storeOneByOne(s, 'whole', threeTurns());
      const result = await salvageSession(s, 'whole', { id: 'copy' });
      expect(result).toEqual({ kind: 'intact', events: threeTurns().length });
      expect(await rejection(s.load('copy'))).toBeInstanceOf(NotFoundError);
    });

    it('gives the acknowledged events before damage, and the error a plain load gives', async (context) => {
      const plant = plantDamagedEvent();
      if (plant === undefined) return context.skip();
      const s = store();
      const events = threeTurns();
      await storeOneByOne(s, 'hurt', events);
      await plant('hurt', 9);
      const plain = await rejection(s.load('hurt'));
      expect(plain).toBeInstanceOf(CorruptLogError);
      const loaded = await s.load('hurt', { salvage: true });
      expect(loaded.events).toEqual(events.slice(0, 9));
      expect(loaded.damage).toBeInstanceOf(CorruptLogError);
      expect(loaded.damage?.message).toBe((plain as CorruptLogError).message);
    });

    it('creates nothing when the damage leaves no event intact', async (context) => {
      const plant = plantDamagedEvent();
      if (plant === undefined) return context.skip();
      const s = store();
      await storeOneByOne(s, 'hurt', threeTurns());
      await plant('hurt', 0);
      const result = await salvageSession(s, 'hurt', { id: 'saved' });
      expect(result.kind).toBe('nothing-intact');
      expect(await rejection(s.load('saved'))).toBeInstanceOf(NotFoundError);
    });

    it('copies the intact prefix into a new session that names its parent, closes its open turn, and leaves the damaged session unchanged', async (context) => {
      const plant = plantDamagedEvent();
      if (plant === undefined) return context.skip();
      const s = store();
      const events = threeTurns();
      await storeOneByOne(s, 'hurt', events);
      // Damage a few events into turn 2, so the intact prefix ends inside that turn.
      const turn2 = events.findIndex((event) => event.type === 'turn/start' && event.seq > 0);
      const at = turn2 + 3;
      await plant('hurt', at);
      const before = await fingerprint()?.('hurt');
      const result = await salvageSession(s, 'hurt', { id: 'saved', clock: tickingClock(5) });
      expect(result.kind).toBe('salvaged');
      if (result.kind !== 'salvaged') return;
      expect(result).toMatchObject({ id: 'saved', events: at });
      expect(result.repairedEvents).toBeGreaterThan(0);
      expect(result.damage).toBeInstanceOf(CorruptLogError);
      const copy = await s.load('saved');
      expect(copy.header).toMatchObject({ parentSession: 'hurt', seedLength: at });
      expect(copy.events.slice(0, at)).toEqual(events.slice(0, at));
      expect(copy.events.at(-1)).toMatchObject({ type: 'turn/end', data: { turn: 2 } });
      expect(checkInvariants(copy.events)).toEqual([]);
      // A writer can go on with it.
      expect((await inspectSession(s, 'saved')).seq).toBe(copy.events.length);
      expect(await rejection(s.load('hurt'))).toBeInstanceOf(CorruptLogError);
      if (before !== undefined) expect(await fingerprint()?.('hurt')).toBe(before);
    });
  });
}
