/**
 * Typed errors of the stores. Each carries a stable `code` and the facts a caller needs to act,
 * in fields; messages stay short and never include event payloads.
 */
import { PalimpsestError } from '../../core/index.js';

/** No session with that id exists in the store. */
export class NotFoundError extends PalimpsestError {
  static override readonly kind: string = 'NotFoundError';
  declare readonly code: 'NOT_FOUND';
  constructor(
    readonly sessionId: string,
    readonly location: string,
  ) {
    super('NOT_FOUND', `session '${short(sessionId)}' does not exist in ${location}`);
  }
}

/** `create` found a session with that id already; nothing was overwritten. */
export class AlreadyExistsError extends PalimpsestError {
  static override readonly kind: string = 'AlreadyExistsError';
  declare readonly code: 'ALREADY_EXISTS';
  constructor(
    readonly sessionId: string,
    readonly location: string,
  ) {
    super(
      'ALREADY_EXISTS',
      `session '${short(sessionId)}' already exists in ${location}; nothing was overwritten`,
    );
  }
}

/**
 * An append named a different next seq than the store holds: another writer appended, or the
 * caller's view is stale. Nothing was written.
 */
export class ConflictError extends PalimpsestError {
  static override readonly kind: string = 'ConflictError';
  declare readonly code: 'CONFLICT';
  constructor(
    readonly sessionId: string,
    /** The seq the caller expected to write next. */
    readonly expectedSeq: number,
    /** The seq the store holds as next. */
    readonly actualSeq: number,
  ) {
    super(
      'CONFLICT',
      `append to session '${short(sessionId)}' expected next seq ${expectedSeq}, but the store's next seq is ${actualSeq}; reload the session before writing`,
    );
  }
}

/** Who holds a session's writer lock. */
export interface LockOwner {
  readonly pid: number;
  readonly host: string;
  /** When the lock was taken, epoch ms. */
  readonly since: number;
  /** Random token of this acquisition. */
  readonly token: string;
  /** Process start time (Linux boot-relative clock ticks), to tell a reused pid apart. */
  readonly processStart?: number;
  /** Kernel boot id, to tell a lock from before a reboot apart. */
  readonly bootId?: string;
  /**
   * How often the holder refreshes the lock, in ms, when it does (absent in records of writers
   * that do not heartbeat). A lock not refreshed within the store's stale bound is taken over.
   */
  readonly heartbeatMs?: number;
}

/**
 * Why a store respects a lock, as far as it can tell: its owner is a process running on this
 * host (checked by pid, start time and boot id), or it runs elsewhere and refreshed the lock
 * within the stale bound.
 */
export interface LockHolderState {
  /** `'running'`: a process of this host; `'fresh'`: another host's, heartbeat recent. */
  readonly basis: 'running' | 'fresh';
  /** When the holder last refreshed the lock (its heartbeat, else when it was taken), epoch ms. */
  readonly refreshedAt: number;
  /** A lock not refreshed for this long is stale and taken over, ms. */
  readonly staleMs: number;
  /**
   * When the store judged the lock, epoch ms by the store's lock clock: the age in a
   * `LockedError` message is measured to it (absent: to the machine's time when the message is
   * made).
   */
  readonly judgedAt?: number;
}

/** Another live writer holds the session. */
export class LockedError extends PalimpsestError {
  static override readonly kind: string = 'LockedError';
  declare readonly code: 'LOCKED';
  constructor(
    readonly sessionId: string,
    readonly owner: LockOwner,
    /** Why the lock is judged live, when the store judged it (absent: held in this process). */
    readonly holder?: LockHolderState,
  ) {
    super(
      'LOCKED',
      `session '${short(sessionId)}' is locked by pid ${owner.pid} on ${owner.host} since ${new Date(owner.since).toISOString()}; ${holderText(owner, holder)}`,
    );
  }
}

