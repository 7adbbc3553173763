/**
 * Credentials out of what the log keeps. Provider error bodies are written by servers and
 * proxies the caller does not control, and some echo the request's key or `Authorization`
 * header; a session file is shared, printed and exported, so failures are redacted before they
 * become event data. Known values (the provider key variables, the caller's header values) are
 * removed wherever they appear; well-known credential shapes are removed even when unknown.
 */
import type { JsonValue } from '../core/index.js';

/** What a redacted credential is replaced with. */
export const REDACTED = '[redacted]';

/** The environment variables whose values are provider credentials. */
export const SECRET_ENV_VARS: readonly string[] = [
  'DEEPSEEK_API_KEY',
  'OPENAI_API_KEY',
  'ANTHROPIC_API_KEY',
];

// Values shorter than this are not secrets worth a literal search, and would redact ordinary
// words.
const MIN_SECRET_LENGTH = 8;

const SHAPES: readonly [RegExp, string][] = [
  // `Authorization: Bearer x`, `"x-api-key": "x"`, `api_key=x`: keep the label, drop the value.
  [
    /\b(authorization|proxy-authorization|x-api-key|api[-_]?key|access[-_]?token)(["']?\s*[:=]\s*["']?)((?:bearer|basic)\s+)?[^\s"',;&)}\]]+/gi,
    `$1$2$3${REDACTED}`,
  ],
  [/\bBearer\s+[A-Za-z0-9._~+/=-]{8,}/gi, `Bearer ${REDACTED}`],
  // OpenAI (`sk-`, `sk-proj-`), Anthropic (`sk-ant-`) and DeepSeek (`sk-`) key shapes.
  [/\bsk-[A-Za-z0-9_-]{16,}/g, REDACTED],
];

/** The credential values known in this process: the provider key variables that are set. */
export function knownSecrets(extra: readonly string[] = []): string[] {
  // Read through globalThis: the model layer imports no Node module.
  const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process
    ?.env;
  const values = SECRET_ENV_VARS.map((name) => env?.[name]);
  return [...values, ...extra].filter(
    (value): value is string => typeof value === 'string' && value.length >= MIN_SECRET_LENGTH,
  );
}

/** `text` with every known secret and every credential-shaped token replaced by `[redacted]`. */
export function redactSecrets(text: string, secrets: readonly string[] = knownSecrets()): string {
  let out = text;
  for (const secret of secrets) out = out.split(secret).join(REDACTED);
  for (const [pattern, replacement] of SHAPES) out = out.replace(pattern, replacement);
  return out;
}

/** A JSON value with {@link redactSecrets} applied to every string in it (keys are kept). */
export function redactJson(
  value: JsonValue,
  secrets: readonly string[] = knownSecrets(),
): JsonValue {
  if (typeof value === 'string') return redactSecrets(value, secrets);
  if (Array.isArray(value)) return value.map((item) => redactJson(item, secrets));
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, JsonValue> = {};
  for (const [key, item] of Object.entries(value)) {
    Object.defineProperty(out, key, {
      value: redactJson(item, secrets),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}
