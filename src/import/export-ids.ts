/**
 * Ids an export derives from the session: the same session exported twice gets the same ids, so
 * a file written again replaces the earlier one instead of making a second session.
 */
import { createHash } from 'node:crypto';

/** The SHA-256 of `text`, in hex. */
export function hexDigest(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** A version-4-shaped UUID derived from `text`: the same text gives the same id. */
export function uuidOf(text: string): string {
  const h = hexDigest(text);
  const variant = ((Number.parseInt(h[16] ?? '0', 16) & 3) | 8).toString(16);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}