/** The part of a `LockedError` message that says why the holder counts as live. */
function holderText(owner: LockOwner, holder: LockHolderState | undefined): string {
  const beat =
    owner.heartbeatMs === undefined
      ? 'it does not heartbeat'
      : `it heartbeats every ${seconds(owner.heartbeatMs)}`;
  if (holder === undefined) return `${beat}; close that writer first`;
  if (holder.basis === 'running') {
    return `that process is running on this host (${beat}); close it there first`;
  }
  const age = Math.max(0, (holder.judgedAt ?? Date.now()) - holder.refreshedAt);
  return `${beat}, last refreshed ${seconds(age)} ago; it is taken over once not refreshed for ${seconds(holder.staleMs)} (or palimpsest unlock it once that writer is gone)`;
}

function seconds(ms: number): string {
  return ms < 10_000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms / 1000)} s`;
}

/**
 * A write waited for other writers of the same database longer than the store's bound and was
 * not made; nothing was written. Retryable: the session, the store and the writer stay usable,
 * and the same write may be tried again.
 */
export class StoreBusyError extends PalimpsestError {
  static override readonly kind: string = 'StoreBusyError';
  declare readonly code: 'STORE_BUSY';
  /** Always `true`: contention passes; the write may be retried as it was. */
  readonly retryable = true;
  constructor(
    readonly location: string,
    action: string,
    /** How long the write waited, ms. */
    readonly waitedMs: number,
    options?: { cause?: unknown },
  ) {
    super(
      'STORE_BUSY',
      `${action} in ${location}: other writers held the database for ${seconds(waitedMs)}, longer than the wait bound; nothing was written (retry)`,
      options,
    );
  }
}

/** Where in a stored log the damage is. */
export interface CorruptionSite {
  /** The file or database. */
  readonly file: string;
  /** 1-based line (JSONL) or the seq of the row (SQLite). */
  readonly line?: number | undefined;
  readonly row?: number | undefined;
  /** Byte offset of the damaged record in the file (JSONL). */
  readonly offset?: number | undefined;
  /** What was wrong. */
  readonly reason: string;
}

/**
 * Stored data is damaged outside the final, unacknowledged batch. Nothing was skipped, repaired
 * or overwritten.
 */
export class CorruptLogError extends PalimpsestError {
  static override readonly kind: string = 'CorruptLogError';
  declare readonly code: 'CORRUPT_LOG';
  readonly file: string;
  readonly line: number | undefined;
  readonly row: number | undefined;
  readonly offset: number | undefined;
  readonly reason: string;
  constructor(site: CorruptionSite, options?: { cause?: unknown }) {
    const where = [
      site.line === undefined ? undefined : `line ${site.line}`,
      site.row === undefined ? undefined : `row seq ${site.row}`,
      site.offset === undefined ? undefined : `byte ${site.offset}`,
    ].filter((part) => part !== undefined);
    super(
      'CORRUPT_LOG',
      `corrupt session log ${site.file}${where.length > 0 ? ` at ${where.join(', ')}` : ''}: ${site.reason}`,
      options,
    );
    this.file = site.file;
    this.line = site.line;
    this.row = site.row;
    this.offset = site.offset;
    this.reason = site.reason;
  }
}

/** A log or database written by another format version; it was not modified. */
export class FormatVersionError extends PalimpsestError {
  static override readonly kind: string = 'FormatVersionError';
  declare readonly code: 'FORMAT_VERSION';
  readonly direction: 'newer' | 'older';
  /**
   * @param upgrade how an older store can be brought to the supported version, when it can
   *   (ends the message in place of "older than any supported format").
   */
  constructor(
    readonly file: string,
    readonly found: number,
    readonly supported: number,
    what = 'format version',
    upgrade?: string,
  ) {
    const direction = found > supported ? 'newer' : 'older';
    super(
      'FORMAT_VERSION',
      direction === 'newer'
        ? `${file} was written with ${what} ${found}, newer than this palimpsest supports (${supported}); upgrade palimpsest`
        : upgrade === undefined
          ? `${file} was written with ${what} ${found}; this log is older than any supported format (${supported})`
          : `${file} was written with ${what} ${found}, older than this palimpsest's (${supported}); ${upgrade}`,
    );
    this.direction = direction;
  }
}

