/**
 * palimpsest/openai-agents — an OpenAI Agents JS SDK `Session` backed by a palimpsest store, so
 * `run(agent, input, { session })` persists into an append-only log whose surface is the history.
 *
 * @packageDocumentation
 */
export { OpenAIAgentsSessionError, type OpenAIAgentsSessionErrorCode } from './errors.js';
export { PalimpsestSession, type PalimpsestSessionOptions } from './session.js';
export type { RemovalCause, RemovalData } from './turn-writer.js';
