/**
 * Every code of `InvalidStoreError` is reachable through the public API, carries its code, says
 * what was expected and what was found, and keeps the CLI's exit code of a usage mistake (2).
 * The `Record` makes this file fail to compile when a code is added without a case.
 *
 * Real files throughout. A missing driver is the built package copied where no node_modules lies
 * above it; `DRIVER_LOAD_FAILED` and `SETTINGS_REFUSED` stand a module in for better-sqlite3 (one
 * that exports no class, one whose SQLite keeps its rollback journal), loaded into a fresh copy
 * of the store modules.
 */
import { execFile } from 'node:child_process';
import { appendFile, cp, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { describeFailure, EXIT } from '../../src/cli/failure.js';
import { PalimpsestError } from '../../src/core/index.js';
import {
  type InvalidStoreCode,
  InvalidStoreError,
  openStore,
  type SessionStore,
} from '../../src/store/index.js';
import { rejection } from '../conformance/helpers.js';
import { event } from '../core/builders.js';

const run = promisify(execFile);
const repo = join(import.meta.dirname, '..', '..');
const root = await mkdtemp(join(tmpdir(), 'palimpsest-store-codes-'));
afterAll(() => rm(root, { recursive: true, force: true }));
let made = 0;
const fresh = (name: string) => join(root, `${++made}-${name}`);

const opened: SessionStore[] = [];
async function open(url: string, options?: Parameters<typeof openStore>[1]) {
  const store = await openStore(url, options);
  opened.push(store);
  return store;
}
afterEach(async () => {
  for (const store of opened.splice(0)) await store.close();
  vi.doUnmock('better-sqlite3');
  vi.resetModules();
});

const header = (id: string) => ({ version: 1 as const, id, createdAt: 1 });
const note = (seq: number) => event(seq, 'app/note', { n: seq });

/**
 * `openStore` of a fresh copy of the store modules, with `driver` standing in for
 * better-sqlite3 (its driver is loaded once per copy, so the copy must be fresh).
 */
async function withDriver(driver: () => object | Promise<object>): Promise<typeof openStore> {
  vi.resetModules();
  vi.doMock('better-sqlite3', driver);
  const store = await import('../../src/store/index.js');
  return store.openStore;
}

interface Case {
  /** Makes the condition and returns the failing operation's promise. */
  reach(): Promise<unknown>;
  /** What the message must hold: what was expected, and what was found. */
  says: (string | RegExp)[];
}

const cases: Record<InvalidStoreCode, Case> = {
  UNKNOWN_SCHEME: {
    reach: () => openStore('s3://bucket/sessions'),
    says: ["unknown store URL 's3://bucket/sessions'", 'expected jsonl:<directory>, sqlite:<file>'],
  },
  INVALID_URL: {
    reach: () => openStore('postgres:host/db'),
    says: [
      "store URL 'postgres:host/db' is not a PostgreSQL URL",
      'expected postgres://user@host:port/database',
    ],
  },
  DRIVER_NOT_INSTALLED: {
    async reach() {
      // The built package, copied where no node_modules lies above it: better-sqlite3 is missing.
      const copy = fresh('package');
      await cp(join(repo, 'dist'), join(copy, 'dist'), { recursive: true });
      await writeFile(join(copy, 'package.json'), '{"type":"module"}');
      const script = `import(${JSON.stringify(join(copy, 'dist', 'store', 'index.js'))})
        .then((store) => store.openStore('sqlite:' + ${JSON.stringify(join(copy, 's.db'))}))
        .catch((error) => process.stdout.write(JSON.stringify({ ...error, name: error.name, message: error.message })));`;
      const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], {
        cwd: copy,
      });
      const thrown = JSON.parse(stdout) as {
        name: string;
        code: InvalidStoreCode;
        message: string;
      };
      // Rebuilt in this process for the checks below, from the child's name, code and message.
      if (thrown.name !== 'InvalidStoreError') throw new Error(`the copy threw ${stdout}`);
      throw new InvalidStoreError(thrown.code, thrown.message);
    },
    says: ['install better-sqlite3@12 to use sqlite: stores'],
  },
  DRIVER_LOAD_FAILED: {
    async reach() {
      const openFresh = await withDriver(() => ({ default: 'not a class' }));
      return openFresh(`sqlite:${fresh('no-class.db')}`);
    },
    says: ['better-sqlite3 did not export its Database class'],
  },
  WRONG_FILE_TYPE: {
    async reach() {
      const dir = fresh('dir.db');
      await mkdir(dir);
      return openStore(`sqlite:${dir}`);
    },
    says: [/dir\.db is not a regular file$/],
  },
  NOT_A_STORE: {
    async reach() {
      const file = fresh('notes.db');
      await writeFile(file, 'these are notes, not pages\n'.repeat(20));
      return openStore(`sqlite:${file}`);
    },
    says: [/notes\.db is not a SQLite database; it was not modified$/],
  },
  SETTINGS_REFUSED: {
    async reach() {
      // A SQLite that keeps its rollback journal, as one without shared memory for WAL would.
      const openFresh = await withDriver(async () => {
        const real = (await vi.importActual<{ default: new (...args: never[]) => object }>(
          'better-sqlite3',
        )) as { default: new (...args: unknown[]) => { pragma(...args: unknown[]): unknown } };
        class KeepsJournal extends real.default {
          override pragma(source: unknown, options?: unknown): unknown {
            if (source === 'journal_mode = WAL') return 'delete';
            return super.pragma(source, options);
          }
        }
        return { default: KeepsJournal };
      });
      return openFresh(`sqlite:${fresh('journal.db')}`);
    },
    says: [
      'did not accept the settings palimpsest needs (journal_mode wal, synchronous 2, foreign_keys true)',
      'found journal_mode delete',
    ],
  },
  READ_ONLY: {
    async reach() {
      const dir = fresh('read-only');
      await (await open(`jsonl:${dir}`)).create(header('s'));
      const store = await open(`jsonl:${dir}`, { readOnly: true });
      return store.create(header('t'));
    },
    says: [/read-only was opened read-only; writes are refused$/],
  },
  LOCK_NOT_HELD: {
    async reach() {
      const store = await open(`sqlite:${fresh('lock.db')}`);
      await store.create(header('s'));
      const lock = await store.lock('s');
      await lock.release();
      return store.discardTornTail('s', { committedSeq: 0, reason: 'none' }, lock);
    },
    says: ["the lock of session 's' is no longer held; lock it again"],
  },
  TORN_TAIL: {
    async reach() {
      const dir = fresh('torn');
      const store = await open(`jsonl:${dir}`);
      await store.create(header('s'));
      await store.append('s', [note(0)], { expectedSeq: 0 });
      const [log] = (await readdir(dir, { recursive: true })).filter((name) =>
        name.endsWith('.jsonl'),
      );
      await appendFile(join(dir, log as string), '{"seq":1,"ti');
      return store.append('s', [note(1)], { expectedSeq: 1 });
    },
    says: [
      "the log of session 's' ends with a torn tail",
      'open it with openSession to repair it first',
    ],
  },
};

describe('InvalidStoreError codes', () => {
  for (const [code, { reach, says }] of Object.entries(cases)) {
    it(`reaches ${code}, says what was expected and found, and exits 2 in the CLI`, async () => {
      const error = await rejection(reach());
      // Not instanceof: the driver cases throw from a fresh copy of the store modules.
      expect(InvalidStoreError.isInstance(error)).toBe(true);
      expect((error as Error).name).toBe('InvalidStoreError');
      expect(PalimpsestError.isInstance(error)).toBe(true);
      const refused = error as InvalidStoreError;
      expect(refused.code).toBe(code);
      for (const text of says) {
        if (typeof text === 'string') expect(refused.message).toContain(text);
        else expect(refused.message).toMatch(text);
      }
      expect(describeFailure(refused)).toEqual({ code: EXIT.usage, message: refused.message });
    });
  }
});