/** A line or event is larger than the store's configured limit; refused before parsing. */
export class LimitExceededError extends PalimpsestError {
  static override readonly kind: string = 'LimitExceededError';
  declare readonly code: 'LIMIT_EXCEEDED';
  constructor(
    readonly limit: string,
    readonly allowed: number,
    readonly found: number,
    where: string,
  ) {
    super('LIMIT_EXCEEDED', `${where}: ${found} bytes exceed ${limit} (${allowed} bytes)`);
  }
}

/** A session id the store cannot hold (empty, too long, or not a string). */
export class InvalidSessionIdError extends PalimpsestError {
  static override readonly kind: string = 'InvalidSessionIdError';
  declare readonly code: 'INVALID_SESSION_ID';
  constructor(reason: string) {
    super('INVALID_SESSION_ID', `invalid session id: ${reason}`);
  }
}

/** The storage medium failed (I/O error, full disk, driver error); `cause` holds the original. */
export class StorageError extends PalimpsestError {
  static override readonly kind: string = 'StorageError';
  declare readonly code: 'STORAGE';
  constructor(message: string, options: { cause: unknown }) {
    super('STORAGE', `${message}: ${causeText(options.cause)}`, options);
  }
}

/**
 * An earlier write or fsync of this writer failed, so the writer stopped (no silent retry:
 * after a failed fsync the kernel may have dropped the data). Reopen the session to continue.
 */
export class WriterFailedError extends PalimpsestError {
  static override readonly kind: string = 'WriterFailedError';
  declare readonly code: 'WRITER_FAILED';
  constructor(
    readonly sessionId: string,
    options: { cause: unknown },
  ) {
    super(
      'WRITER_FAILED',
      `the writer of session '${short(sessionId)}' stopped after a failed write (${causeText(options.cause)}); reopen the session to continue`,
      options,
    );
  }
}

/** The session or store was closed. */
export class ClosedError extends PalimpsestError {
  static override readonly kind: string = 'ClosedError';
  declare readonly code: 'CLOSED';
  constructor(what: string) {
    super('CLOSED', `${what} is closed`);
  }
}

/**
 * A path in the store is not what the store writes there: a FIFO, a device, a socket, a
 * directory, or a symbolic link where a session or lock file belongs. Nothing was read from it
 * or written to it (a FIFO could block forever, a device never end, a link lead out of the
 * store).
 */
export class UnsafeFileError extends PalimpsestError {
  static override readonly kind: string = 'UnsafeFileError';
  declare readonly code: 'UNSAFE_FILE';
  constructor(
    readonly file: string,
    /** What was found instead of a regular file, such as `a FIFO` or `a symbolic link`. */
    readonly found: string,
  ) {
    super(
      'UNSAFE_FILE',
      `${file}: expected a regular file of the store, found ${found}; it was neither read nor written (remove it, or move it out of the store)`,
    );
  }
}

/** There is no store where one was to be opened without creating it; nothing was created. */
export class StoreNotFoundError extends PalimpsestError {
  static override readonly kind: string = 'StoreNotFoundError';
  declare readonly code: 'STORE_NOT_FOUND';
  constructor(
    readonly location: string,
    detail: string,
  ) {
    super('STORE_NOT_FOUND', `there is no store at ${location} (${detail}); nothing was created`);
  }
}

/**
 * Codes of {@link InvalidStoreError}: one per reason a store cannot be opened or used as asked.
 * A bad option or argument value (a negative `leaseMs`, an unknown `chunks` mode, a batch whose
 * seqs are not contiguous, a cursor of another store) is core's `InvalidArgumentError` instead.
 *
 * - `UNKNOWN_SCHEME`: a store URL whose scheme is none of `jsonl:`, `sqlite:`, `postgres://`
 *   and `memory:`.
 * - `INVALID_URL`: a store URL of a known scheme that cannot be used: a file scheme naming no
 *   path, or a PostgreSQL URL that is not `postgres://user@host:port/database`.
 * - `DRIVER_NOT_INSTALLED`: the backend's driver package (`better-sqlite3`, `pg`) is not
 *   installed; install it.
 * - `DRIVER_LOAD_FAILED`: the driver package is installed but does not load (its native addon
 *   did not load, or it is not the expected major version).
 * - `WRONG_FILE_TYPE`: the store's path exists but is not what the backend keeps there: a SQLite
 *   store path that is not a regular file, a JSONL store path that is not a directory.
 * - `NOT_A_STORE`: the path or schema holds something other than a palimpsest store: a file that
 *   is not a SQLite database, a database or schema of another application, or (opened
 *   read-only) an empty file. It was not modified.
 * - `SETTINGS_REFUSED`: SQLite did not accept the settings the store needs (WAL journal mode,
 *   the `synchronous` level, foreign keys) on this database.
 * - `READ_ONLY`: a write (create, append, lock, delete...) on a store opened read-only.
 * - `LOCK_NOT_HELD`: a write through a session lock that is no longer held (released, or taken
 *   over after going stale); lock the session again.
 * - `TORN_TAIL`: an append to a JSONL log that ends with a torn tail nobody discarded yet;
 *   appending after it would bury the damage. `openSession` repairs it.
 */
