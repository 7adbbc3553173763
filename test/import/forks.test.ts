/**
 * Files a harness wrote as forks of another session (a Codex rollout with `forked_from_id`, a pi
 * file whose header names `parentSession`, a Claude Code `/branch` transcript stamped with
 * `forkedFrom`) become palimpsest forks through `palimpsest import`: linked when the parent is in
 * the same import or the store and the child's copy of its history matches, in whichever order
 * the files come; standalone, with the reason in the summary, otherwise.
 */
import { copyFileSync, mkdirSync, mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { ImportReport, SessionOutcome } from '../../src/import/index.js';
import { openStore } from '../../src/store/index.js';
import { cli, tempStores } from '../cli/helpers.js';

const stores = tempStores();
afterAll(() => stores.remove());

/** Each format's fork fixtures: a parent, a child forked from it, a child whose copy differs. */
const CASES = {
  codex: {
    parent: 'rollout-2026-11-05T09-00-00-019b0000-0000-7000-8000-00000000000a.jsonl',
    child: 'rollout-2026-11-05T09-30-00-019b0000-0000-7000-8000-00000000000c.jsonl',
    diverged: 'rollout-2026-11-05T09-40-00-019b0000-0000-7000-8000-00000000000d.jsonl',
    ids: [
      'codex-019b0000-0000-7000-8000-00000000000a',
      'codex-019b0000-0000-7000-8000-00000000000c',
    ],
    divergedId: 'codex-019b0000-0000-7000-8000-00000000000d',
    // Two context messages and the whole first turn (a call, its result, the answer).
    seedLength: 13,
    kept: { forkedFromId: '019b0000-0000-7000-8000-00000000000a' },
  },
  pi: {
    parent: '2026-11-06T10-00-00-000Z_5a5a5a5a-0000-4000-8000-00000000000a.jsonl',
    child: '2026-11-06T11-00-00-000Z_5a5a5a5a-0000-4000-8000-00000000000c.jsonl',
    diverged: '2026-11-06T11-10-00-000Z_5a5a5a5a-0000-4000-8000-00000000000d.jsonl',
    ids: ['pi-5a5a5a5a-0000-4000-8000-00000000000a', 'pi-5a5a5a5a-0000-4000-8000-00000000000c'],
    divergedId: 'pi-5a5a5a5a-0000-4000-8000-00000000000d',
    seedLength: 11,
    kept: {
      parentSessionFile:
        '/home/dev/.pi/agent/sessions/--home-dev-app--/2026-11-06T10-00-00-000Z_5a5a5a5a-0000-4000-8000-00000000000a.jsonl',
    },
  },
  'claude-code': {
    parent: 'c1c1c1c1-0000-4000-8000-00000000000a.jsonl',
    child: 'c1c1c1c1-0000-4000-8000-00000000000c.jsonl',
    diverged: 'c1c1c1c1-0000-4000-8000-00000000000d.jsonl',
    ids: [
      'claude-code-c1c1c1c1-0000-4000-8000-00000000000a',
      'claude-code-c1c1c1c1-0000-4000-8000-00000000000c',
    ],
    divergedId: 'claude-code-c1c1c1c1-0000-4000-8000-00000000000d',
    seedLength: 6,
    kept: { forkedFromSessionId: 'c1c1c1c1-0000-4000-8000-00000000000a' },
  },
} as const;

describe.each(Object.keys(CASES) as (keyof typeof CASES)[])('forks written by %s', (harness) => {
  const fixtures = CASES[harness];
  const [parentId, childId] = fixtures.ids;
  const fixture = (name: string): string =>
    join(import.meta.dirname, 'fixtures', 'forks', harness, name);
  let n = 0;
  const fresh = (): { url: string; run: (...args: string[]) => ReturnType<typeof cli> } => {
    const url = `jsonl:${join(stores.dir, `${harness}-${n++}`)}`;
    return { url, run: (...args) => cli(['--store', url, ...args], { cwd: stores.dir }) };
  };
  /** A directory holding the named fixtures, each in the subdirectory named with it. */
  const directory = (files: readonly (readonly [string, string])[]): string => {
    const dir = mkdtempSync(join(stores.dir, `${harness}-src-`));
    for (const [sub, name] of files) {
      mkdirSync(join(dir, sub), { recursive: true });
      copyFileSync(fixture(name), join(dir, sub, name));
    }
    return dir;
  };
  const imported = (
    run: ReturnType<typeof fresh>['run'],
    path: string,
  ): { report: ImportReport; byId: Map<string, SessionOutcome> } => {
    const result = run('--json', 'import', '--from', harness, path);
    expect([result.code, result.stderr]).toEqual([0, '']);
    const report = JSON.parse(result.stdout) as ImportReport;
    return { report, byId: new Map(report.sessions.map((s) => [s.id, s])) };
  };
  const load = async (url: string, id: string) => {
    const store = await openStore(url, { readOnly: true });
    try {
      return await store.load(id);
    } finally {
      await store.close();
    }
  };

  it('links the child to a parent in the same import even when the child sorts first, then adds nothing', async () => {
    const { url, run } = fresh();
    // The child's file sorts before the parent's: it waits for the parent within the run.
    const dir = directory([
      ['a', fixtures.child],
      ['b', fixtures.parent],
    ]);
    const { byId } = imported(run, dir);
    expect(byId.get(childId)?.parentSession).toBe(parentId);
    expect(byId.get(childId)?.unlinkedFork).toBeUndefined();

    const parent = await load(url, parentId);
    const child = await load(url, childId);
    expect(child.header.parentSession).toBe(parentId);
    expect(child.header.seedLength).toBe(fixtures.seedLength);
    expect(child.header.metadata?.imported).toMatchObject(fixtures.kept);
    // Fork semantics: the child's first seedLength events are the parent's, verbatim.
    expect(child.events.slice(0, fixtures.seedLength)).toEqual(
      parent.events.slice(0, fixtures.seedLength),
    );
    expect(child.events[fixtures.seedLength]).not.toEqual(parent.events[fixtures.seedLength]);
    // Its own events still say they came from its own file.
    const own = child.events[child.events.length - 1]?.data as { origin?: { file?: string } };
    expect(own.origin?.file).toBe(fixtures.child);
    // The copy ends on a turn boundary: the parent's first turn, whole.
    expect(child.events[fixtures.seedLength - 1]?.type).toBe('turn/end');

    const verify = run('verify', '--all');
    expect([verify.code, verify.stdout]).toEqual([0, expect.not.stringContaining('DAMAGED')]);
    const shown = run('show', childId);
    expect([shown.code, shown.stderr]).toEqual([0, '']);
    expect(shown.stdout).toContain(`forked from ${parentId} at #${fixtures.seedLength - 1}`);
    // `ls` names the parent in the child's row.
    const listed = run('ls');
    expect(listed.stdout.split('\n').find((row) => row.startsWith(childId))).toMatch(
      new RegExp(`${parentId}$`),
    );

    // Idempotent: the same import again adds nothing, and the child stays linked.
    const again = imported(run, dir);
    expect(again.report.sessions.map((s) => [s.result, s.added])).toEqual(
      again.report.sessions.map(() => ['up to date', 0]),
    );
    expect(again.byId.get(childId)?.parentSession).toBe(parentId);
  });

  it('links a child imported in a later run than its parent', async () => {
    const { url, run } = fresh();
    imported(run, fixture(fixtures.parent));
    const { byId } = imported(run, fixture(fixtures.child));
    expect(byId.get(childId)?.parentSession).toBe(parentId);
    expect((await load(url, childId)).header.seedLength).toBe(fixtures.seedLength);
  });

  it('imports a child without its parent standalone, saying why; a parent that comes later leaves it so', async () => {
    const { url, run } = fresh();
    const alone = run('import', '--from', harness, fixture(fixtures.child));
    expect(alone.code).toBe(0);
    expect(alone.stdout).toMatch(/NOT LINKED +PARENT +REASON/);
    expect(alone.stdout).toContain('neither in this import nor in the store');
    const child = await load(url, childId);
    expect(child.header.parentSession).toBeUndefined();
    expect(child.header.metadata?.imported).toMatchObject(fixtures.kept);
    expect(run('verify', childId).code).toBe(0);

    // The parent arrives in a later run: the child's log cannot be rewritten, so it stays
    // standalone, and the summary says how to link it.
    imported(run, fixture(fixtures.parent));
    const later = imported(run, fixture(fixtures.child));
    expect(later.byId.get(childId)?.result).toBe('up to date');
    expect(later.byId.get(childId)?.unlinkedFork?.reason).toContain('imported before its parent');
    expect((await load(url, childId)).header.parentSession).toBeUndefined();
  });

  it('does not link a child whose copy of the history differs from the parent', async () => {
    const { url, run } = fresh();
    const dir = directory([
      ['.', fixtures.parent],
      ['.', fixtures.diverged],
    ]);
    const { report, byId } = imported(run, dir);
    const diverged = byId.get(fixtures.divergedId);
    expect(diverged?.result).toBe('created');
    expect(diverged?.parentSession).toBeUndefined();
    expect(diverged?.unlinkedFork).toMatchObject({
      parent: parentId,
      reason: "its copy of the parent's history differs from the parent's import",
    });
    expect(
      report.skipped[
        "fork not linked: its copy of the parent's history differs from the parent's import"
      ],
    ).toBe(1);
    expect((await load(url, fixtures.divergedId)).header.parentSession).toBeUndefined();
    expect(run('verify', fixtures.divergedId).code).toBe(0);
  });
});

describe('a pi fork of a branch its parent left', () => {
  const dir = join(import.meta.dirname, 'fixtures', 'forks', 'pi-branched');
  const parent = 'pi-6b6b6b6b-0000-4000-8000-00000000000a';
  const child = 'pi-6b6b6b6b-0000-4000-8000-00000000000c';

  it("links to the branch its copy follows, and re-seeds the child's own branches from it", async () => {
    const url = `jsonl:${join(stores.dir, 'pi-branched')}`;
    const result = cli(['--store', url, '--json', 'import', '--from', 'pi', dir]);
    expect([result.code, result.stderr]).toEqual([0, '']);
    const report = JSON.parse(result.stdout) as ImportReport;
    const parentOf = new Map(report.sessions.map((s) => [s.id, s.parentSession]));
    // The copy holds e1..e4: the parent's branch `~e4`, not its active path (e1, e2, e5, e6).
    expect(parentOf.get(child)).toBe(`${parent}~e4`);
    expect(parentOf.get(`${child}~f2`)).toBe(child);

    const store = await openStore(url, { readOnly: true });
    const branch = await store.load(`${parent}~e4`);
    const linked = await store.load(child);
    const own = await store.load(`${child}~f2`);
    await store.close();
    // Two whole turns (e1..e2, e3..e4), of six events each.
    expect(linked.header.seedLength).toBe(12);
    expect(linked.events.slice(0, 12)).toEqual(branch.events.slice(0, 12));
    const ownSeed = own.header.seedLength ?? -1;
    expect(ownSeed).toBe(12);
    expect(own.events.slice(0, ownSeed)).toEqual(linked.events.slice(0, ownSeed));
    const verify = cli(['--store', url, 'verify', '--all']);
    expect([verify.code, verify.stdout]).toEqual([0, expect.not.stringContaining('DAMAGED')]);
  });
});
