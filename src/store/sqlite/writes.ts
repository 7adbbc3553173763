/**
 * The writes of a SQLite store: creating a session, appending a batch in one transaction that
 * checks the expected seq and the writer's lock before writing (and learns the codes of new event
 * types), deleting a session, replacing a session's log whole (erasure), and the torn-tail check
 * a SQLite database never needs to act on.
 */

import { validateHeader } from '../../core/header.js';
import type { SessionEvent, SessionHeader } from '../../core/index.js';
import { InvalidArgumentError, PalimpsestError } from '../../core/index.js';
import {
  AlreadyExistsError,
  ConflictError,
  InvalidStoreError,
  NotFoundError,
} from '../contract/errors.js';
import { parseOwnerJson } from '../contract/lock-owner.js';
import type {
  AppendOptions,
  ReplaceLogOptions,
  SessionLock,
  TornTail,
} from '../contract/session-store.js';
import {
  checkBatch,
  checkReplaceLog,
  checkSessionId,
  checkTornTail,
} from '../contract/store-rules.js';
import { rowChecksum, sessionChecksum } from '../sql/row-checksums.js';
import { planRuns } from './chunk-run-writer.js';
import type { SessionPosition, SqliteContext } from './context.js';
import { driverCode } from './driver-errors.js';
import { checkVouched, vouchable } from './ledger-checks.js';
import type { SqliteLocks } from './lock.js';
import type { SqliteTransaction } from './schema.js';

/**
 * What an append's transaction hands back: the session's key, the type codes it met, and an
 * offset past its ledger record of the commit about to happen.
 */
interface Appended {
  readonly key: number;
  readonly learned: ReadonlyMap<string, number>;
  readonly claimed: number | undefined;
}

/** The writes of one store. */
export class SqliteWrites {
  readonly #context: SqliteContext;
  readonly #locks: SqliteLocks;
  readonly #append: SqliteTransaction<[string, readonly SessionEvent[], number], Appended>;
  /**
   * Per session this store wrote, offsets past its ledger records of its last two writes (a
   * create, or an append about to commit), the last first. An append waits until the ledger is
   * on disk up to the record of the write before the last: the background fsync begun after
   * that write's commit, done by then unless appends come faster than the ledger syncs. Its row
   * then vouches at least for that write (`#vouch`), and for the last one too when its record is
   * on disk already. Waiting for the last write's record instead would bound the slack at one
   * write, for about one fsync on every append of a tight loop.
   */
  readonly #recorded = new Map<string, readonly [number, number | undefined]>();

