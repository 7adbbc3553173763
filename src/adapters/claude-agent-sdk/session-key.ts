/**
 * How a Claude Agent SDK session key names a palimpsest session. A main transcript is
 * `claude-code-<sessionId>`, the id `palimpsest import` gives the same session's file; a subagent
 * transcript adds its subpath (`claude-code-<sessionId>/subagents/agent-<id>`), the id the import
 * of `<sessionId>/subagents/agent-<id>.jsonl` gives. The key itself is kept in the header, so a
 * listing by project reads headers only.
 */
import type { JsonObject, SessionHeader } from '../../core/index.js';
import { ClaudeSessionStoreError } from './errors.js';

/** A session key, as the SDK passes it (`SessionKey`): a main transcript has no subpath. */
export interface ClaudeSessionKey {
  readonly projectKey: string;
  readonly sessionId: string;
  readonly subpath?: string;
}

/** The prefix every id this store writes starts with. */
export const ID_PREFIX = 'claude-code-';

/** The header field holding the key. */
export const KEY_FIELD = 'claudeAgentSdk';

/** The palimpsest session id of `key`; checks the key first. */
export function sessionIdOf(key: ClaudeSessionKey): string {
  checkKey(key);
  const main = `${ID_PREFIX}${key.sessionId}`;
  return key.subpath === undefined ? main : `${main}/${key.subpath}`;
}

/** The id prefix of every subagent transcript of a main session. */
export function subkeyPrefixOf(key: Pick<ClaudeSessionKey, 'projectKey' | 'sessionId'>): string {
  return `${sessionIdOf(key)}/`;
}

/** The key a header records, when this store wrote it. */
export function keyOf(header: SessionHeader): ClaudeSessionKey | undefined {
  const value = header.metadata?.[KEY_FIELD];
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const { projectKey, sessionId, subpath } = value as JsonObject;
  if (typeof projectKey !== 'string' || typeof sessionId !== 'string') return undefined;
  return typeof subpath === 'string'
    ? { projectKey, sessionId, subpath }
    : { projectKey, sessionId };
}

/** The key as header metadata. */
export function keyMetadata(key: ClaudeSessionKey): JsonObject {
  return {
    projectKey: key.projectKey,
    sessionId: key.sessionId,
    ...(key.subpath === undefined ? {} : { subpath: key.subpath }),
  };
}

function checkKey(key: unknown): asserts key is ClaudeSessionKey {
  if (typeof key !== 'object' || key === null)
    throw invalid(`expected an object, found ${describe(key)}`);
  const { projectKey, sessionId, subpath } = key as Record<string, unknown>;
  if (typeof projectKey !== 'string' || projectKey === '')
    throw invalid(`expected a non-empty string projectKey, found ${describe(projectKey)}`);
  if (typeof sessionId !== 'string' || sessionId === '')
    throw invalid(`expected a non-empty string sessionId, found ${describe(sessionId)}`);
  if (sessionId.includes('/'))
    throw invalid(`expected a sessionId without '/', found ${describe(sessionId)}`);
  if (subpath !== undefined && (typeof subpath !== 'string' || subpath === ''))
    throw invalid(`expected subpath absent or a non-empty string, found ${describe(subpath)}`);
}

function invalid(reason: string): ClaudeSessionStoreError {
  return new ClaudeSessionStoreError('INVALID_KEY', `invalid session key: ${reason}`);
}

function describe(value: unknown): string {
  // JSON escapes control characters, so nothing raw reaches a terminal.
  if (typeof value === 'string')
    return value === '' ? 'an empty string' : JSON.stringify(value.slice(0, 60));
  if (value === null) return 'null';
  return Array.isArray(value) ? 'an array' : typeof value;
}
