/**
 * Data shapes of the core vocabulary, checked when an event is admitted. Surface events must
 * carry a well-formed message (providers and derivation rely on it); log-only core events must
 * carry the turn, step and identity fields that repair, fork and the linter read. Fields beyond
 * those are free, so writers can add detail without a format change.
 */
import type { JsonObject, JsonValue } from './json.js';
import { asObject, checkMessageShape, type ShapeIssue } from './messages.js';

/** The kinds of `turn/end` reasons. */
export const TURN_END_KINDS = [
  'completed',
  'aborted',
  'error',
  'max-tokens',
  'max-steps',
  'context-overflow',
  'interrupted',
] as const;

/** The `turn/end` kinds that carry a `ProviderFailure` as `reason.error`. */
export function reasonNeedsError(kind: unknown): boolean {
  return kind === 'error' || kind === 'context-overflow';
}

/** True for a safe integer ≥ 0 that is not `-0`. */
export function isSeqLike(value: unknown): value is number {
  return (
    typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 && !Object.is(value, -0)
  );
}

// The field lists of the checks, made once: a literal in the call would be a new array per event.
const TURN: readonly string[] = ['turn'];
const TURN_STEP: readonly string[] = ['turn', 'step'];
const CALL_STRINGS: readonly string[] = ['callId', 'name'];
const HEADER_STRINGS: readonly string[] = ['provider', 'model'];
const RETRY_INTEGERS: readonly string[] = ['turn', 'step', 'attempt', 'delayMs'];
const ID: readonly string[] = ['id'];
const NONE: readonly string[] = [];
const REASON: readonly string[] = ['reason'];
const SEQ: readonly string[] = ['seq'];
const DIGESTS: readonly string[] = ['before', 'after'];
const CHECKPOINT_INTEGERS: readonly string[] = ['count', 'from'];
const CHECKPOINT_STRINGS: readonly string[] = ['session', 'head'];

/**
 * The `turn` and `step` of an event's data: a check of the two named fields (most events have
 * them), and the general check, which names the field at fault, only when one is wrong.
 */
function positionIssue(record: JsonObject): ShapeIssue | undefined {
  return isSeqLike(record.turn) && isSeqLike(record.step)
    ? undefined
    : checkIntegers(record, TURN_STEP);
}

/** Shape problems of a surface event's data (a message), by type. */
export function checkSurfaceData(type: string, data: JsonValue): ShapeIssue | undefined {
  if (type === 'user/message' || type === 'context/message') {
    return checkMessageShape(data, 'user', 'data');
  }
  const record = asObject(data);
  if (record === undefined) return { path: 'data', reason: `expected a ${type} data object` };
  const position = positionIssue(record);
  if (position !== undefined) return position;
  if (type === 'assistant/message') {
    if (typeof record.finishReason !== 'string') {
      return { path: 'data.finishReason', reason: 'expected a string finish reason' };
    }
    if (record.interrupted !== undefined && record.interrupted !== true) {
      return { path: 'data.interrupted', reason: 'expected true when present' };
    }
    if (record.usage !== undefined && asObject(record.usage) === undefined) {
      return { path: 'data.usage', reason: 'expected an object when present' };
    }
    if (record.requestDigest !== undefined && typeof record.requestDigest !== 'string') {
      return { path: 'data.requestDigest', reason: 'expected a string when present' };
    }
    return checkMessageShape(record.message as JsonValue, 'assistant', 'data.message');
  }
  const error = record.error;
  if (error !== undefined) {
    const errorRecord = asObject(error);
    if (
      errorRecord === undefined ||
      typeof errorRecord.code !== 'string' ||
      typeof errorRecord.message !== 'string'
    ) {
      return { path: 'data.error', reason: 'expected {code, message} strings when present' };
    }
  }
  return checkMessageShape(record.message as JsonValue, 'tool', 'data.message');
}

