/**
 * palimpsest/store — the store contract, live sessions recorded to a store, and store URLs.
 *
 * @packageDocumentation
 */

export {
  AlreadyExistsError,
  ClosedError,
  ConflictError,
  type CorruptionSite,
  CorruptLogError,
  EncryptionError,
  type EncryptionErrorCode,
  FormatVersionError,
  InvalidSessionIdError,
  type InvalidStoreCode,
  InvalidStoreError,
  LeaseLostError,
  LedgerError,
  type LedgerErrorCode,
  LimitExceededError,
  LockedError,
  type LockHolderState,
  type LockOwner,
  NotFoundError,
  ShreddedKeyError,
  StorageError,
  StoreBusyError,
  StoreNotFoundError,
  StoreUnavailableError,
  UnsafeFileError,
  WriterFailedError,
} from './contract/errors.js';
export { type LoadExtras, LoadedSession } from './contract/loaded-session.js';
export { type LockClock, systemLockClock } from './contract/lock-clock.js';
export type {
  AppendOptions,
  DamagedSession,
  ListOptions,
  LoadOptions,
  ReplaceLogOptions,
  SessionLock,
  SessionPage,
  SessionStats,
  SessionStore,
  SessionSummary,
  TornBytes,
  TornTail,
  UnlockOptions,
  UnlockReport,
} from './contract/session-store.js';
export {
  callbackKeyProvider,
  type KeyCallbacks,
  type KeyContext,
  type KeyProvider,
  type MasterKeyOptions,
  masterKeyFromEnv,
  masterKeyFromFile,
  masterKeyProvider,
  parseMasterKey,
} from './encryption/key-provider.js';
export {
  FileKeyVault,
  type KeyVault,
  MemoryKeyVault,
  type VaultEntry,
  type VaultLookup,
} from './encryption/key-vault.js';
export { isSealed, type SealedPayload } from './encryption/seal.js';
export {
  EncryptedStore,
  type EncryptedStoreOptions,
  type ShredReport,
} from './encryption/store.js';
export { type Anchor, type DigestText, leafDigest } from './integrity/chain.js';
export { ChainTracker } from './integrity/checkpoint.js';
export type { BreakKind } from './integrity/locate.js';
export {
  type CheckpointSigner,
  ed25519PublicKey,
  ed25519Signer,
} from './integrity/signature.js';
export {
  type Completeness,
  type IntegrityBreak,
  type IntegrityOptions,
  type IntegrityReport,
  verifyIntegrity,
} from './integrity/verify.js';
export { MemoryStore } from './memory/store.js';
export {
  type SearchDocument,
  type SessionFacts,
  type SessionKind,
  searchDocuments,
  sessionFacts,
} from './search/documents.js';
export {
  DEFAULT_LIMIT,
  MAX_LIMIT,
  type SearchHit,
  type SearchOptions,
} from './search/hits.js';
export {
  MAX_QUERY_LENGTH,
  parseSearchQuery,
  type SearchQuery,
  SearchQueryError,
  type SearchTerm,
} from './search/query.js';
export type {
  IndexedSession,
  IndexWrite,
  SearchIndex,
  SearchIndexedStore,
} from './search/search-index.js';
export { type AppendOnceResult, appendOnce } from './session/append-once.js';
export type { CheckpointPolicy } from './session/checkpoints.js';
export { type MoveOptions, type MoveReport, moveSession } from './session/move.js';
export {
  type ChunkLoading,
  type InspectSessionOptions,
  inspectSession,
  LiveSession,
  type OpenReport,
  type OpenSessionOptions,
  openSession,
} from './session/open-session.js';
export {
  DEFAULT_STORE_URL,
  type OpenStoreOptions,
  openStore,
  parseStoreUrl,
  type StoreScheme,
  type StoreUrl,
} from './session/open-store.js';
export { holdsSealedPayloads, requireReadable } from './session/readable.js';
export {
  DEFAULT_WINDOW_MS,
  type Durability,
  Recorder,
  type RecorderStats,
} from './session/recorder.js';
export {
  type RedactOptions,
  type RedactReport,
  type RedactTarget,
  redact,
} from './session/redact.js';
export { redactEverywhere, type SessionRedaction } from './session/redact-everywhere.js';
export {
  type HeldForForks,
  type PlannedRemoval,
  planRetention,
  type RetentionCandidate,
  type RetentionPlan,
  type RetentionPolicy,
  type RetentionReason,
} from './session/retention.js';
export {
  applyRetention,
  type CandidateOptions,
  type RetentionAction,
  type RetentionOutcome,
  type RetentionSkip,
  retentionCandidates,
} from './session/retention-apply.js';
export { parseByteSize, parseDuration } from './session/retention-units.js';
export { type SalvageOptions, type SalvageResult, salvageSession } from './session/salvage.js';
export { rebuildSearchIndex, type SearchResult, searchSessions } from './session/search.js';
