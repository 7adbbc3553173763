/**
 * An archive killed at any step loses nothing (issue 37): a real process moves a session from
 * each backend into a `jsonl:` archive and is SIGKILLed after some of its copy batches, just
 * before it deletes the original, or just after. At every kill point the whole session is in
 * the store, in the archive, or in both, and running the move again finishes it.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Session, type SessionEvent } from '../../src/core/index.js';
import { moveSession, NotFoundError, openStore, type SessionStore } from '../../src/store/index.js';
import { recordToolTurn } from '../core/builders.js';
import { untilOutput } from './child-output.js';
import { everyBackend } from './store-urls.js';

const mover = join(import.meta.dirname, 'fixtures', 'session-mover.ts');
const archives = mkdtempSync(join(tmpdir(), 'palimpsest-archive-kill-'));
afterAll(() => rmSync(archives, { recursive: true, force: true }));

const header = { version: 1 as const, id: 'moved', createdAt: 1 };
const session = Session.create({ header });
for (let turn = 1; turn <= 6; turn++) recordToolTurn(session, turn);
const events: readonly SessionEvent[] = session.events;

/** Runs the mover and SIGKILLs it once it printed `marker`. */
async function killMoverAt(from: string, to: string, marker: string): Promise<void> {
  const child = spawn(process.execPath, ['--import', 'tsx', mover, from, to, 'moved', '5'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  await untilOutput(child, marker);
  child.kill('SIGKILL');
  await exited;
}

/** The committed events of the session in `store`, or undefined when it holds none. */
async function held(store: SessionStore): Promise<readonly SessionEvent[] | undefined> {
  try {
    return (await store.load('moved')).events;
  } catch (error) {
    if (NotFoundError.isInstance(error)) return undefined;
    throw error;
  }
}

for (const [name, newUrl] of everyBackend('move-kill')) {
  describe(`an archive from ${name} killed mid-move`, () => {
    it('leaves the whole session somewhere, and a second run finishes it', async () => {
      for (const marker of ['COPIED 5', 'COPIED 40', 'DELETING', 'DELETED']) {
        const from = newUrl();
        const to = `jsonl:${mkdtempSync(join(archives, 'a-'))}`;
        const setup = await openStore(from);
        await setup.create(header);
        await setup.append('moved', events, { expectedSeq: 0 });
        await setup.close();

        await killMoverAt(from, to, marker);

        const source = await openStore(from);
        const archive = await openStore(to);
        const copies = [await held(source), await held(archive)];
        expect(
          copies.some((copy) => copy?.length === events.length),
          marker,
        ).toBe(true);
        for (const copy of copies) {
          if (copy?.length === events.length) expect(copy).toEqual(events);
        }
        if (copies[0] !== undefined) await moveSession(source, 'moved', archive);
        expect(await held(source)).toBeUndefined();
        expect(await held(archive)).toEqual(events);
        await Promise.all([source.close(), archive.close()]);
      }
    });
  });
}
