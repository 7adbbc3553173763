/**
 * The request digests an HTML export carries (`SessionSnapshot.requestDigests`), for the trace's
 * detail pane: the page rebuilds a call's request from the log, and palimpsest digested it when
 * it wrote the file. The served page has none here: it asks the server for each request.
 */
import type { SessionSnapshot } from '../protocol.js';

let digests: Readonly<Record<string, string>> | undefined;

/** Keeps the digests of the embedded snapshot (`undefined` in a file written before they were). */
export function takeExportedDigests(snapshot: SessionSnapshot): void {
  digests = snapshot.requestDigests;
}

/**
 * The digest of the request of the call whose `step/start` is `seq`: a string, `'none'` when the
 * file carries digests but none for this call (a call without an answer), `undefined` when the
 * file carries no digests at all.
 */
export function exportedDigest(seq: number): string | undefined {
  if (digests === undefined) return undefined;
  return Object.hasOwn(digests, String(seq)) ? digests[String(seq)] : 'none';
}
