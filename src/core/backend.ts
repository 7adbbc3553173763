/**
 * palimpsest/backend — for authors of a store backend, not for its users: the core pieces a
 * store builds on that an application never calls. With them a backend loads a log compactly
 * (finished chunks as elided stubs, a stream's text deltas held as strings, both in an
 * {@link ElidedLog} a `Session` seeds from), checks a header it reads back, and summarizes a
 * session's usage from the few events that carry it, without a session. The store contract
 * itself (`SessionStore`, its errors) is in `palimpsest/store`; the rules here are shared so
 * that every backend elides, cites and counts the same way.
 *
 * @packageDocumentation
 */
export { CitedSeqs, elidedChunk, elidedChunkData, isElidedChunkData } from './elided.js';
export { ElidedLog } from './elided-log.js';
export { validateHeader } from './header.js';
export type { DeltaRun } from './held-deltas.js';
export { USAGE_EVENT_TYPES, usageTotals, usageTotalsByModel } from './session-usage.js';
