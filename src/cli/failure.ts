/**
 * What the CLI does when something goes wrong: one line saying what happened, where, and what to
 * do, and an exit code per kind of failure (documented in docs/cli.md). `--debug` adds the stack.
 */
import { PalimpsestError } from '../core/index.js';

/** Exit codes, stable across releases. */
export const EXIT = {
  ok: 0,
  failure: 1,
  usage: 2,
  notFound: 3,
  corrupt: 4,
  locked: 5,
  version: 6,
  invalid: 7,
  model: 8,
  unchanged: 9,
  key: 10,
  interrupted: 130,
} as const;

/** An error the CLI raises itself, with its exit code. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

/** The exit code and one-line message for any error. */
export function describeFailure(error: unknown): { code: number; message: string } {
  if (error instanceof CliError) return { code: error.exitCode, message: error.message };
  if (PalimpsestError.isInstance(error)) {
    switch (error.code) {
      case 'KEY_REQUIRED':
        return {
          code: EXIT.key,
          message: `${error.message} (--key-vault DIR with --key-file FILE, or PALIMPSEST_KEY_VAULT with PALIMPSEST_MASTER_KEY)`,
        };
      case 'KEY_MISSING':
      case 'WRONG_KEY':
      case 'KEY_SHREDDED':
        return { code: EXIT.key, message: error.message };
      case 'BAD_KEY':
        return { code: EXIT.usage, message: error.message };
      case 'SEAL_BROKEN':
        return { code: EXIT.corrupt, message: error.message };
      case 'NOT_FOUND':
        return {
          code: EXIT.notFound,
          message: `${error.message} (palimpsest ls lists the sessions)`,
        };
      case 'CORRUPT_LOG':
        return {
          code: EXIT.corrupt,
          message: `${error.message} (the log is damaged before its last batch; nothing was changed — restore it from a backup, or run palimpsest salvage on the session: it copies the acknowledged events before the damage into a new session, and log --salvage or show --salvage read them)`,
        };
      case 'STORE_NOT_FOUND':
        return {
          code: EXIT.notFound,
          message: `${error.message} (only run, demo and the target of convert create a store)`,
        };
      case 'UNSAFE_FILE':
      // LedgerError: the message says what was found and how to adopt the database.
      case 'LEDGER_MISSING':
      case 'LEDGER_MISMATCH':
      case 'LEDGER_STALE':
        return { code: EXIT.corrupt, message: error.message };
      case 'LOCKED':
        return {
          code: EXIT.locked,
          message: `${error.message} (wait for that writer to finish, or stop it; palimpsest unlock ID removes a lock whose writer is gone)`,
        };
      case 'FORMAT_VERSION':
        return { code: EXIT.version, message: error.message };
      case 'MALFORMED_LINE':
      case 'TRUNCATED_LINE':
        return {
          code: EXIT.corrupt,
          message: `${error.message} (nothing of that file was imported)`,
        };
      case 'UNKNOWN_FORMAT':
        return { code: EXIT.usage, message: error.message };
      case 'NO_SOURCE':
        return { code: EXIT.notFound, message: error.message };
      case 'SOURCE_DIVERGED':
        return { code: EXIT.unchanged, message: error.message };
      case 'INVALID_ARGUMENT':
      case 'BAD_QUERY':
      case 'INVALID_RANGE':
      case 'INVALID_OPTIONS':
      case 'INVALID_BOUNDARY':
      case 'OPEN_TURN':
      case 'INVALID_SESSION_ID':
      // InvalidStoreError: a --store the command cannot use as asked.
      case 'UNKNOWN_SCHEME':
      case 'INVALID_URL':
      case 'DRIVER_NOT_INSTALLED':
      case 'DRIVER_LOAD_FAILED':
      case 'WRONG_FILE_TYPE':
      case 'NOT_A_STORE':
      case 'SETTINGS_REFUSED':
      case 'READ_ONLY':
      case 'LOCK_NOT_HELD':
      case 'TORN_TAIL':
      case 'INVALID_INPUT':
      case 'INVALID_PORT':
      // McpAdapterError: an address, token or scope `palimpsest mcp` cannot use.
      case 'NOT_LOOPBACK':
      case 'INVALID_ADDRESS':
      case 'INVALID_TOKEN':
      case 'INVALID_SCOPE':
        return { code: EXIT.usage, message: error.message };
      default:
        return { code: EXIT.failure, message: `${error.message} [${error.code}]` };
    }
  }
  if (error instanceof Error) return { code: EXIT.failure, message: error.message };
  return { code: EXIT.failure, message: String(error) };
}
