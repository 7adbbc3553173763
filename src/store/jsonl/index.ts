/**
 * palimpsest/jsonl — the JSONL backend: one append-only file per session,
 * `<directory>/<encoded id>.jsonl`.
 *
 * @packageDocumentation
 */
export { DEFAULT_MAX_LINE_BYTES } from './format.js';
// Types only: the options name the file-system facade and the failpoints (the seams of fault and
// crash tests). Framing internals and test hooks stay inside; tests import their modules.
export type { FsFacade, FsFileHandle, FsOpenFlags, FsStats } from './fs.js';
export { openJsonlStore } from './open.js';
export type { JsonlFailpoint, JsonlStoreOptions } from './options.js';
export { JsonlStore } from './store.js';
