/**
 * Erasure across a store: a pattern or a subject erased from every session that holds it, for a
 * request that names a person, not a session. A session that cannot be redacted now (a live
 * writer holds it, it is damaged) is reported, never skipped in silence.
 */
import type { SessionStore } from '../contract/session-store.js';
import { everySession } from './list-all.js';
import { type RedactOptions, type RedactReport, redact } from './redact.js';

/** What {@link redactEverywhere} did to one session. */
export type SessionRedaction =
  | { readonly session: string; readonly report: RedactReport }
  /** Not redacted: the error says why (a `LockedError` while a writer holds it, say). */
  | { readonly session: string; readonly error: unknown };

/**
 * Redacts `target` from every session of `store` (see {@link redact}); damaged sessions the
 * listing found are reported as failures too. Sessions where nothing matched have a report
 * with no redaction.
 *
 * @example
 * ```ts
 * import { MemoryStore, openSession, redactEverywhere } from 'palimpsest/store';
 *
 * const store = new MemoryStore();
 * for (const id of ['desk-1', 'desk-2']) {
 *   const live = await openSession(store, id);
 *   live.append(
 *     'user/message',
 *     { id: 'u1', role: 'user', content: [{ type: 'text', text: `${id}: ada@example.com` }], source: { kind: 'user' } },
 *     { surfaceOp: 'append' },
 *   );
 *   await live.close();
 * }
 * const results = await redactEverywhere(store, { match: /ada@example\.com/g }, { reason: 'request 7' });
 * console.log(results.map((result) => ('report' in result ? result.report.erased.length : -1))); // [1, 1]
 * ```
 */
export async function redactEverywhere(
  store: SessionStore,
  target: { readonly match: RegExp } | { readonly subject: string },
  options: RedactOptions,
): Promise<SessionRedaction[]> {
  const { sessions, damaged } = await everySession(store);
  const results: SessionRedaction[] = [];
  for (const { header } of sessions) {
    try {
      results.push({ session: header.id, report: await redact(store, header.id, target, options) });
    } catch (error) {
      results.push({ session: header.id, error });
    }
  }
  for (const entry of damaged) {
    results.push({ session: entry.id ?? '(unknown id)', error: entry.error });
  }
  return results;
}
