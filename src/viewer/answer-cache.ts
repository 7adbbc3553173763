/**
 * What the viewer server keeps between requests, so that opening a session again does not read
 * its log again: each session's stats for the session list, kept while the store's listing
 * says the same of the session (its last write, size and event count), and `verify`'s result,
 * kept per head (the event count the page holds). Neither holds events.
 */
import type { SessionStats, SessionSummary } from '../store/index.js';
import type { VerifyStatus } from './protocol.js';

/** How many sessions' verify results are kept (each a few lines of text). */
const VERIFIED_KEPT = 64;

/** What the listing says of a session that changes when its log does; `undefined`: nothing. */
function versionOf(summary: SessionSummary): string | undefined {
  const { updatedAt, sizeBytes, eventCount } = summary;
  if (updatedAt === undefined && sizeBytes === undefined && eventCount === undefined) return;
  return `${updatedAt ?? '-'} ${sizeBytes ?? '-'} ${eventCount ?? '-'}`;
}

export class AnswerCache {
  private readonly stats = new Map<string, { version: string; stats: SessionStats }>();
  private readonly verified = new Map<string, VerifyStatus>();

  /**
   * The stats of the session `summary` lists: kept ones while the listing says the same of it,
   * else `read`'s, kept for next time. A store whose listing says nothing of a log's changes
   * is read every time.
   */
  async statsOf(
    summary: SessionSummary,
    read: (id: string) => Promise<SessionStats>,
  ): Promise<SessionStats> {
    const id = summary.header.id;
    const version = versionOf(summary);
    const kept = this.stats.get(id);
    if (version !== undefined && kept?.version === version) return kept.stats;
    const stats = await read(id);
    if (version === undefined) this.stats.delete(id);
    else this.stats.set(id, { version, stats });
    return stats;
  }

  /**
   * Verify's result for session `id` at `head` events: the kept one when it checked exactly
   * that many, else `check`'s, kept for next time. Without `head` (the page's "Check again")
   * it always checks.
   */
  async verifyOf(
    id: string,
    head: number | undefined,
    check: () => Promise<VerifyStatus>,
  ): Promise<VerifyStatus> {
    const kept = this.verified.get(id);
    if (head !== undefined && kept?.events === head) return kept;
    const status = await check();
    this.verified.delete(id);
    this.verified.set(id, status);
    // Maps iterate in insertion order: the first key is the least recently checked.
    if (this.verified.size > VERIFIED_KEPT) {
      const oldest = this.verified.keys().next().value;
      if (oldest !== undefined) this.verified.delete(oldest);
    }
    return status;
  }
}
