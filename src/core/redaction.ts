/**
 * Redaction placeholders: what an event holds once content was erased from it. The event keeps
 * its place, its type and every field that derivation, repair and the linter read (ids, roles,
 * turn and step, call ids, tool names, models, usage numbers); the text a person or a tool wrote
 * becomes {@link REDACTED_TEXT}. The form is a pure function of the event, so every store writes
 * the same bytes and the hash chain can record their digest.
 */
import type { SessionEvent } from './events.js';
import type { JsonValue } from './json.js';
import { asObject } from './messages.js';

/** The text that stands where erased text was. */
export const REDACTED_TEXT = '[redacted]';

/**
 * Keys whose string values are structure, not content: kept by a redaction. Everything else a
 * person, a model or a tool wrote (texts, arguments, outputs, error messages) is erased.
 */
const STRUCTURAL_KEYS: ReadonlySet<string> = new Set([
  'id',
  'role',
  'type',
  'kind',
  'callId',
  'toolCallId',
  'toolName',
  'name',
  'provider',
  'model',
  'modelId',
  'finishReason',
  'mediaType',
  'requestDigest',
  'code',
]);

/** Keys whose string value is JSON text: redacted inside, so it stays JSON. */
const JSON_TEXT_KEYS: ReadonlySet<string> = new Set(['arguments', 'input']);

/**
 * What to erase from an event: everything it says (`undefined`), or only the text a pattern
 * matches. A pattern must have the `g` flag (every occurrence is erased).
 */
export type RedactionPattern = RegExp | undefined;

/**
 * The data an event holds once redacted: with no pattern, every content string becomes
 * `[redacted]` and every image a `[redacted]` text block; with a pattern, each match in a content
 * string becomes `[redacted]` and the rest stays. JSON text (tool arguments, a JSON tool result)
 * is redacted inside and stays JSON. The result passes the admission checks of the event's type
 * whenever the original did.
 *
 * @example
 * ```ts
 * import { redactedData } from 'palimpsest';
 *
 * const data = {
 *   id: 'u1',
 *   role: 'user',
 *   content: [{ type: 'text', text: 'mail me at ada@example.com' }],
 *   source: { kind: 'user' },
 * };
 * const whole = redactedData(data) as { content: Array<{ text: string }> };
 * console.log(whole.content[0]?.text); // '[redacted]'
 * const part = redactedData(data, /[\w.]+@[\w.]+/g) as { content: Array<{ text: string }> };
 * console.log(part.content[0]?.text); // 'mail me at [redacted]'
 * ```
 */
export function redactedData(data: JsonValue, pattern?: RegExp): JsonValue {
  checkPattern(pattern);
  return redactValue(data, undefined, pattern);
}

/**
 * Whether a content string of `data` (as {@link redactedData} reads content) holds a match of
 * `pattern`.
 */
export function contentMatches(data: JsonValue, pattern: RegExp): boolean {
  checkPattern(pattern);
  return matchesValue(data, undefined, pattern);
}

/**
 * For each event a `log/redaction` of `events` erased, the seq of the last redaction that did.
 *
 * @example
 * ```ts
 * import { redactedSeqs } from 'palimpsest';
 *
 * const erased = { seq: 0, before: 'sha256:a', after: 'sha256:b' };
 * const found = redactedSeqs([
 *   { seq: 0, time: 0, type: 'turn/start', data: { turn: 1 } },
 *   { seq: 1, time: 0, type: 'log/redaction', data: { reason: 'ticket 7', selector: 'seqs', erased: [erased] } },
 * ]);
 * console.log(found.get(0)); // 1
 * ```
 */
export function redactedSeqs(events: Iterable<SessionEvent | undefined>): Map<number, number> {
  const found = new Map<number, number>();
  for (const event of events) {
    if (event?.type !== 'log/redaction') continue;
    for (const erased of event.data.erased) found.set(erased.seq, event.seq);
  }
  return found;
}

function checkPattern(pattern: RegExp | undefined): void {
  if (pattern !== undefined && !pattern.global) {
    throw new TypeError(
      `expected a pattern with the g flag, found /${pattern.source}/${pattern.flags}`,
    );
  }
}

/**
 * `value` redacted. `key` is the key it is held under; inside JSON text (tool arguments) no key is
 * structure, so `key` is `undefined` there all the way down (`inJson`).
 */
function redactValue(
  value: JsonValue,
  key: string | undefined,
  pattern: RegExp | undefined,
  inJson = false,
): JsonValue {
  if (typeof value === 'string') {
    if (!inJson && key !== undefined && STRUCTURAL_KEYS.has(key)) return value;
    if (!inJson && key !== undefined && JSON_TEXT_KEYS.has(key))
      return redactJsonText(value, pattern);
    return pattern === undefined ? REDACTED_TEXT : value.replace(pattern, REDACTED_TEXT);
  }
  if (Array.isArray(value)) return value.map((item) => redactValue(item, key, pattern, inJson));
  const record = asObject(value);
  if (record === undefined) return value;
  if (!inJson && pattern === undefined && (record.type === 'image' || record.type === 'file')) {
    // An image has no text to keep: a text block stands in its place.
    return { type: 'text', text: REDACTED_TEXT };
  }
  // fromEntries defines each key as data: a `__proto__` key stays a key, never a prototype.
  const out: Record<string, JsonValue> = Object.fromEntries(
    Object.entries(record).map(([name, inner]) => [
      name,
      redactValue(inner, name, pattern, inJson),
    ]),
  );
  // A tool result's content holds its text blocks: their texts are JSON when the result is.
  const content = record.content;
  if (!inJson && record.isJson === true && Array.isArray(content)) {
    out.content = content.map((block: JsonValue) => redactJsonBlock(block, pattern));
  }
  return out;
}

function redactJsonBlock(block: JsonValue, pattern: RegExp | undefined): JsonValue {
  const redacted = redactValue(block, undefined, pattern);
  const text = asObject(block)?.text;
  const record = asObject(redacted);
  if (typeof text !== 'string' || record === undefined) return redacted;
  return { ...record, text: redactJsonText(text, pattern) };
}

/** JSON text with its content redacted, still JSON; text that is not JSON is redacted as text. */
function redactJsonText(text: string, pattern: RegExp | undefined): string {
  let parsed: JsonValue;
  try {
    parsed = JSON.parse(text) as JsonValue;
  } catch {
    return pattern === undefined ? REDACTED_TEXT : text.replace(pattern, REDACTED_TEXT);
  }
  return JSON.stringify(redactValue(parsed, undefined, pattern, true));
}

function matchesValue(value: JsonValue, key: string | undefined, pattern: RegExp): boolean {
  if (typeof value === 'string') {
    if (key !== undefined && STRUCTURAL_KEYS.has(key)) return false;
    pattern.lastIndex = 0;
    const found = pattern.test(value);
    pattern.lastIndex = 0;
    return found;
  }
  if (Array.isArray(value))
    return value.some((item: JsonValue) => matchesValue(item, key, pattern));
  const record = asObject(value);
  if (record === undefined) return false;
  return Object.entries(record).some(([name, inner]) => matchesValue(inner, name, pattern));
}
