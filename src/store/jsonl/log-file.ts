/**
 * A whole log file's content, for a log written anew in one piece (`replaceLog`): the header
 * line with its seal, then the events in batches, exactly as creating the session and
 * appending the batches would have written them.
 */
import type { SessionEvent, SessionHeader } from '../../core/index.js';
import { encodeBatch } from './format.js';
import { encodeHeaderLine } from './header.js';

/** Events per batch of a log written whole: a scan holds one batch in memory at a time. */
const EVENTS_PER_BATCH = 4096;

/** The bytes of a log holding `header` and `events`. */
export function encodeLog(
  header: SessionHeader,
  id: string,
  events: readonly SessionEvent[],
  maxLineBytes: number,
): Buffer {
  const parts = [encodeHeaderLine(header, maxLineBytes)];
  for (let from = 0; from < events.length; from += EVENTS_PER_BATCH) {
    const batch = events.slice(from, from + EVENTS_PER_BATCH);
    parts.push(encodeBatch(id, batch, from + batch.length, maxLineBytes));
  }
  return Buffer.concat(parts);
}
