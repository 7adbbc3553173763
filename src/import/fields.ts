/**
 * Defensive reads of source entries: every harness adds and drops fields between versions, so a
 * field of the wrong type reads as absent rather than failing the import.
 */
import type { ImageBlock, JsonObject, JsonValue, TextBlock, TokenUsage } from '../core/index.js';

/** The field as a JSON object, or `undefined`. */
export function objectField(value: JsonObject | undefined, key: string): JsonObject | undefined {
  const field = value?.[key];
  return typeof field === 'object' && field !== null && !Array.isArray(field)
    ? (field as JsonObject)
    : undefined;
}

/** The field as a string, or `undefined`. */
export function stringField(value: JsonObject | undefined, key: string): string | undefined {
  const field = value?.[key];
  return typeof field === 'string' ? field : undefined;
}

/** The field as a number, or `undefined`. */
export function numberField(value: JsonObject | undefined, key: string): number | undefined {
  const field = value?.[key];
  return typeof field === 'number' && Number.isFinite(field) ? field : undefined;
}

/** The field as an array of objects (other elements dropped), or `undefined`. */
export function objectsField(
  value: JsonObject | undefined,
  key: string,
): readonly JsonObject[] | undefined {
  const field = value?.[key];
  if (!Array.isArray(field)) return undefined;
  return field.filter(
    (item): item is JsonObject => typeof item === 'object' && item !== null && !Array.isArray(item),
  );
}

/** A text block. */
export function text(value: string): TextBlock {
  return { type: 'text', text: value };
}

/** An image block from a `data:` URL or any other URL. */
export function imageFromUrl(url: string): ImageBlock {
  const match = /^data:([^;,]+);base64,(.*)$/s.exec(url);
  if (match !== null)
    return { type: 'image', mediaType: match[1] as string, data: match[2] as string };
  return { type: 'image', mediaType: guessMediaType(url), url };
}

function guessMediaType(url: string): string {
  const ext = /\.([a-z0-9]+)(?:[?#].*)?$/i.exec(url)?.[1]?.toLowerCase();
  return ext === 'png'
    ? 'image/png'
    : ext === 'gif'
      ? 'image/gif'
      : ext === 'webp'
        ? 'image/webp'
        : 'image/jpeg';
}

/** A value's JSON text (for tool arguments the source keeps parsed). */
export function jsonText(value: JsonValue | undefined): string {
  return value === undefined ? '{}' : JSON.stringify(value);
}

/** The last segment of a path. */
export function baseName(path: string): string {
  return path.slice(Math.max(path.lastIndexOf('/'), path.lastIndexOf('\\')) + 1);
}

/** The fields `keys` of `value` that are present. */
export function pick(value: JsonObject, keys: readonly string[]): JsonObject {
  const out: Record<string, JsonObject[string]> = {};
  for (const key of keys) if (value[key] !== undefined) out[key] = value[key];
  return out;
}

/**
 * A source's usage object as {@link TokenUsage}: each count `names` maps that the source
 * reported, and the whole object as `raw`.
 */
export function usageOf(
  usage: JsonObject,
  names: Readonly<Partial<Record<Exclude<keyof TokenUsage, 'raw'>, string>>>,
): TokenUsage {
  const out: Record<string, number | JsonObject> = {};
  for (const to in names) {
    const value = numberField(usage, names[to as keyof typeof names] as string);
    if (value !== undefined) out[to] = value;
  }
  out.raw = usage;
  return out as TokenUsage;
}

/**
 * The text and image blocks of a source's content (a string, or an array of blocks): `imageOf`
 * reads an `image` block the source's way; every other block (and an image `imageOf` cannot read)
 * is passed to `other` by type and left out.
 */
export function textAndImages(
  content: unknown,
  imageOf: (block: JsonObject) => ImageBlock | undefined,
  other: (type: string) => void,
): (TextBlock | ImageBlock)[] {
  if (typeof content === 'string') return [text(content)];
  if (!Array.isArray(content)) return [];
  const out: (TextBlock | ImageBlock)[] = [];
  for (const item of content) {
    if (typeof item !== 'object' || item === null || Array.isArray(item)) continue;
    const block = item as JsonObject;
    const image = block.type === 'image' ? imageOf(block) : undefined;
    if (block.type === 'text' && typeof block.text === 'string') out.push(text(block.text));
    else if (image !== undefined) out.push(image);
    else other(String(block.type));
  }
  return out;
}
