/**
 * The header line of a JSONL log: encoding it, checking it (through the stored-header rule every
 * backend shares), and the summary `list` reads from it and the commit marker the log ends with.
 */
import { PalimpsestError, type SessionHeader } from '../../core/index.js';
import {
  CorruptLogError,
  FormatVersionError,
  LimitExceededError,
  UnsafeFileError,
} from '../contract/errors.js';
import type { DamagedSession, SessionSummary } from '../contract/session-store.js';
import { decodeStoredHeader } from '../contract/store-rules.js';
import { commitBefore, headerSealLine, readHeaderSeal } from './format.js';
import { errnoCode, type FsFacade, type FsFileHandle } from './fs.js';
import { decodeJson, readFirstLine } from './line-reader.js';
import { decodeSessionId, encodeSessionId, LOG_SUFFIX } from './paths.js';

/** The header line, `\n` included, and the commit marker that seals it. */
export function encodeHeaderLine(header: SessionHeader, maxLineBytes: number): Buffer {
  const line = Buffer.from(JSON.stringify(header), 'utf8');
  if (line.length > maxLineBytes) {
    throw new LimitExceededError(
      'maxLineBytes',
      maxLineBytes,
      line.length,
      `header of session '${header.id.slice(0, 80)}'`,
    );
  }
  return Buffer.concat([line, Buffer.from(`\n${headerSealLine(line)}\n`, 'latin1')]);
}

/**
 * Where the events of a log begin: after the header's seal, checked against the header line
 * (`CorruptLogError` at line 1 when they disagree), or right after the header line in a log
 * written before seals.
 */
export async function eventsStart(
  handle: FsFileHandle,
  file: string,
  headerLine: Buffer,
  headerEnd: number,
): Promise<{ readonly offset: number; readonly lineNumber: number }> {
  const seal = await readHeaderSeal(handle, headerEnd, headerLine);
  if (seal === undefined) return { offset: headerEnd, lineNumber: 2 };
  if (!seal.matches) {
    throw headerCorrupt(file, 'the header does not match the checksum of its seal (line 2)');
  }
  return { offset: seal.end, lineNumber: 3 };
}

/**
 * Parses and checks a header line with the stored-header rule every backend shares (a foreign
 * version is a `FormatVersionError`); any other problem, a header naming another session
 * included, is a `CorruptLogError` at line 1.
 */
export function parseHeaderLine(
  bytes: Buffer,
  file: string,
  expectedId: string | undefined,
): SessionHeader {
  const decoded = decodeJson(bytes);
  if ('problem' in decoded) throw headerCorrupt(file, `header is ${decoded.problem}`);
  return decodeStoredHeader(decoded.value, { where: headerSite(file), expectedId });
}

function headerSite(file: string): { file: string; line: number; offset: number } {
  return { file, line: 1, offset: 0 };
}

/** A `CorruptLogError` at the header line. */
export function headerCorrupt(file: string, reason: string, cause?: unknown): CorruptLogError {
  return new CorruptLogError(
    { ...headerSite(file), reason },
    cause === undefined ? undefined : { cause },
  );
}

/**
 * What `list` shows of the log `name` in `directory`: its header and, when the log ends with a
 * commit marker, the event count (a few bytes read, never the whole log); or, for a log whose
 * header is damaged, of another format version, missing, or naming a session the file name does
 * not encode, the error a load gives, as a damaged entry. `undefined` for an entry that is not
 * a log of this store: gone since `readdir`, or not a regular file.
 */
export async function summarize(
  fs: FsFacade,
  file: string,
  name: string,
  maxLineBytes: number,
): Promise<SessionSummary | { readonly damaged: DamagedSession } | undefined> {
  const encoded = name.slice(0, -LOG_SUFFIX.length);
  const id = decodeSessionId(encoded);
  const damaged = (error: DamagedSession['error']) => ({
    damaged: id === undefined ? { error } : { id, error },
  });
  let handle: FsFileHandle;
  try {
    handle = await fs.open(file, 'r');
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') return undefined;
    // A FIFO, device or link where the log belongs: listed, never opened.
    if (UnsafeFileError.isInstance(error)) return damaged(error);
    throw error;
  }
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) return undefined;
    let header: SessionHeader;
    let headerEnd: number;
    try {
      const first = await readFirstLine(handle, file, maxLineBytes);
      if (first === undefined) return damaged(headerCorrupt(file, 'the log is empty: no header'));
      header = parseHeaderLine(first.bytes, file, id);
      headerEnd = (await eventsStart(handle, file, first.bytes, first.end)).offset;
    } catch (error) {
      if (CorruptLogError.isInstance(error) || FormatVersionError.isInstance(error)) {
        return damaged(error);
      }
      if (PalimpsestError.isInstance(error)) {
        return damaged(headerCorrupt(file, `the header cannot be read: ${error.message}`, error));
      }
      throw error;
    }
    if (`${encodeSessionId(header.id)}${LOG_SUFFIX}` !== name) {
      return damaged(
        headerCorrupt(file, 'the header names a session this file name does not encode'),
      );
    }
    const count = stats.size === headerEnd ? 0 : await commitBefore(handle, stats.size, headerEnd);
    return {
      header,
      updatedAt: Math.floor(stats.mtimeMs),
      sizeBytes: stats.size,
      ...(count === undefined ? {} : { eventCount: count }),
    };
  } finally {
    await handle.close();
  }
}