/** Shape problems of a log-only core event's data; `undefined` for other types. */
export function checkLogData(type: string, data: JsonValue): ShapeIssue | undefined {
  switch (type) {
    case 'assistant/chunk': {
      const record = asObject(data);
      if (record === undefined) return { path: 'data', reason: 'expected {turn, step, chunk}' };
      const position = positionIssue(record);
      if (position !== undefined) return position;
      const chunk = asObject(record.chunk);
      if (chunk === undefined || typeof chunk.type !== 'string') {
        return { path: 'data.chunk', reason: 'expected a stream part object with a string type' };
      }
      return undefined;
    }
    case 'turn/start':
      return checkFields(data, TURN, NONE);
    case 'step/start':
    case 'step/end':
      return checkFields(data, TURN_STEP, NONE);
    case 'turn/end': {
      const issue = checkFields(data, TURN, NONE);
      if (issue !== undefined) return issue;
      const reason = asObject((data as JsonObject).reason);
      if (reason === undefined || !(TURN_END_KINDS as readonly unknown[]).includes(reason.kind)) {
        return { path: 'data.reason', reason: `expected {kind: ${TURN_END_KINDS.join(' | ')}}` };
      }
      if (reasonNeedsError(reason.kind) && typeof asObject(reason.error)?.message !== 'string') {
        return {
          path: 'data.reason.error',
          reason: `expected {message} for an ${String(reason.kind)} ending`,
        };
      }
      return undefined;
    }
    case 'tool/call': {
      const issue = checkFields(data, TURN_STEP, CALL_STRINGS);
      if (issue !== undefined) return issue;
      if (typeof (data as JsonObject).arguments !== 'string') {
        return { path: 'data.arguments', reason: 'expected the raw JSON arguments as a string' };
      }
      return undefined;
    }
    case 'request/header': {
      const issue = checkFields(data, NONE, HEADER_STRINGS);
      if (issue !== undefined) return issue;
      const record = data as JsonObject;
      if (record.system !== undefined && typeof record.system !== 'string') {
        return { path: 'data.system', reason: 'expected a string when present' };
      }
      if (record.tools !== undefined && !Array.isArray(record.tools)) {
        return { path: 'data.tools', reason: 'expected an array of tool schemas when present' };
      }
      return undefined;
    }
    case 'request/retry':
    case 'request/overflow': {
      const integers = type === 'request/retry' ? RETRY_INTEGERS : TURN_STEP;
      const issue = checkFields(data, integers, NONE);
      if (issue !== undefined) return issue;
      if (typeof asObject((data as JsonObject).error)?.message !== 'string') {
        return { path: 'data.error', reason: 'expected a provider failure {message}' };
      }
      return undefined;
    }
    case 'queue/steer':
    case 'queue/follow-up':
      return checkMessageShape(data, 'user', 'data');
    case 'compaction/start':
    case 'compaction/end':
      return checkFields(data, NONE, ID);
    case 'log/redaction': {
      const issue = checkFields(data, NONE, REASON);
      if (issue !== undefined) return issue;
      const erased = (data as JsonObject).erased;
      if (!Array.isArray(erased) || erased.length === 0) {
        return {
          path: 'data.erased',
          reason: 'expected a non-empty array of {seq, before, after}',
        };
      }
      for (let i = 0; i < erased.length; i++) {
        const entry = checkFields(erased[i] as JsonValue, SEQ, DIGESTS);
        if (entry !== undefined)
          return { ...entry, path: entry.path.replace('data', `data.erased[${i}]`) };
      }
      return undefined;
    }
    case 'log/checkpoint':
      return checkFields(data, CHECKPOINT_INTEGERS, CHECKPOINT_STRINGS);
    default:
      return undefined;
  }
}

function checkFields(
  data: JsonValue,
  integers: readonly string[],
  strings: readonly string[],
): ShapeIssue | undefined {
  const record = asObject(data);
  if (record === undefined) {
    return {
      path: 'data',
      reason: `expected an object with ${[...integers, ...strings].join(', ')}`,
    };
  }
  const issue = checkIntegers(record, integers);
  if (issue !== undefined) return issue;
  for (const field of strings) {
    const value = record[field];
    if (typeof value !== 'string' || value === '') {
      return { path: `data.${field}`, reason: 'expected a non-empty string' };
    }
  }
  return undefined;
}

function checkIntegers(record: JsonObject, fields: readonly string[]): ShapeIssue | undefined {
  for (const field of fields) {
    if (!isSeqLike(record[field])) {
      return { path: `data.${field}`, reason: 'expected a non-negative integer' };
    }
  }
  return undefined;
}
