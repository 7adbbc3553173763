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
 * `["i", ledger id]` (the ledger's identity, which the database names: `pairing.ts`),
 * `["c", key, 0, id]` (created), `["p", key, length]` (an append up to `length` about to
 * commit), `["a", key, length]` (committed up to `length`) and `["d", key]` (about to be
 * deleted). Session keys are never reused (`AUTOINCREMENT`), so the
 * records of one key describe one session.
 *
 * Why it can never raise a false alarm after a crash: a record is written only after the
 * transaction it describes has committed (and, with `synchronous: 'full'`, been fsynced), so the
 * database is always at least as long as the ledger says; a crash between the two writes leaves
 * the ledger behind, never ahead. A delete is the one operation that shrinks what exists, so its
 * record is written, and fsynced, before the delete commits; a delete that then fails writes the
 * session's length again, which revives it. Lines that fail their checksum (a torn last write)
 * are skipped: a record less can hide a loss, never invent one.
 *
 * Only `a` records count as commits: a `p` record, written inside the append's transaction just
 * before it commits, may describe one that never did. It says that the ledger was there when
 * the session reached that length, before any row could say so. The ledger is not fsynced on
 * the path of an append: a writer fsyncs it in the background after each commit
 * ({@link Ledger.syncSoon}), and tracks which records are on disk. The database keeps, per
 * session, a length the ledger durably held when the session was last written
 * (`sessions.vouched`), so a ledger that has seen less is older than the database (a stale copy)
 * rather than one a crash or a power cut cut short (`ledger-checks.ts`).
 */
import {
  closeSync,
  constants,
  fdatasync,
  fdatasyncSync,
  fstatSync,
  fsyncSync,
  openSync,
  readSync,
  writeSync,
} from 'node:fs';
import { dirname } from 'node:path';
import { crc32Text } from '../contract/crc32.js';
import { StorageError, UnsafeFileError } from '../contract/errors.js';

/** What the ledger records of one session key. */
export interface LedgerEntry {
  /** The id its create record names (absent if that record was lost). */
  id?: string;
  /** The most events any record says were committed. */
  length: number;
  /**
   * The most events any record names: committed, or about to be (-1 for none, 0 for a create):
   * what the ledger has seen of the session.
   */
  seen: number;
  /**
   * The most events a record known to be on disk names (as `seen`): what a power cut cannot
   * take from the ledger.
   */
  durable: number;
  /** Whether the last word about it is a delete. */
  deleted: boolean;
}

/** The suffix of the ledger file's name, after the database file's. */
export const LEDGER_SUFFIX = '-lengths';

/** The ledger's path for the database at `dbPath`. */
export function ledgerPath(dbPath: string): string {
  return `${dbPath}${LEDGER_SUFFIX}`;
}

/**
 * How to open a ledger: `'read'` without writing or creating anything; `'write'` for appending
 * to one that exists; `'create'` for appending, creating it (mode 0600) if absent.
 */
export type LedgerMode = 'read' | 'write' | 'create';

type LedgerRecord =
  | readonly ['i', string]
  | readonly ['c', number, number, string]
  | readonly ['p', number, number]
  | readonly ['a', number, number]
  | readonly ['d', number];

/** A record read past the durable offset: its length becomes durable once a sync covers it. */
interface PendingRecord {
  readonly key: number;
  readonly length: number;
  /** The offset just past its line. */
  readonly end: number;
}

/** An open ledger: the records read so far and, for a writer, the file to append to. */
export class Ledger {
  readonly path: string;
  readonly #entries = new Map<number, LedgerEntry>();
  readonly #identities = new Set<string>();
  /** Bytes read so far: up to the end of the last complete line. */
  #offset = 0;
  /** Bytes known to be on disk: every byte before this offset was written before an fsync. */
  #synced = 0;
  readonly #pending: PendingRecord[] = [];
  #fd: number | undefined;
  readonly #writable: boolean;
  /**
   * The background fsync in flight, if any (resolving to whether it succeeded), and whether
   * records were written since it began.
   */
  #syncing: Promise<boolean> | undefined;
  #again = false;

  private constructor(path: string, fd: number, writable: boolean) {
    this.path = path;
    this.#fd = fd;
    this.#writable = writable;
  }

  /**
   * Opens the ledger of the database at `dbPath` (see {@link LedgerMode}); `undefined` when
   * there is none and `mode` is not `'create'`.
   */
  static open(dbPath: string, mode: 'create'): Ledger;
  static open(dbPath: string, mode: LedgerMode): Ledger | undefined;
  static open(dbPath: string, mode: LedgerMode): Ledger | undefined {
    const path = ledgerPath(dbPath);
    let fd: number;
    try {
      // Non-blocking and not through a link: a FIFO planted under the ledger's name must not
      // hang the open, nor a link send the records elsewhere; the type is checked below.
      const flags =
        (mode === 'read'
          ? constants.O_RDONLY
          : constants.O_RDWR | constants.O_APPEND | (mode === 'create' ? constants.O_CREAT : 0)) |
        constants.O_NONBLOCK |
        constants.O_NOFOLLOW;
      fd = openSync(path, flags, 0o600);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (mode !== 'create' && code === 'ENOENT') return undefined;
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
    return new Ledger(path, fd, mode !== 'read');
  }

  /** The identities its `i` records name (normally one), read up to the current end. */
  identities(): ReadonlySet<string> {
    this.refresh();
    return this.#identities;
  }

  /** Whether it records any session (a create, commit or delete), read up to the current end. */
  holdsSessions(): boolean {
    this.refresh();
    return this.#entries.size > 0;
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
    try {
      const size = fstatSync(fd).size;
      if (size <= this.#offset) return;
      const bytes = Buffer.alloc(size - this.#offset);
      const read = readSync(fd, bytes, 0, bytes.length, this.#offset);
      const end = bytes.subarray(0, read).lastIndexOf(0x0a);
      if (end === -1) return;
      const text = bytes.toString('utf8', 0, end);
      // Only a read that crosses the durable offset needs each line's end.
      const allDurable = this.#offset + end + 1 <= this.#synced;
      let at = this.#offset;
      for (const line of text.split('\n')) {
        at += allDurable ? 0 : Buffer.byteLength(line) + 1;
        this.#apply(line, allDurable ? 0 : at);
      }
      this.#offset += end + 1;
    } catch (error) {
      throw new StorageError(`cannot read the ledger ${this.path}`, { cause: error });
    }
  }

  /**
   * Records the ledger's identity, durably (before a database names it): the record, and the
   * directory entry of a ledger this open may have created.
   */
  identify(id: string): void {
    this.#write(['i', id]);
    this.syncNow();
    syncDirectory(dirname(this.path));
  }

  /** States the identity again (not fsynced: the first statement of it was). */
  restate(id: string): void {
    this.#write(['i', id]);
    this.syncSoon();
  }

  /**
   * Records a created session (after its transaction committed); returns an offset past its
   * record, for {@link Ledger.syncedThrough}.
   */
  created(key: number, id: string): number {
    return this.#write(['c', key, 0, id]);
  }

  /**
   * Records that an append is about to commit a session up to `length` (inside its transaction,
   * just before the commit); returns an offset past its record, for {@link Ledger.syncedThrough}.
   */
  committing(key: number, length: number): number {
    return this.#write(['p', key, length]);
  }

  /**
   * Records a session's committed length (after its transaction committed); returns an offset
   * past its record, for {@link Ledger.syncedThrough}.
   */
  committed(key: number, length: number): number {
    return this.#write(['a', key, length]);
  }

  /** Records, durably, that a session is about to be deleted (before the delete commits). */
  deleting(key: number): void {
    this.#write(['d', key]);
    this.syncNow();
  }

  /**
   * Erases the id of a deleted session from the ledger, in place: each of its create records is
   * overwritten by one of the same length that names no id (its id blanked, JSON spaces in its
   * place, its checksum recomputed), then the file is fsynced. Other writers only ever append, so
   * nothing of theirs is touched; a reader that meets a line mid-write skips it by its checksum,
   * which can hide a record, never invent one. Call after the delete committed.
   */
  eraseId(key: number): void {
    if (this.#fd === undefined || !this.#writable) return;
    const entry = this.#entries.get(key);
    if (entry !== undefined) delete entry.id;
    // A descriptor of its own: ours appends (O_APPEND), and Linux appends a positioned write
    // made through one instead of writing where it was asked.
    let fd: number | undefined;
    try {
      fd = openSync(this.path, 'r+');
      const size = fstatSync(fd).size;
      const bytes = Buffer.alloc(size);
      let read = 0;
      while (read < size) {
        const got = readSync(fd, bytes, read, size - read, read);
        if (got === 0) break;
        read += got;
      }
      let start = 0;
      while (start < read) {
        let end = bytes.indexOf(0x0a, start);
        if (end === -1) end = read;
        const blank = blankedCreate(bytes.toString('utf8', start, end), key);
        if (blank !== undefined && Buffer.byteLength(blank) === end - start) {
          writeSync(fd, blank, start, 'utf8');
        }
        start = end + 1;
      }
      fdatasyncSync(fd);
    } catch (error) {
      throw new StorageError(
        `the session was deleted, but its id could not be erased from the ledger ${this.path}`,
        { cause: error },
      );
    } finally {
      if (fd !== undefined) closeSync(fd);
    }
  }

  /**
   * Fsyncs the file: every record written so far, by any process, is then on disk (`fdatasync`:
   * the data and the size that reaches it, as SQLite syncs its WAL).
   */
  syncNow(): void {
    const fd = this.#fd;
    if (fd === undefined || !this.#writable) return;
    try {
      const size = fstatSync(fd).size;
      fdatasyncSync(fd);
      this.#markSynced(size);
    } catch (error) {
      throw new StorageError(`cannot fsync the ledger ${this.path}`, { cause: error });
    }
  }

  /**
   * Fsyncs the file in the background (one fsync at a time; another follows when records were
   * written meanwhile). A failure only leaves the records it would have covered not known to be
   * durable: the database then vouches for less.
   */
  syncSoon(): void {
    const fd = this.#fd;
    if (fd === undefined || !this.#writable) return;
    if (this.#syncing !== undefined) {
      this.#again = true;
      return;
    }
    let size: number;
    try {
      size = fstatSync(fd).size;
    } catch {
      return;
    }
    this.#again = false;
    this.#syncing = new Promise((resolve) => {
      fdatasync(fd, (error) => {
        this.#syncing = undefined;
        if (error === null && this.#fd === fd) this.#markSynced(size);
        if (this.#again) this.syncSoon();
        resolve(error === null);
      });
    });
  }

  /**
   * Resolves once every byte before `offset` is known to be on disk (background fsyncs, one at a
   * time), or once an fsync fails or the ledger closes: then the records stay not known durable.
   */
  async syncedThrough(offset: number): Promise<void> {
    while (this.#synced < offset && this.#fd !== undefined) {
      if (this.#syncing === undefined) this.syncSoon();
      const syncing = this.#syncing;
      if (syncing === undefined || !(await syncing)) return;
    }
  }

  /** Resolves once no background fsync is in flight (call before closing). */
  async settled(): Promise<void> {
    while (this.#syncing !== undefined) await this.#syncing;
  }

  close(): void {
    if (this.#fd === undefined) return;
    const fd = this.#fd;
    this.#fd = undefined;
    closeSync(fd);
  }

  /** Appends one record; returns the file's size after it (past the record). */
  #write(record: LedgerRecord): number {
    const fd = this.#fd;
    if (fd === undefined || !this.#writable) return 0;
    const json = JSON.stringify(record);
    const line = `${json} ${crc32Text(json).toString(16).padStart(8, '0')}\n`;
    try {
      // One write of one line in append mode: concurrent writers' lines never interleave.
      writeSync(fd, line);
      return fstatSync(fd).size;
    } catch (error) {
      throw new StorageError(`cannot write the ledger ${this.path}`, { cause: error });
    }
  }

  #markSynced(offset: number): void {
    if (offset <= this.#synced) return;
    this.#synced = offset;
    let kept = 0;
    for (const record of this.#pending) {
      if (record.end <= offset) this.#makeDurable(record.key, record.length);
      else this.#pending[kept++] = record;
    }
    this.#pending.length = kept;
  }

  #makeDurable(key: number, length: number): void {
    const entry = this.#entries.get(key);
    if (entry !== undefined) entry.durable = Math.max(entry.durable, length);
  }

  /** Applies one line; `end` is the offset just past it (0: known to be durable). */
  #apply(line: string, end: number): void {
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
    if (!Array.isArray(record)) return;
    if (record[0] === 'i') {
      if (typeof record[1] === 'string') this.#identities.add(record[1]);
      return;
    }
    if (typeof record[1] !== 'number') return;
    const key = record[1];
    const entry = this.#entries.get(key) ?? { length: 0, seen: -1, durable: -1, deleted: false };
    this.#entries.set(key, entry);
    let length: number | undefined;
    switch (record[0]) {
      case 'c':
        // An empty id is one erased after its session was deleted (`eraseId`).
        if (typeof record[3] === 'string' && record[3] !== '') entry.id = record[3];
        length = 0;
        break;
      case 'p':
        if (typeof record[2] === 'number') length = record[2];
        break;
      case 'a':
        if (typeof record[2] === 'number') {
          entry.length = Math.max(entry.length, record[2]);
          length = record[2];
        }
        entry.deleted = false;
        break;
      case 'd':
        entry.deleted = true;
        break;
    }
    if (length === undefined) return;
    entry.seen = Math.max(entry.seen, length);
    // Only a writer vouches for records; a reader never learns which are on disk.
    if (!this.#writable) return;
    if (end <= this.#synced) entry.durable = Math.max(entry.durable, length);
    else this.#pending.push({ key, length, end });
  }
}

/**
 * The line that replaces a create record of session `key` to forget its id: the same record with
 * an empty id, padded with JSON whitespace to the original's length; `undefined` for any other
 * line (or one already blank).
 */
function blankedCreate(line: string, key: number): string | undefined {
  const space = line.lastIndexOf(' ');
  if (space === -1) return undefined;
  const json = line.slice(0, space);
  if (line.slice(space + 1) !== crc32Text(json).toString(16).padStart(8, '0')) return undefined;
  let record: unknown;
  try {
    record = JSON.parse(json);
  } catch {
    return undefined;
  }
  if (!Array.isArray(record) || record[0] !== 'c' || record[1] !== key) return undefined;
  if (typeof record[3] !== 'string' || record[3] === '') return undefined;
  const bare = JSON.stringify(['c', key, record[2], '']);
  const padded = `${bare.slice(0, -1)}${' '.repeat(Buffer.byteLength(json) - Buffer.byteLength(bare))}]`;
  return `${padded} ${crc32Text(padded).toString(16).padStart(8, '0')}`;
}

/** Makes the entries of `directory` durable (a ledger just created in it). */
function syncDirectory(directory: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(directory, constants.O_RDONLY);
    fsyncSync(fd);
  } catch (error) {
    // Windows cannot fsync a directory (and does not need to); elsewhere it is a real failure.
    const code = (error as NodeJS.ErrnoException).code ?? '';
    if (!(process.platform === 'win32' && ['EPERM', 'EISDIR', 'EINVAL'].includes(code))) {
      throw new StorageError(`cannot fsync the directory of the ledger ${directory}`, {
        cause: error,
      });
    }
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
