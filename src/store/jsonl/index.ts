/**
 * palimpsest/jsonl — the JSONL backend: one append-only file per session,
 * `<directory>/<encoded id>.jsonl`.
 *
 * @packageDocumentation
 */
export { DEFAULT_MAX_LINE_BYTES } from './format.js';
export type { FsFacade, FsFileHandle, FsOpenFlags, FsStats } from './fs.js';
export type { JsonlFailpoint, JsonlStoreOptions } from './options.js';
export { encodeSessionId, LOG_SUFFIX, MAX_ENCODED_LENGTH } from './paths.js';
export { JsonlStore, openJsonlStore } from './store.js';
