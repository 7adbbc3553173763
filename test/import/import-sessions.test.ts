/**
 * `importSessions` writes what the readers make, idempotently: a second run adds nothing, a grown
 * file appends only its new part, a rewritten one is refused, and a damaged one writes nothing.
 */
import {
  appendFileSync,
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ImportError, importSessions, parseLines } from '../../src/import/index.js';
import { MemoryStore, type SessionStore } from '../../src/store/index.js';

const fixture = (name: string): string => join(import.meta.dirname, 'fixtures', name);
let dir: string;
let store: SessionStore;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'palimpsest-import-'));
  store = new MemoryStore();
});
afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

function errorOf(run: () => unknown): ImportError {
  try {
    run();
  } catch (error) {
    if (ImportError.isInstance(error)) return error;
    throw error;
  }
  throw new Error('expected an ImportError');
}

async function rejection(promise: Promise<unknown>): Promise<ImportError> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  if (!ImportError.isInstance(error))
    throw new Error(`expected an ImportError, found ${String(error)}`);
  return error;
}

describe('source lines', () => {
  it('a line that is not JSON is MALFORMED_LINE, naming the file and line', () => {
    const error = errorOf(() => parseLines('{"a":1}\n{"b":\n{"c":3}\n', 'x.jsonl'));
    expect([error.code, error.file, error.line]).toEqual(['MALFORMED_LINE', 'x.jsonl', 2]);
    expect(error.message).toContain('x.jsonl, line 2');
  });

  it('a line that is JSON but not an object is MALFORMED_LINE', () => {
    expect(errorOf(() => parseLines('{"a":1}\n[1,2]\n', 'x.jsonl')).line).toBe(2);
  });

  it('a final line cut short is TRUNCATED_LINE, or left for later while the file is written', () => {
    const text = '{"a":1}\n{"b":2}\n{"c":';
    const error = errorOf(() => parseLines(text, 'x.jsonl'));
    expect([error.code, error.line]).toEqual(['TRUNCATED_LINE', 3]);
    expect(parseLines(text, 'x.jsonl', { partialTail: 'wait' }).map((l) => l.line)).toEqual([1, 2]);
  });
});

