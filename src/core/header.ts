/**
 * The session header: metadata kept beside the log, never inside it.
 */
import { SessionValidationError, truncate } from './errors.js';
import { JsonIssue, type JsonObject, snapshotJson } from './json.js';

/**
 * Version of the session format: the envelope, vocabulary and surface rules, and how the JSONL
 * store writes them (1: consecutive stream chunks may share one run line). While palimpsest is
 * pre-release, a log of another version is refused, never migrated.
 */
export const SESSION_FORMAT_VERSION = 1;

/** Metadata of a session. Deeply frozen once accepted. */
export type SessionHeader = {
  readonly version: typeof SESSION_FORMAT_VERSION;
  readonly id: string;
  /** Integer epoch ms. */
  readonly createdAt: number;
  /** The session this one was forked from. */
  readonly parentSession?: string;
  /** How many events were copied from the parent when forking. */
  readonly seedLength?: number;
  /** Free-form application metadata (title, working directory, tags...). */
  readonly metadata?: JsonObject;
  /**
   * Present when the session's event data is stored encrypted (`palimpsest/store`'s
   * `EncryptedStore`): the envelopes stay readable, each payload is sealed with the session's
   * own data key, which is kept wrapped in a key vault, never in the session.
   */
  readonly encryption?: SessionEncryption;
};

/** How a session's payloads are encrypted at rest. */
export type SessionEncryption = {
  /** The cipher and the sealed-payload form: AES-256-GCM, format 1. */
  readonly scheme: 'aes-256-gcm/1';
  /** The key provider that wrapped the session's data key (its `id`). */
  readonly keyProvider: string;
};

const HEADER_KEYS: ReadonlySet<string> = new Set([
  'version',
  'id',
  'createdAt',
  'parentSession',
  'seedLength',
  'metadata',
  'encryption',
]);

/**
 * Validates a header value and returns a frozen copy. Throws `SessionValidationError` with code
 * `INVALID_HEADER`; a foreign `version` is reported before any other problem, saying which side
 * is newer.
 */
export function validateHeader(value: unknown, expectedId?: string): SessionHeader {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw headerError('expected a header object');
  }
  const record = value as Record<string, unknown>;
  const version = record.version;
  if (version !== SESSION_FORMAT_VERSION) {
    if (typeof version === 'number' && Number.isInteger(version)) {
      throw headerError(
        version > SESSION_FORMAT_VERSION
          ? `format version ${version} is newer than this palimpsest supports (${SESSION_FORMAT_VERSION}); upgrade palimpsest`
          : `format version ${version} is older than any supported format (${SESSION_FORMAT_VERSION})`,
      );
    }
    throw headerError(`expected version ${SESSION_FORMAT_VERSION}, found ${kind(version)}`);
  }
  let copy: Record<string, unknown>;
  try {
    copy = snapshotJson(value) as Record<string, unknown>;
  } catch (error) {
    if (error instanceof JsonIssue) throw headerError(`${error.reason} at ${error.path('header')}`);
    throw error;
  }
  for (const key of Object.keys(copy)) {
    if (!HEADER_KEYS.has(key)) throw headerError(`unknown header field '${truncate(key, 40)}'`);
  }
  if (typeof copy.id !== 'string' || copy.id === '') {
    throw headerError(`expected a non-empty string id, found ${kind(copy.id)}`);
  }
  if (expectedId !== undefined && copy.id !== expectedId) {
    throw headerError(
      `header id '${truncate(copy.id, 60)}' differs from session id '${truncate(expectedId, 60)}'`,
    );
  }
  if (!isNonNegativeInteger(copy.createdAt)) {
    throw headerError(
      `expected createdAt as non-negative integer epoch ms, found ${kind(copy.createdAt)}`,
    );
  }
  if (
    copy.parentSession !== undefined &&
    (typeof copy.parentSession !== 'string' || copy.parentSession === '')
  ) {
    throw headerError(
      `expected parentSession as a non-empty string, found ${kind(copy.parentSession)}`,
    );
  }
  if (copy.seedLength !== undefined && !isNonNegativeInteger(copy.seedLength)) {
    throw headerError(
      `expected seedLength as a non-negative integer, found ${kind(copy.seedLength)}`,
    );
  }
  const metadata = copy.metadata;
  if (
    metadata !== undefined &&
    (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata))
  ) {
    throw headerError(`expected metadata as an object, found ${kind(metadata)}`);
  }
  checkEncryption(copy.encryption);
  return copy as SessionHeader;
}

function checkEncryption(value: unknown): void {
  if (value === undefined) return;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw headerError(`expected encryption as an object, found ${kind(value)}`);
  }
  const record = value as Record<string, unknown>;
  if (record.scheme !== 'aes-256-gcm/1') {
    throw headerError(
      `expected encryption scheme 'aes-256-gcm/1', found ${kind(record.scheme)}; a newer palimpsest may read it`,
    );
  }
  if (typeof record.keyProvider !== 'string' || record.keyProvider === '') {
    throw headerError(
      `expected encryption.keyProvider as a non-empty string, found ${kind(record.keyProvider)}`,
    );
  }
  for (const key of Object.keys(record)) {
    if (key !== 'scheme' && key !== 'keyProvider') {
      throw headerError(`unknown encryption field '${truncate(key, 40)}'`);
    }
  }
}

function isNonNegativeInteger(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

function headerError(message: string): SessionValidationError {
  return new SessionValidationError('INVALID_HEADER', `invalid session header: ${message}`);
}

function kind(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (typeof value === 'string') return `'${truncate(value, 40)}'`;
  if (typeof value === 'number') return String(value);
  if (value === null) return 'null';
  return Array.isArray(value) ? 'an array' : typeof value;
}
