/**
 * palimpsest/import — sessions written by Claude Code, Codex CLI and pi, read into palimpsest
 * sessions (docs/import.md maps each format).
 *
 * @packageDocumentation
 */
export {
  type AssistantInfo,
  type Harness,
  type ImportOrigin,
  NO_RESULT,
} from './builder.js';
export { readClaudeCode, subagentLink } from './claude-code.js';
export { GrowingClaudeTranscript } from './claude-code-growing.js';
export { readCodex } from './codex.js';
export { ImportError, type ImportErrorCode } from './errors.js';
export {
  type ClaudeCodeExportOptions,
  type ClaudeCodeFile,
  exportClaudeCode,
} from './export-claude-code.js';
export { type CodexExportOptions, type CodexFile, exportCodex } from './export-codex.js';
export { exportPi, PI_SESSION_VERSION, type PiExportOptions } from './export-pi.js';
export type { ExportLoss, HarnessFile } from './export-walk.js';
export {
  type FailedFile,
  type ImportOptions,
  type ImportReport,
  importSessions,
  type SessionOutcome,
} from './import-sessions.js';
export { type ParseLinesOptions, parseLines, type SourceLine } from './lines.js';
export { readPi } from './pi.js';
export { HARNESSES, isHarness, MAX_SOURCE_BYTES, readSourceFile, sourceFiles } from './read.js';
export type { ForkSource, ImportedFile, ImportedSession, ReadOptions } from './source.js';
export { type WatchImportOptions, watchImports } from './watch.js';