export type InvalidStoreCode =
  | 'UNKNOWN_SCHEME'
  | 'INVALID_URL'
  | 'DRIVER_NOT_INSTALLED'
  | 'DRIVER_LOAD_FAILED'
  | 'WRONG_FILE_TYPE'
  | 'NOT_A_STORE'
  | 'SETTINGS_REFUSED'
  | 'READ_ONLY'
  | 'LOCK_NOT_HELD'
  | 'TORN_TAIL';

/** A store that cannot be opened or used as asked; `code` says why. */
export class InvalidStoreError extends PalimpsestError {
  static override readonly kind: string = 'InvalidStoreError';
  declare readonly code: InvalidStoreCode;
  constructor(code: InvalidStoreCode, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
  }
}

/**
 * Codes of {@link LedgerError}: why a SQLite database and its ledger (`<file>-lengths`, the
 * committed lengths kept beside it) cannot vouch for each other.
 *
 * - `LEDGER_MISSING`: the database was paired with a ledger (it names it), but there is no
 *   ledger beside it: a copy or backup of the database without it, or a deleted ledger. Without
 *   it, events the database lost (a damaged WAL) cannot be told from a short session, so the
 *   store is refused, read-only or not, and no ledger is created.
 * - `LEDGER_MISMATCH`: the ledger beside the database is another database's (it names another
 *   identity, or none), or a writable open finds a ledger with sessions in it beside a database
 *   that names none (another database's ledger, or a database that lost its pairing with its WAL).
 * - `LEDGER_STALE`: the ledger has seen fewer events of a session than the session's row says
 *   it held on disk when the row was written, which no crash or power cut can cause: the ledger
 *   is older than the database (restored from an earlier copy, or damaged), so it cannot vouch
 *   for that session.
 *
 * `palimpsest repair --adopt-ledger` (`adoptSqliteLedger`) records the database as it is in
 * the ledger, which ends each of these; losses before that cannot be detected any more.
 */
export type LedgerErrorCode = 'LEDGER_MISSING' | 'LEDGER_MISMATCH' | 'LEDGER_STALE';

/**
 * A SQLite database and its ledger do not pair up; `code` says how. The ledger was left as it
 * was, and no session was read or written.
 */
export class LedgerError extends PalimpsestError {
  static override readonly kind: string = 'LedgerError';
  declare readonly code: LedgerErrorCode;
  constructor(
    code: LedgerErrorCode,
    /** The database file. */
    readonly file: string,
    /** The ledger file. */
    readonly ledger: string,
    message: string,
    /** The session a `LEDGER_STALE` is about. */
    readonly sessionId?: string,
  ) {
    super(code, message);
  }
}

/**
 * The session's lease (PostgreSQL) or lock (SQLite) was taken over by another writer (this one
 * stopped heartbeating past the bound, was thought dead, or an operator forced the lock away):
 * the append was refused and nothing was written. A writer fenced off this way must reopen the
 * session, which loads what the new holder wrote.
 */