  constructor(context: SqliteContext, locks: SqliteLocks) {
    this.#context = context;
    this.#locks = locks;
    this.#append = context.db.transaction(
      (id: string, events: readonly SessionEvent[], expected: number) =>
        this.#appendInTransaction(id, events, expected),
    );
  }

  async create(header: SessionHeader): Promise<void> {
    const context = this.#context;
    context.assertWritable();
    checkSessionId(header.id);
    const valid = validateHeader(header);
    const now = Date.now();
    const text = JSON.stringify(valid);
    try {
      const { key } = (await context.retry(`create session '${valid.id}'`, () =>
        context.sql.insertSession.get(
          valid.id,
          valid.createdAt,
          text,
          now,
          sessionChecksum(valid.id, valid.createdAt, text),
        ),
      )) as { key: number };
      context.failpoint('create:before-ledger');
      this.#record(valid.id, context.ledger?.created(key, valid.id));
    } catch (error) {
      if (driverCode(error) === 'SQLITE_CONSTRAINT_UNIQUE') {
        throw new AlreadyExistsError(valid.id, context.location);
      }
      throw context.storageError(`create session '${valid.id}'`, error);
    }
  }

  async append(id: string, events: readonly SessionEvent[], options: AppendOptions): Promise<void> {
    const context = this.#context;
    context.assertWritable();
    checkSessionId(id);
    checkBatch(id, events, options);
    const expected = options.expectedSeq;
    try {
      if (events.length === 0) {
        this.#checkNext(id, expected);
        return;
      }
      const before = this.#recorded.get(id)?.[1];
      if (before !== undefined) await context.ledger?.syncedThrough(before);
      const { key, learned, claimed } = await context.retry(`append to session '${id}'`, () =>
        this.#append.immediate(id, events, expected),
      );
      for (const [type, code] of learned) context.learnType(type, code);
      context.committed.notify();
      if (claimed !== undefined) this.#noteRecord(id, claimed);
      context.failpoint('append:before-ledger');
      context.ledger?.committed(key, expected + events.length);
      // After the commit, not before it: a fsync of the ledger in flight while SQLite syncs its
      // WAL would delay the commit; this one overlaps with what the caller does next.
      context.ledger?.syncSoon();
      context.failpoint('append:after-commit');
    } catch (error) {
      throw context.storageError(`append to session '${id}'`, error);
    }
  }

  async delete(id: string): Promise<void> {
    const context = this.#context;
    const { sql } = context;
    context.assertWritable();
    checkSessionId(id);
    let known: SessionPosition | undefined;
    try {
      known = context.position(id);
      if (known !== undefined) context.ledger?.deleting(known.key);
      const remove = context.db.transaction(() => {
        const position = context.position(id);
        if (position === undefined) throw new NotFoundError(id, context.location);
        const found = this.#locks.lockOf(id);
        if (found?.holder !== undefined) throw found.locked();
        sql.deleteEvents.run(position.key);
        sql.deleteRuns.run(position.key);
        sql.deleteSession.run(position.key);
        sql.deleteLock.run(id);
      });
      await context.retry(`delete session '${id}'`, () => remove.immediate());
      this.#recorded.delete(id);
      this.#scrubWal();
    } catch (error) {
      this.#revive(id, known);
      throw context.storageError(`delete session '${id}'`, error);
    }
    // Gone from the database, so its id goes from the ledger too (its `d` record stays). After
    // the try: the delete has committed, and a failure here must not revive the session.
    if (known !== undefined) context.ledger?.eraseId(known.key);
  }

  /**
   * Replaces the session's rows in one transaction: every event row and chunk run deleted and
   * `events` inserted, with `secure_delete` on (every writable connection has it) so the freed
   * pages are zeroed, then the WAL scrubbed (`#scrubWal`), so the old rows'
   * bytes are in neither file.
   */
  async replaceLog(
    id: string,
    events: readonly SessionEvent[],
    options: ReplaceLogOptions,
    lock: SessionLock,
  ): Promise<void> {
    const context = this.#context;
    const { sql } = context;
    context.assertWritable();
    checkSessionId(id);
    checkReplaceLog(id, events, options, lock);
    try {
      const replace = context.db.transaction(() => {
        this.#checkHolder(id, lock);
        const position = this.#checkNext(id, options.expectedLength);
        const vouched = this.#vouch(id, position);
        sql.deleteEvents.run(position.key);
        sql.deleteRuns.run(position.key);
        const learned = new Map<string, number>();
        this.#insertRows(id, position.key, events, 0, learned);
        sql.advance.run(events.length, Date.now(), vouched, position.key);
        const claimed = context.ledger?.committing(position.key, events.length);
        return { key: position.key, learned, claimed };
      });
      const { key, learned, claimed } = await context.retry(
        `replace the log of session '${id}'`,
        () => replace.immediate(),
      );
      for (const [type, code] of learned) context.learnType(type, code);
      context.committed.notify();
      if (claimed !== undefined) this.#noteRecord(id, claimed);
      context.ledger?.committed(key, events.length);
      context.ledger?.syncSoon();
      this.#scrubWal();
    } catch (error) {
      throw context.storageError(`replace the log of session '${id}'`, error);
    }
  }

  /**
   * Copies the pages a delete zeroed (`secure_delete`) into the database and empties the WAL,
   * whose older frames still hold the deleted rows. Best effort, and without waiting: a reader
   * in the middle of a read (or another connection's write) makes the checkpoint stop short at
   * once instead of blocking the thread for the busy timeout; the frames it leaves are
   * overwritten as the WAL is reused, copied by the next checkpoint, and removed when the last
   * connection closes. The delete has committed either way.
   */
  #scrubWal(): void {
    const { db, settings } = this.#context;
    try {
      db.pragma('busy_timeout = 0', { simple: true });
      db.pragma('wal_checkpoint(TRUNCATE)', { simple: true });
    } catch {
      // A failed checkpoint changes nothing the delete did; the next one copies the same pages.
    } finally {
      try {
        db.pragma(`busy_timeout = ${settings.busyTimeoutMs}`, { simple: true });
      } catch {
        // The connection is unusable; the next call reports it.
      }
    }
  }

  /**
   * Checks the arguments and the lock, and drops nothing: each batch is one transaction, which
   * SQLite rolls back when a crash interrupts it, so a database never has a torn tail.
   */
  async discardTornTail(id: string, tail: TornTail, lock: SessionLock): Promise<void> {
    const context = this.#context;
    context.assertWritable();
    checkSessionId(id);
    checkTornTail(id, tail, lock);
    try {
      this.#checkHolder(id, lock);
    } catch (error) {
      if (PalimpsestError.isInstance(error)) throw error;
      throw context.storageError(`discard the torn tail of session '${id}'`, error);
    }
  }

  /** Throws unless `lock` still holds the session. */
  #checkHolder(id: string, lock: SessionLock): void {
    const row = this.#context.sql.lockRow.get(id) as { owner: string } | undefined;
    if (row !== undefined && parseOwnerJson(row.owner)?.token === lock.owner.token) return;
    const found = this.#locks.lockOf(id);
    if (found?.holder !== undefined) throw found.locked();
    throw new InvalidStoreError(
      'LOCK_NOT_HELD',
      `the lock of session '${id}' is no longer held; lock it again`,
    );
  }

  /**
   * Writes the batch; returns the type codes it read or assigned that are not cached yet, for
   * the caller to cache once the transaction has committed.
   */
  #appendInTransaction(id: string, events: readonly SessionEvent[], expected: number): Appended {
    const context = this.#context;
    // A fenced writer is told so (LEASE_LOST), not that the new holder appended first.
    this.#locks.checkWriter(id);
    const position = this.#checkNext(id, expected);
    const key = position.key;
    const vouched = this.#vouch(id, position);
    const learned = new Map<string, number>();
    this.#insertRows(id, key, events, expected, learned);
    // The session's updated-at is wall time, like its events' times: not the lock clock's.
    context.sql.advance.run(expected + events.length, Date.now(), vouched, key);
    // Last, so that nothing but the commit can fail after it.
    const claimed = context.ledger?.committing(key, expected + events.length);
    context.failpoint('append:before-commit');
    return { key, learned, claimed };
  }

  /** Inserts the rows and chunk runs of `events`, the first at seq `expected` (in a transaction). */
  #insertRows(
    id: string,
    key: number,
    events: readonly SessionEvent[],
    expected: number,
    learned: Map<string, number>,
  ): void {
    const context = this.#context;
    const insert = context.sql.insertEvent;
    const runs = planRuns(context.sql, context.rowContext(id, key), events, expected);
    for (const event of events) {
      if (runs.joins(event.seq)) continue;
      const data = JSON.stringify(event.data) as string | undefined;
      if (data === undefined) {
        throw new InvalidArgumentError(
          `append to session '${id}': event ${event.seq} (${event.type}) has no JSON data`,
        );
      }
      const type =
        context.typeCode(event.type) ??
        learned.get(event.type) ??
        this.#typeCodeInTransaction(event.type, learned);
      const sources =
        event.sourceEventSeqs === undefined ? null : JSON.stringify(event.sourceEventSeqs);
      const surfaceOp = event.surfaceOp === undefined ? null : JSON.stringify(event.surfaceOp);
      const crc = rowChecksum(key, event.seq, event.type, event.time, data, sources, surfaceOp);
      insert.run(key, event.seq, type, event.time, data, sources, surfaceOp, crc);
    }
    runs.write();
  }

  /** Notes where the session's ledger record ends, and has the ledger fsynced in the background. */
  #record(id: string, end: number | undefined): void {
    if (end === undefined) return;
    this.#noteRecord(id, end);
    this.#context.ledger?.syncSoon();
  }

  #noteRecord(id: string, end: number): void {
    this.#recorded.set(id, [end, this.#recorded.get(id)?.[0]]);
  }

  /** Returns the session's position after checking that `expected` is its next seq. */
  #checkNext(id: string, expected: number): SessionPosition {
    const row = this.#context.position(id);
    if (row === undefined) throw new NotFoundError(id, this.#context.location);
    if (row.next_seq !== expected) throw new ConflictError(id, expected, row.next_seq);
    return row;
  }

  /**
   * What the row will say the ledger held on disk (inside the append, with the database locked):
   * the most the ledger durably records of the session, never less than the row said before.
   * A ledger that holds less than the row said is older than the database: the append is
   * refused (`LEDGER_STALE`), so that it cannot re-vouch for a session the ledger lost track of.
   */
  #vouch(id: string, row: SessionPosition): number {
    const { ledger, file } = this.#context;
    if (ledger === undefined) return row.vouched;
    const entry = ledger.entries().get(row.key);
    const stale = checkVouched(file, ledger.path, { ...row, id }, entry);
    if (stale !== undefined) throw stale;
    return Math.max(row.vouched, vouchable(entry, id, row.next_seq));
  }

  /** The code of a type not in the cache: another writer's, or a new one (inside the append). */
  #typeCodeInTransaction(type: string, learned: Map<string, number>): number {
    const { sql } = this.#context;
    const row = (sql.typeCode.get(type) ?? sql.insertType.get(type)) as { code: number };
    learned.set(type, row.code);
    return row.code;
  }

  /** Writes the length of a session whose delete failed, so the ledger knows it still exists. */
  #revive(id: string, known: SessionPosition | undefined): void {
    if (known === undefined) return;
    try {
      const now = this.#context.position(id);
      this.#record(id, this.#context.ledger?.committed(known.key, now?.next_seq ?? known.next_seq));
    } catch {
      // The delete's own failure is the one to report; the ledger then reads as deleted and
      // checks the session no more.
    }
  }
}
