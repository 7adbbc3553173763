/**
 * palimpsest/store — the store contract, live sessions recorded to a store, and store URLs.
 *
 * @packageDocumentation
 */
export type {
  AppendOptions,
  DamagedSession,
  ListOptions,
  LoadedSession,
  LoadOptions,
  SessionLock,
  SessionPage,
  SessionStore,
  SessionSummary,
  TornBytes,
  TornTail,
  UnlockOptions,
  UnlockReport,
} from './contract.js';
export {
  AlreadyExistsError,
  ClosedError,
  ConflictError,
  type CorruptionSite,
  CorruptLogError,
  FormatVersionError,
  InvalidSessionIdError,
  type InvalidStoreCode,
  InvalidStoreError,
  LeaseLostError,
  LimitExceededError,
  LockedError,
  type LockHolderState,
  type LockOwner,
  NotFoundError,
  StorageError,
  StoreBusyError,
  StoreNotFoundError,
  StoreUnavailableError,
  UnsafeFileError,
  WriterFailedError,
} from './errors.js';
export { MemoryStore } from './memory.js';
export {
  type ChunkLoading,
  type InspectSessionOptions,
  inspectSession,
  LiveSession,
  type OpenReport,
  type OpenSessionOptions,
  openSession,
} from './open-session.js';
export {
  DEFAULT_STORE_URL,
  type OpenStoreOptions,
  openStore,
  parseStoreUrl,
  type StoreScheme,
  type StoreUrl,
} from './open-store.js';
export { DEFAULT_WINDOW_MS, type Durability, Recorder, type RecorderStats } from './recorder.js';
export { type SalvageOptions, type SalvageResult, salvageSession } from './salvage.js';