export class LeaseLostError extends PalimpsestError {
  static override readonly kind: string = 'LeaseLostError';
  declare readonly code: 'LEASE_LOST';
  constructor(
    readonly sessionId: string,
    /** The writer that holds the lease now, when there is one. */
    readonly holder: LockOwner | undefined,
  ) {
    super(
      'LEASE_LOST',
      `the lease (lock) of session '${short(sessionId)}' was taken over${holder === undefined ? '' : ` by pid ${holder.pid} on ${holder.host} (since ${new Date(holder.since).toISOString()})`}; this writer was fenced off and nothing was written; reopen the session to continue`,
    );
  }
}

/**
 * The store could not be reached within its retry bound (the connection was lost, the server is
 * restarting). Retryable: nothing is known to be half-applied, but whether the last append landed
 * is unknown until a load shows it (`outcome: 'unknown'`), or it is known not to have (`'none'`).
 */
export class StoreUnavailableError extends PalimpsestError {
  static override readonly kind: string = 'StoreUnavailableError';
  declare readonly code: 'STORE_UNAVAILABLE';
  /** Retrying later may succeed. */
  readonly retryable = true;
  constructor(
    what: string,
    readonly location: string,
    /** Whether the operation may have taken effect. */
    readonly outcome: 'unknown' | 'none',
    options: { cause: unknown },
  ) {
    super(
      'STORE_UNAVAILABLE',
      `${what}: ${location} is unreachable (${causeText(options.cause)})${outcome === 'unknown' ? '; whether it took effect is unknown until the session is loaded again' : '; nothing was written'}`,
      options,
    );
  }
}

/**
 * Codes of {@link EncryptionError}:
 * - `KEY_REQUIRED`: an encrypted session was read through a store without its keys.
 * - `KEY_MISSING`: the key vault holds no key for an encrypted session (the wrong vault?).
 * - `WRONG_KEY`: the key provider could not unwrap the session's data key (another master key).
 * - `BAD_KEY`: a master key or a key provider's answer is not a 32-byte AES-256 key.
 * - `SEAL_BROKEN`: a sealed payload does not open with its session's key: it was altered.
 */
export type EncryptionErrorCode =
  | 'KEY_REQUIRED'
  | 'KEY_MISSING'
  | 'WRONG_KEY'
  | 'BAD_KEY'
  | 'SEAL_BROKEN';

/**
 * An encrypted session's payloads cannot be read or written: its key is not given, not found,
 * not the one that sealed them, or a payload was altered. Messages never hold a key.
 */
export class EncryptionError extends PalimpsestError {
  static override readonly kind: string = 'EncryptionError';
  declare readonly code: EncryptionErrorCode;
  constructor(
    code: EncryptionErrorCode,
    message: string,
    /** The session concerned, when there is one. */
    readonly sessionId?: string,
    options?: { cause?: unknown },
  ) {
    super(code, message, options);
  }
}

/**
 * The session's data key was shredded (`EncryptedStore.shred`, or its deletion): its payloads
 * can no longer be read by anyone, in this store or any copy of it. Envelopes stay readable.
 */
export class ShreddedKeyError extends PalimpsestError {
  static override readonly kind: string = 'ShreddedKeyError';
  declare readonly code: 'KEY_SHREDDED';
  constructor(
    readonly sessionId: string,
    /** When the key was shredded, epoch ms, when the vault recorded it. */
    readonly shreddedAt: number | undefined,
  ) {
    super(
      'KEY_SHREDDED',
      `the data key of session '${short(sessionId)}' was shredded${shreddedAt === undefined ? '' : ` at ${new Date(shreddedAt).toISOString()}`}: its payloads can no longer be read`,
    );
  }
}

function short(text: string): string {
  return text.length > 80 ? `${text.slice(0, 79)}…` : text;
}

/**
 * The cause as it ends a message: its code once (Node's errno messages already begin with it,
 * `EACCES: permission denied, ...`; a palimpsest error's message says what it is), then its
 * message.
 */
function causeText(cause: unknown): string {
  if (cause instanceof Error) {
    const code = (cause as { code?: unknown }).code;
    const named =
      typeof code !== 'string' ||
      cause.message.startsWith(code) ||
      PalimpsestError.isInstance(cause);
    return short(named ? cause.message : `${code}: ${cause.message}`);
  }
  return short(String(cause));
}
