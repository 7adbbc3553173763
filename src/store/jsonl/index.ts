/**
 * The JSONL backend: one append-only file per session, `<directory>/<encoded id>.jsonl`.
 *
 * @packageDocumentation
 */
export { crc32 } from './crc32.js';
export {
  batchChecksum,
  batchText,
  COMMIT_KEY,
  commitLine,
  DEFAULT_MAX_LINE_BYTES,
  HEADER_CHUNK_BYTES,
  READ_CHUNK_BYTES,
} from './format.js';
export type { FsFacade, FsFileHandle, FsOpenFlags, FsStats } from './fs.js';
export { nodeFs } from './fs.js';
export { UNREADABLE_LOCK_STALE_MS } from './lock.js';
export { encodeSessionId, LOCK_SUFFIX, LOG_SUFFIX, MAX_ENCODED_LENGTH } from './paths.js';
export {
  JSONL_FAILPOINTS,
  type JsonlFailpoint,
  JsonlStore,
  type JsonlStoreOptions,
  openJsonlStore,
} from './store.js';
