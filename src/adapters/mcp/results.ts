/**
 * What a tool answers: text sized for a model (cut with a note saying so) beside the same
 * content as structured data, and errors as MCP tool errors that carry their code.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { PalimpsestError } from '../../core/index.js';

/** Characters of text one tool result holds unless the caller asks for fewer. */
export const DEFAULT_MAX_CHARS = 20_000;

/** Characters one entry (a message, an event's data) holds before it is cut. */
export const MAX_ENTRY_CHARS = 4_000;

/** `text` cut to `max` characters, with a note saying how much was left out. */
export function clip(text: string, max = MAX_ENTRY_CHARS): string {
  if (text.length <= max) return text;
  return `${text.slice(0, max)}… [${text.length - max} more characters cut]`;
}

/**
 * Lines taken in order while they fit in `maxChars`; at least one is always taken, so a page
 * always moves forward.
 */
export function fitLines<T>(
  items: readonly T[],
  render: (item: T) => string,
  maxChars: number,
): { readonly taken: readonly T[]; readonly lines: readonly string[] } {
  const taken: T[] = [];
  const lines: string[] = [];
  let used = 0;
  for (const item of items) {
    const line = render(item);
    if (taken.length > 0 && used + line.length + 1 > maxChars) break;
    taken.push(item);
    lines.push(line);
    used += line.length + 1;
  }
  return { taken, lines };
}

/** A successful tool result: the text for the model and the structured content of its schema. */
export function answer(text: string, structured: Record<string, unknown>): CallToolResult {
  return { content: [{ type: 'text', text }], structuredContent: structured };
}

/**
 * A failed call as an MCP tool error (`isError`), so the model reads why. The text starts with
 * the error's stable code; an error that is not palimpsest's own is `INTERNAL`. Credentials a
 * lower layer may have quoted in a URL are removed.
 */
export function failure(error: unknown): CallToolResult {
  const code = PalimpsestError.isInstance(error) ? error.code : 'INTERNAL';
  const message = error instanceof Error ? error.message : String(error);
  const text = `${code}: ${clip(scrubCredentials(message), 2_000)}`;
  return { isError: true, content: [{ type: 'text', text }] };
}

function scrubCredentials(text: string): string {
  return text.replace(/\/\/[^/\s@]*@/g, '//');
}
