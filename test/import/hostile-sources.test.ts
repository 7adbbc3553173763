/**
 * Sources that are not plain session files, and runs that meet them: a FIFO or a device is
 * refused at once, a file too large for one read is refused naming it, one damaged file in a
 * directory does not stop the others (also in each round of a watch), and imports of one file
 * running at once all end up to date.
 */
import { execFileSync } from 'node:child_process';
import {
  closeSync,
  copyFileSync,
  ftruncateSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  ImportError,
  importSessions,
  MAX_SOURCE_BYTES,
  watchImports,
} from '../../src/import/index.js';
import { openStore, type SessionStore } from '../../src/store/index.js';

const fixture = (name: string): string => join(import.meta.dirname, 'fixtures', name);
let dir: string;
let store: SessionStore;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'palimpsest-hostile-'));
  store = await openStore(`jsonl:${join(dir, 'store')}`);
});
afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

async function importError(path: string): Promise<ImportError> {
  const error = await importSessions({ from: 'codex', path, store }).then(
    () => undefined,
    (reason: unknown) => reason,
  );
  if (!ImportError.isInstance(error)) throw new Error(`expected an ImportError, found ${error}`);
  return error;
}

describe('sources that are not regular files', () => {
  it('refuses a FIFO no one writes to at once, with NOT_A_FILE naming it', async () => {
    const fifo = join(dir, 'rollout.jsonl');
    execFileSync('mkfifo', [fifo]);
    const error = await importError(fifo);
    expect([error.code, error.file]).toEqual(['NOT_A_FILE', fifo]);
    expect(error.message).toContain('found a FIFO');
  });

  it('refuses a device such as /dev/zero instead of reading it forever', async () => {
    const error = await importError('/dev/zero');
    expect(error.code).toBe('NOT_A_FILE');
    expect(error.message).toContain('character device');
  });

  it('refuses a file larger than one read can hold with FILE_TOO_LARGE, writing nothing', async () => {
    const big = join(dir, 'huge.jsonl');
    const fd = openSync(big, 'w');
    ftruncateSync(fd, MAX_SOURCE_BYTES + 1); // sparse: no disk space is used
    closeSync(fd);
    const error = await importError(big);
    expect([error.code, error.file]).toEqual(['FILE_TOO_LARGE', big]);
    expect(error.message).toContain(String(MAX_SOURCE_BYTES + 1));
    expect((await store.list()).sessions).toEqual([]);
  });
});

describe('a directory with a damaged file', () => {
  function sources(): string {
    const source = join(dir, 'sources');
    mkdirSync(join(source, 'b'), { recursive: true });
    copyFileSync(fixture('codex.jsonl'), join(source, 'a-good.jsonl'));
    writeFileSync(join(source, 'b', 'damaged.jsonl'), '{"timestamp":"x","type":"session_meta"\n');
    const other = readFileSync(fixture('codex.jsonl'), 'utf8').replaceAll(
      '019a2b3c-4d5e-7f60-8a9b-0c1d2e3f4a5b',
      '019a2b3c-4d5e-7f60-8a9b-0c1d2e3f4a5c',
    );
    writeFileSync(join(source, 'c-other.jsonl'), other);
    return source;
  }

  it('imports every other file and reports the damaged one with its code', async () => {
    const source = sources();
    const report = await importSessions({ from: 'codex', path: source, store });
    expect(report.failed).toEqual([
      {
        file: join(source, 'b', 'damaged.jsonl'),
        code: 'MALFORMED_LINE',
        message: expect.stringContaining('damaged.jsonl, line 1'),
      },
    ]);
    expect(report.sessions.map((session) => session.result)).toEqual(['created', 'created']);
  });

  it('reports the damaged file in every round of a watch, and imports the rest', async () => {
    const source = sources();
    const controller = new AbortController();
    const rounds: { failed: number; sessions: number }[] = [];
    await watchImports({
      from: 'codex',
      path: source,
      store,
      signal: controller.signal,
      intervalMs: 5,
      onImport: (report) => {
        rounds.push({ failed: report.failed.length, sessions: report.sessions.length });
        if (rounds.length === 1) writeFileSync(join(source, 'd-new.jsonl'), '');
        else controller.abort();
      },
    });
    expect(rounds).toEqual([
      { failed: 1, sessions: 2 },
      { failed: 1, sessions: 2 },
    ]);
  });
});

describe('imports of one file at once', () => {
  it('end up to date, not ALREADY_EXISTS, with one copy of the session', async () => {
    const path = fixture('codex.jsonl');
    const reports = await Promise.all(
      Array.from({ length: 4 }, () => importSessions({ from: 'codex', path, store })),
    );
    const outcomes = reports.map((report) => report.sessions[0]);
    const results = outcomes.map((outcome) => outcome?.result);
    // One import made the session; the events were written once, by it or by one that found
    // the session made but still empty (and says 'appended'); the others found it whole.
    expect(results.filter((result) => result === 'created')).toHaveLength(1);
    expect(results.filter((result) => result === 'appended').length).toBeLessThanOrEqual(1);
    const added = outcomes.reduce((sum, outcome) => sum + (outcome?.added ?? 0), 0);
    expect(added).toBe(outcomes[0]?.events);
    const listed = (await store.list()).sessions;
    expect(listed).toHaveLength(1);
    expect((await store.load(listed[0]?.header.id ?? '')).events).toHaveLength(
      reports[0]?.sessions[0]?.events ?? -1,
    );
  });
});