describe('importSessions', () => {
  it('writes every session of a file, then adds nothing when run again', async () => {
    const first = await importSessions({ from: 'pi', path: fixture('pi.jsonl'), store });
    expect(first.sessions.map((s) => s.result)).toEqual(['created', 'created']);
    const again = await importSessions({ from: 'pi', path: fixture('pi.jsonl'), store });
    expect(again.sessions.map((s) => [s.result, s.added])).toEqual([
      ['up to date', 0],
      ['up to date', 0],
    ]);
    const stored = await store.load(first.sessions[0]?.id ?? '');
    expect(stored.events).toHaveLength(first.sessions[0]?.events ?? -1);
  });

  it('appends only the new part of a file that grew, giving what a fresh import of it gives', async () => {
    const lines = readFileSync(fixture('codex.jsonl'), 'utf8').split('\n');
    const path = join(dir, 'rollout.jsonl');
    // Cut after the first turn's task_complete (line 24).
    writeFileSync(path, `${lines.slice(0, 24).join('\n')}\n`);
    const before = await importSessions({ from: 'codex', path, store });
    appendFileSync(path, lines.slice(24).join('\n'));
    const after = await importSessions({ from: 'codex', path, store });
    const [session] = after.sessions;
    expect(session?.result).toBe('appended');
    expect(session?.added).toBe((session?.events ?? 0) - (before.sessions[0]?.events ?? 0));

    const fresh = new MemoryStore();
    await importSessions({ from: 'codex', path, store: fresh });
    const id = session?.id ?? '';
    expect((await store.load(id)).events).toEqual((await fresh.load(id)).events);
    await fresh.close();
  });

  it('while the harness writes a response line by line, waits for its end instead of diverging', async () => {
    const lines = readFileSync(fixture('claude-code.jsonl'), 'utf8').split('\n');
    const path = join(dir, 'live.jsonl');
    // Cut between the two lines of one response (msg_04, lines 15 and 16).
    writeFileSync(path, `${lines.slice(0, 15).join('\n')}\n`);
    const held = await importSessions({ from: 'claude-code', path, store, partialTail: 'wait' });
    writeFileSync(path, lines.join('\n'));
    const grown = await importSessions({ from: 'claude-code', path, store, partialTail: 'wait' });
    expect(grown.sessions[0]?.result).toBe('appended');
    expect(grown.sessions[0]?.added).toBeGreaterThan(0);
    expect(held.sessions[0]?.events).toBeLessThan(grown.sessions[0]?.events ?? 0);

    // Read as finished, the cut file gives the response's first line as a whole message, which the
    // grown file then contradicts.
    const other = new MemoryStore();
    writeFileSync(path, `${lines.slice(0, 15).join('\n')}\n`);
    await importSessions({ from: 'claude-code', path, store: other });
    writeFileSync(path, lines.join('\n'));
    const error = await rejection(importSessions({ from: 'claude-code', path, store: other }));
    expect(error.code).toBe('SOURCE_DIVERGED');
    await other.close();
  });

  it('refuses a source that was rewritten rather than grown, and writes nothing', async () => {
    const path = join(dir, 'session.jsonl');
    copyFileSync(fixture('pi.jsonl'), path);
    const first = await importSessions({ from: 'pi', path, store });
    writeFileSync(path, readFileSync(path, 'utf8').replace('List the source files.', 'List them.'));
    const error = await rejection(importSessions({ from: 'pi', path, store }));
    expect(error.code).toBe('SOURCE_DIVERGED');
    const id = first.sessions[0]?.id ?? '';
    expect((await store.load(id)).events).toHaveLength(first.sessions[0]?.events ?? -1);
  });

  it('writes nothing of a file with a malformed line, and names the line', async () => {
    const path = join(dir, 'session.jsonl');
    const lines = readFileSync(fixture('claude-code.jsonl'), 'utf8').split('\n');
    lines[12] = '{"type":"user","uuid":';
    writeFileSync(path, lines.join('\n'));
    const error = await rejection(importSessions({ from: 'claude-code', path, store }));
    expect([error.code, error.line]).toEqual(['MALFORMED_LINE', 13]);
    expect((await store.list()).sessions).toHaveLength(0);
  });

  it('refuses a file of another harness given by name, and names the one it looks like', async () => {
    const error = await rejection(
      importSessions({ from: 'pi', path: fixture('codex.jsonl'), store }),
    );
    expect(error.code).toBe('UNKNOWN_FORMAT');
    expect(error.message).toContain('--from codex');
  });

  it('in a directory, reads every .jsonl below it and counts files of another harness', async () => {
    mkdirSync(join(dir, 'a', 'b'), { recursive: true });
    copyFileSync(fixture('claude-code.jsonl'), join(dir, 'a', 'one.jsonl'));
    copyFileSync(fixture('pi.jsonl'), join(dir, 'a', 'b', 'two.jsonl'));
    writeFileSync(join(dir, 'notes.txt'), 'not a session');
    const report = await importSessions({ from: 'claude-code', path: dir, store });
    expect(report.files).toBe(2);
    expect(report.sessions.map((s) => s.id)).toEqual([
      'claude-code-one',
      'claude-code-one~c0000000-0000-4000-8000-000000000009',
    ]);
    expect(report.skipped['file not in the claude-code format']).toBe(1);
  });

  it('a missing path or a directory without session files is NO_SOURCE', async () => {
    expect(
      (await rejection(importSessions({ from: 'pi', path: join(dir, 'nope'), store }))).code,
    ).toBe('NO_SOURCE');
    expect((await rejection(importSessions({ from: 'pi', path: dir, store }))).code).toBe(
      'NO_SOURCE',
    );
  });

  it('a file without conversation yields no session', async () => {
    const path = join(dir, 'titles.jsonl');
    writeFileSync(path, '{"type":"summary","summary":"x","leafUuid":"u"}\n');
    const report = await importSessions({ from: 'claude-code', path, store });
    expect(report.sessions).toEqual([]);
    expect(report.skipped['file with no conversation']).toBe(1);
  });
});
