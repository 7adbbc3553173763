/**
 * The ledger of a SQLite store: a small append-only file beside the database
 * (`<file>-lengths`) that records, after each commit, which sessions exist and how many events
 * each has committed. SQLite keeps no record of what it lost: a damaged WAL frame makes it drop
 * that frame and every later one at the next open, without an error, so a database alone cannot
 * tell a truncated session from a short one. The ledger lives in another file, so the same
 * damage cannot erase it, and a load or `list` that finds fewer events (or no session) than it
 * records reports a `CorruptLogError`.
 *
 * Each line is `<JSON record> <CRC-32 of the JSON, 8 hex digits>\n`, the record one of
 * `["c", key, 0, id]` (created), `["a", key, length]` (committed up to `length`) and
 * `["d", key]` (about to be deleted). Session keys are never reused (`AUTOINCREMENT`), so the
 * records of one key describe one session.
 *
 * Why it can never raise a false alarm after a crash: a record is written only after the
 * transaction it describes has committed (and, with `synchronous: 'full'`, been fsynced), so the
 * database is always at least as long as the ledger says; a crash between the two writes leaves
 * the ledger behind, never ahead. A delete is the one operation that shrinks what exists, so its
 * record is written, and fsynced, before the delete commits; a delete that then fails writes the
 * session's length again, which revives it. The ledger is not fsynced after appends: its job is
 * to detect media damage, not to survive a power cut, and a power cut that drops its last
 * records only makes it a weaker bound. Lines that fail their checksum (a torn last write) are
 * skipped for the same reason: a record less can hide a loss, never invent one.
 */
import { closeSync, constants, fstatSync, fsyncSync, openSync, readSync, writeSync } from 'node:fs';
import { crc32Text } from '../contract/crc32.js';
import { StorageError, UnsafeFileError } from '../contract/errors.js';

/** What the ledger records of one session key. */
export interface LedgerEntry {
  /** The id its create record names (absent if that record was lost). */
  id?: string;
  /** The most events any record says were committed. */
  length: number;
  /** Whether the last word about it is a delete. */
  deleted: boolean;
}

/** The suffix of the ledger file's name, after the database file's. */
export const LEDGER_SUFFIX = '-lengths';

type LedgerRecord =
  | readonly ['c', number, number, string]
  | readonly ['a', number, number]
  | readonly ['d', number];

/** An open ledger: the records read so far and, for a writer, the file to append to. */
export class Ledger {
  readonly path: string;
  readonly #entries = new Map<number, LedgerEntry>();
  /** Bytes read so far: up to the end of the last complete line. */
  #offset = 0;
  #fd: number | undefined;
  readonly #writable: boolean;

  private constructor(path: string, fd: number | undefined, writable: boolean) {
    this.path = path;
    this.#fd = fd;
    this.#writable = writable;
  }

  /**
   * Opens the ledger of the database at `dbPath`: for appending (created, mode 0600, if absent)
   * or, read-only, without creating anything (`undefined` when there is none).
   */
  static open(dbPath: string, writable: boolean): Ledger | undefined {
    const path = `${dbPath}${LEDGER_SUFFIX}`;
    let fd: number;
    try {
      // Non-blocking and not through a link: a FIFO planted under the ledger's name must not
      // hang the open, nor a link send the records elsewhere; the type is checked below.
      const flags =
        (writable
          ? constants.O_RDWR | constants.O_APPEND | constants.O_CREAT
          : constants.O_RDONLY) |
        constants.O_NONBLOCK |
        constants.O_NOFOLLOW;
      fd = openSync(path, flags, 0o600);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (!writable && code === 'ENOENT') return undefined;
      if (code === 'ELOOP') throw new UnsafeFileError(path, 'a symbolic link');
      throw new StorageError(`cannot open the ledger ${path}`, { cause: error });
    }
    const stats = fstatSync(fd);
    if (!stats.isFile()) {
      closeSync(fd);
      throw new UnsafeFileError(
        path,
        stats.isFIFO()
          ? 'a FIFO'
          : stats.isDirectory()
            ? 'a directory'
            : 'something other than a regular file',
      );
    }
    return new Ledger(path, fd, writable);
  }

  /** Whether the file holds no record yet. */
  isEmpty(): boolean {
    this.refresh();
    return this.#offset === 0;
  }

  /** A copy of the records of every key, read up to the current end of the file. */
  snapshot(): ReadonlyMap<number, LedgerEntry> {
    this.refresh();
    return new Map([...this.#entries].map(([key, entry]) => [key, { ...entry }]));
  }

  /** Whether the ledger, read up to its current end, says the session of `key` is deleted. */
  deletedNow(key: number): boolean {
    this.refresh();
    return this.#entries.get(key)?.deleted === true;
  }

  /** The records of every key, read up to the current end of the file. */
  entries(): ReadonlyMap<number, LedgerEntry> {
    this.refresh();
    return this.#entries;
  }

  /** Reads the records appended since the last call (by any process). */
  refresh(): void {
    const fd = this.#fd;
    if (fd === undefined) return;
    let size: number;
    try {
      size = fstatSync(fd).size;
      if (size <= this.#offset) return;
      const bytes = Buffer.alloc(size - this.#offset);
      const read = readSync(fd, bytes, 0, bytes.length, this.#offset);
      const text = bytes.toString('utf8', 0, read);
      const end = text.lastIndexOf('\n');
      if (end === -1) return;
      for (const line of text.slice(0, end).split('\n')) this.#apply(line);
      this.#offset += Buffer.byteLength(text.slice(0, end + 1));
    } catch (error) {
      throw new StorageError(`cannot read the ledger ${this.path}`, { cause: error });
    }
  }

  /** Records a created session (after its transaction committed). */
  created(key: number, id: string): void {
    this.#write(['c', key, 0, id], false);
  }

  /** Records a session's committed length (after its transaction committed). */
  committed(key: number, length: number): void {
    this.#write(['a', key, length], false);
  }

  /** Records, durably, that a session is about to be deleted (before the delete commits). */
  deleting(key: number): void {
    this.#write(['d', key], true);
  }

  close(): void {
    if (this.#fd === undefined) return;
    const fd = this.#fd;
    this.#fd = undefined;
    closeSync(fd);
  }

  #write(record: LedgerRecord, sync: boolean): void {
    const fd = this.#fd;
    if (fd === undefined || !this.#writable) return;
    const json = JSON.stringify(record);
    const line = `${json} ${crc32Text(json).toString(16).padStart(8, '0')}\n`;
    try {
      // One write of one line in append mode: concurrent writers' lines never interleave.
      writeSync(fd, line);
      if (sync) fsyncSync(fd);
    } catch (error) {
      throw new StorageError(`cannot write the ledger ${this.path}`, { cause: error });
    }
  }

  #apply(line: string): void {
    const space = line.lastIndexOf(' ');
    if (space === -1) return;
    const json = line.slice(0, space);
    if (line.slice(space + 1) !== crc32Text(json).toString(16).padStart(8, '0')) return;
    let record: unknown;
    try {
      record = JSON.parse(json);
    } catch {
      return;
    }
    if (!Array.isArray(record) || typeof record[1] !== 'number') return;
    const key = record[1];
    const entry = this.#entries.get(key) ?? { length: 0, deleted: false };
    this.#entries.set(key, entry);
    switch (record[0]) {
      case 'c':
        if (typeof record[3] === 'string') entry.id = record[3];
        break;
      case 'a':
        if (typeof record[2] === 'number') entry.length = Math.max(entry.length, record[2]);
        entry.deleted = false;
        break;
      case 'd':
        entry.deleted = true;
        break;
    }
  }
}
