/**
 * What a palimpsest message holds that an AI SDK message has no field for (its id and source,
 * raw tool-call arguments, tool-result content a provider output flattens) travels under the
 * `palimpsest` key of `providerOptions`. Providers read only their own key, so the request on
 * the wire is the same with or without it.
 */
import type { SharedV3ProviderOptions } from '@ai-sdk/provider';
import type { JsonObject, JsonValue } from '../../core/index.js';

/** The `providerOptions` key palimpsest's own fields travel under. */
export const STASH_KEY = 'palimpsest';

/** The stash in `providerOptions`, when there is one. */
export function stashOf(providerOptions: unknown): JsonObject | undefined {
  const options = asObject(providerOptions);
  return options === undefined ? undefined : asObject(options[STASH_KEY]);
}

/** `providerOptions` without the stash, or `undefined` when nothing else is left. */
export function withoutStash(providerOptions: unknown): JsonObject | undefined {
  const options = asObject(providerOptions);
  if (options === undefined) return undefined;
  const rest: Record<string, JsonValue> = {};
  for (const [key, value] of Object.entries(options)) {
    if (key !== STASH_KEY && value !== undefined) rest[key] = value as JsonValue;
  }
  return Object.keys(rest).length === 0 ? undefined : rest;
}

/** `metadata` as `providerOptions`, with `stash` beside it when it holds anything. */
export function withStash(
  metadata: JsonObject | undefined,
  stash: JsonObject,
): { providerOptions?: SharedV3ProviderOptions } {
  const hasStash = Object.keys(stash).length > 0;
  if (metadata === undefined && !hasStash) return {};
  return {
    // Palimpsest's JSON types are readonly; the SDK's are the same values, mutable by type.
    providerOptions: {
      ...(metadata as SharedV3ProviderOptions | undefined),
      ...(hasStash ? { [STASH_KEY]: stash as SharedV3ProviderOptions[string] } : {}),
    },
  };
}

/** `value` as a JSON object, or `undefined` when it is anything else. */
export function asObject(value: unknown): JsonObject | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as JsonObject)
    : undefined;
}
