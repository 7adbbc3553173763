/**
 * palimpsest/claude-agent-sdk — the Claude Agent SDK's `SessionStore` over a palimpsest store, so
 * `query({ prompt, options: { sessionStore } })` mirrors every Claude Code transcript (and its
 * subagents' transcripts) into an append-only log palimpsest reads like any session.
 *
 * @packageDocumentation
 */
export { ClaudeSessionStoreError, type ClaudeSessionStoreErrorCode } from './errors.js';
export type { ClaudeSessionKey } from './session-key.js';
export { ClaudeTranscriptStore, type ClaudeTranscriptStoreOptions } from './transcript-store.js';
