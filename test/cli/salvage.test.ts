/**
 * A session damaged in the middle: the commands that read it fail with exit code 4 and recommend
 * `palimpsest salvage`, which works; `log --salvage` and `show --salvage` read the intact prefix.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Session, type SessionEvent } from '../../src/core/index.js';
import { openStore } from '../../src/store/index.js';
import { recordToolTurn, tickingClock } from '../core/builders.js';
import { withRaw } from '../store/sqlite/helpers.js';
import { cli, tempStores } from './helpers.js';

const stores = tempStores();
afterAll(() => stores.remove());

let events: SessionEvent[] = [];
/** The first damaged event: a few events into turn 2. */
let at = 0;

beforeAll(async () => {
  const session = Session.create({ id: 'hurt', clock: tickingClock() });
  for (let turn = 1; turn <= 3; turn++) recordToolTurn(session, turn, `question ${turn}`);
  events = [...session.events];
  at = events.findIndex((event) => event.type === 'turn/start' && event.seq > 0) + 3;
  for (const url of Object.values(stores.urls)) {
    const store = await openStore(url);
    for (const id of ['hurt', 'lost']) {
      await store.create({ version: 1, id, createdAt: 1 });
      for (const event of events) await store.append(id, [event], { expectedSeq: event.seq });
    }
    await store.close();
  }
  for (const [id, seq] of [
    ['hurt', at],
    ['lost', 0],
  ] as const) {
    const log = join(stores.dir, 'sessions', `${id}.jsonl`);
    const text = readFileSync(log, 'utf8');
    writeFileSync(log, text.replace(`{"seq":${seq},"time":`, `{"seq":${seq},"time":1`));
    await withRaw(join(stores.dir, 'sessions.db'), (db) => {
      db.prepare(
        'UPDATE events SET time = time + 1 WHERE seq = ? AND session_id = (SELECT key FROM sessions WHERE id = ?)',
      ).run(seq, id);
    });
  }
});

describe.each(['jsonl', 'sqlite'] as const)('a session damaged mid-log (%s)', (backend) => {
  const run = (...args: string[]) => cli(['--store', stores.urls[backend], ...args]);

  it('fails show with exit code 4 and recommends salvage', () => {
    const shown = run('show', 'hurt');
    expect(shown.code).toBe(4);
    expect(shown.stderr).toContain('palimpsest salvage');
    expect(shown.stderr).not.toContain('fork the intact prefix');
  });

  it('prints the acknowledged events before the damage with log --salvage, and says where it is', () => {
    const logged = run('log', 'hurt', '--salvage', '--json');
    expect(logged.code).toBe(0);
    const seqs = logged.stdout
      .trim()
      .split('\n')
      .map((line) => (JSON.parse(line) as SessionEvent).seq);
    expect(seqs).toEqual(events.slice(0, at).map((event) => event.seq));
    expect(logged.stderr).toMatch(
      /corrupt session log .* acknowledged event\(s\) before the damage/,
    );
    expect(logged.stderr).toContain('palimpsest salvage hurt');
  });

  it('shows the transcript of the intact prefix with show --salvage', () => {
    const shown = run('show', 'hurt', '--salvage');
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain('question 2');
    expect(shown.stdout).not.toContain('question 3');
  });

  it('salvages the intact prefix into a new session that reads, verifies and leaves the damaged one as it was', () => {
    const before = run('log', 'hurt', '--salvage', '--json').stdout;
    const salvaged = run('salvage', 'hurt', '--id', 'saved');
    expect(salvaged.code).toBe(0);
    expect(salvaged.stdout).toMatch(
      new RegExp(
        `salvaged ${at} acknowledged event\\(s\\) of 'hurt' into 'saved', and closed its interrupted turn`,
      ),
    );
    expect(run('verify', 'saved').code).toBe(0);
    const copy = run('log', 'saved', '--json').stdout.trim().split('\n');
    expect(copy.slice(0, at).join('\n')).toBe(before.trim());
    expect(run('show', 'hurt').code).toBe(4);
    expect(run('log', 'hurt', '--salvage', '--json').stdout).toBe(before);
  });

  it('refuses to salvage an intact session with exit code 9 and creates nothing', () => {
    const refused = run('salvage', 'saved', '--id', 'again');
    expect(refused.code).toBe(9);
    expect(refused.stderr).toContain('is not damaged');
    expect(run('show', 'again').code).toBe(3);
  });

  it('fails salvage and log --salvage with exit code 4 when no event before the damage is intact', () => {
    const salvaged = run('salvage', 'lost', '--id', 'nothing');
    expect(salvaged.code).toBe(4);
    expect(salvaged.stderr).toContain('nothing was created');
    expect(run('show', 'nothing').code).toBe(3);
    expect(run('log', 'lost', '--salvage').code).toBe(4);
  });

  it('fails salvage of a mistyped id with exit code 3', () => {
    expect(run('salvage', 'hrut').code).toBe(3);
  });
});
