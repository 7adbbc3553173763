/**
 * Head/tail excerpts of tool output: what the model gets in place of a result too large to
 * send whole, with a marker saying how much was cut and where the whole is. The loop's output
 * limit and compaction's pruner both cut this way. Lengths are in code points, so no surrogate
 * pair is split, and the text is never copied whole: an excerpt of 70 MiB costs its own size.
 */
import type { ToolResultContentBlock } from '../core/index.js';

/** How to cut: code points kept from the start and the end, and the marker between them. */
export interface ExcerptOptions {
  readonly headChars: number;
  readonly tailChars: number;
  /** The marker text, given the code points cut and the total (surround it with newlines). */
  readonly marker: (cut: number, total: number) => string;
}

/**
 * The code points of the text blocks, plus one per separator between them (they are joined
 * with newlines when excerpted), so the numbers a marker states add up.
 */
export function textChars(blocks: readonly ToolResultContentBlock[]): number {
  let chars = 0;
  let texts = 0;
  for (const block of blocks) {
    if (block.type !== 'text') continue;
    chars += codePoints(block.text);
    texts++;
  }
  return chars + Math.max(0, texts - 1);
}

/**
 * The text blocks joined with newlines and cut to head + marker + tail; other blocks (images)
 * follow, in order. `chars` is {@link textChars} of `blocks`.
 */
export function excerptBlocks(
  blocks: readonly ToolResultContentBlock[],
  chars: number,
  options: ExcerptOptions,
): ToolResultContentBlock[] {
  const text = blocks.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join('\n');
  const { headChars, tailChars } = options;
  const head = text.slice(0, headEnd(text, headChars));
  const tail = tailChars === 0 ? '' : text.slice(tailStart(text, tailChars));
  const cut = Math.max(0, chars - headChars - tailChars);
  const out: ToolResultContentBlock[] = [
    { type: 'text', text: `${head}${options.marker(cut, chars)}${tail}` },
  ];
  for (const block of blocks) if (block.type !== 'text') out.push(block);
  return out;
}

/** The code points of `text`, counted without copying it. */
export function codePoints(text: string): number {
  let count = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0xdc00 || code > 0xdfff || !isHigh(text.charCodeAt(i - 1))) count++;
  }
  return count;
}

/** The UTF-16 index after the first `points` code points. */
function headEnd(text: string, points: number): number {
  let index = 0;
  for (let n = 0; n < points && index < text.length; n++) {
    index += isHigh(text.charCodeAt(index)) && isLow(text.charCodeAt(index + 1)) ? 2 : 1;
  }
  return index;
}

/** The UTF-16 index where the last `points` code points begin. */
function tailStart(text: string, points: number): number {
  let index = text.length;
  for (let n = 0; n < points && index > 0; n++) {
    index -= isLow(text.charCodeAt(index - 1)) && isHigh(text.charCodeAt(index - 2)) ? 2 : 1;
  }
  return index;
}

function isHigh(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

function isLow(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}
