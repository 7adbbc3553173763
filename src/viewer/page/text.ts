/**
 * Untrusted text made safe to look at: it always reaches the DOM as text (never as markup), and
 * characters that could deceive a reader are shown as visible escapes first.
 */

// C0 controls but tab and newline, DEL, C1 controls, and the bidirectional marks, embeddings,
// overrides and isolates that reorder what a reader sees (a "trojan source" tool output).
const UNSEEN =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is its job.
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** `text` with every deceptive character replaced by a visible `\uXXXX`. */
export function visible(text: string): string {
  return text.replace(UNSEEN, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** The first line of `text`, at most `max` characters, made visible: what a row shows. */
export function excerpt(text: string, max = 240): string {
  // Only the head is looked at, so a 10 MB single-line output costs no more than a short one.
  const head = text.slice(0, max + 1);
  const line = head.replace(/\s+/g, ' ').trim();
  return visible(line.length > max ? `${line.slice(0, max)}…` : line);
}

/** Longest text the detail pane shows before a "show all" button. */
export const DETAIL_CHARS = 100_000;

/**
 * A count with thousands separators. Not `toLocaleString`: its first call in a page sets up the
 * ICU number formatter, about 20 ms, which every row's context bar paid on the first render.
 */
export function count(value: number): string {
  if (!Number.isSafeInteger(value)) return String(value);
  const digits = String(Math.abs(value));
  const grouped = digits.replace(/\B(?=(\d{3})+$)/g, ',');
  return value < 0 ? `-${grouped}` : grouped;
}

/** `value` counted in words: `1 turn`, `5 turns`, `1,204 events`, `0 surface entries`. */
export function counted(value: number, noun: string, plural = `${noun}s`): string {
  return `${count(value)} ${value === 1 ? noun : plural}`;
}

/** A byte size in B, KB or MB. */
export function bytes(value: number): string {
  if (value < 1024) return `${value} B`;
  if (value < 1024 * 1024) return `${(value / 1024).toFixed(1)} KB`;
  return `${(value / 1024 / 1024).toFixed(1)} MB`;
}

/** An epoch-ms time as `YYYY-MM-DD HH:MM:SS` (UTC, as the CLI prints it). */
export function timeText(time: number): string {
  return new Date(time).toISOString().replace('T', ' ').slice(0, 19);
}

/** `#a–#b` for a sorted run, `#a` for one seq. */
export function seqRange(seqs: readonly number[]): string {
  const first = seqs[0];
  const last = seqs[seqs.length - 1];
  if (first === undefined || last === undefined) return '(none)';
  return first === last ? `#${first}` : `#${first}–#${last}`;
}
