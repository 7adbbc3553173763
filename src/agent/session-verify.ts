/**
 * What `palimpsest verify` checks of one stored session, in one place for the CLI and the
 * viewer's server: the log folded by core (every surface rule), its invariants (turn and step
 * nesting, tool call and result pairing, provenance kinds, no turn left open), a torn final
 * batch, the request digests the writer recorded, and, when asked, the store's hash chain.
 */
import { checkInvariants, planRepair, Session } from '../core/index.js';
import {
  type Anchor,
  EncryptedStore,
  EncryptionError,
  holdsSealedPayloads,
  type IntegrityReport,
  LoadedSession,
  type SessionStore,
  ShreddedKeyError,
  verifyIntegrity,
} from '../store/index.js';
import { checkRequestDigests } from './request-at.js';

/** What was checked of one session and what was found. */
export interface SessionVerdict {
  readonly id: string;
  readonly events: number;
  readonly ok: boolean;
  /** Each problem on one line, `#seq CODE: …` where it has a place in the log. */
  readonly problems: string[];
  /** A code for a session that could not be checked at all (`KEY_REQUIRED`, a load's error). */
  readonly code?: string;
  /** What is worth knowing but is no problem (an imported session's open source turn...). */
  readonly notes: string[];
  /** The hash chain's report, when it was checked. */
  readonly integrity?: IntegrityReport;
}

/** Options of {@link verifyStoredSession}. */
export interface VerifyCheckOptions {
  /**
   * Check the hash chain: always (`true`, the CLI's `--integrity`), never (`false`), or when the
   * session has one (`'when-chained'`: a `log/checkpoint` in its log), as the viewer does.
   */
  readonly integrity: boolean | 'when-chained';
  /** Ed25519 public keys (PEM) whose checkpoint signatures are checked. */
  readonly keys?: readonly string[];
  /** Anchors of this session's chain. */
  readonly anchors?: readonly Anchor[];
}

/**
 * Verifies session `id` of `store`. A failure to load (not found, damaged before its last batch)
 * is thrown, for the caller to report in its own terms; an encrypted session whose key cannot be
 * had is a verdict (its chain can still be checked).
 */
export async function verifyStoredSession(
  store: SessionStore,
  id: string,
  options: VerifyCheckOptions,
): Promise<SessionVerdict> {
  const keys = options.keys ?? [];
  const anchors = (options.anchors ?? []).filter((anchor) => anchor.session === id);
  const loaded = await loadOrKeyless(store, id);
  if (!(loaded instanceof LoadedSession)) {
    return keyless(loaded.sealed, loaded.why, options.integrity === true, keys, anchors);
  }
  if (holdsSealedPayloads(loaded)) {
    const why = 'no key was given (--key-vault with the master key)';
    return keyless(loaded, why, options.integrity === true, keys, anchors);
  }
  const session = Session.create({ header: loaded.header, seed: loaded.events });
  // An imported session mirrors its source: a source that ends inside a turn (the harness
  // stopped mid-turn, or is still writing) is what it holds, not a crash of its writer.
  const origin = loaded.header.metadata?.imported;
  const imported = typeof origin === 'object' && origin !== null;
  const violations = checkInvariants(session.events, { requireClosed: true });
  const open = violations.filter((violation) => violation.code === 'OPEN_AT_END');
  const problems = violations
    .filter((violation) => !imported || violation.code !== 'OPEN_AT_END')
    .map((violation) => `#${violation.seq} ${violation.code}: ${violation.message}`);
  const notes: string[] = [];
  if (imported && open.length > 0) {
    notes.push(
      'the source ends inside a turn (its harness stopped mid-turn, or is still writing it)',
    );
  }
  if (loaded.tornTail !== undefined)
    problems.push(
      `torn final batch (${loaded.tornTail.reason}; a crash) — palimpsest repair drops it`,
    );
  if (!imported && planRepair(session.events).length > 0)
    problems.push(`a turn left open by a crash — palimpsest repair ${id} closes it`);
  digestFindings(session, problems, notes);
  const chained =
    options.integrity === true ||
    (options.integrity === 'when-chained' &&
      loaded.events.some((event) => event.type === 'log/checkpoint'));
  if (!chained) return { id, events: session.seq, ok: problems.length === 0, problems, notes };
  const report = verifyIntegrity(loaded.header, loaded.events, { publicKeys: keys, anchors });
  integrityFindings(report, problems, notes);
  return { id, events: session.seq, ok: problems.length === 0, problems, notes, integrity: report };
}

/** Recorded request digests the log no longer rebuilds, save those a redaction explains. */
function digestFindings(session: Session, problems: string[], notes: string[]): void {
  const explained = new Map<number, number>();
  for (const mismatch of checkRequestDigests(session)) {
    if (mismatch.redactedBy !== undefined) {
      explained.set(mismatch.redactedBy, (explained.get(mismatch.redactedBy) ?? 0) + 1);
      continue;
    }
    problems.push(
      `#${mismatch.seq} REQUEST_DIGEST: the writer recorded ${mismatch.recorded} for this answer's request; the request rebuilt from the log has ${mismatch.rebuilt}`,
    );
  }
  for (const [redaction, count] of explained) {
    notes.push(
      `${count} answer(s) were built from content the redaction at #${redaction} erased: their requests are rebuilt with placeholders, so their recorded digests no longer match`,
    );
  }
}

/**
 * The session opened, or, when it is encrypted and its key cannot be had (shredded, not in the
 * vault, another master key's), its sealed form and why.
 */
async function loadOrKeyless(
  store: SessionStore,
  id: string,
): Promise<LoadedSession | { sealed: LoadedSession; why: string }> {
  try {
    return await store.load(id);
  } catch (error) {
    const unavailable =
      ShreddedKeyError.isInstance(error) ||
      (EncryptionError.isInstance(error) && error.code !== 'SEAL_BROKEN');
    if (!unavailable || !(store instanceof EncryptedStore)) throw error;
    const why = ShreddedKeyError.isInstance(error)
      ? 'its key was shredded'
      : `its key is unavailable (${error.code})`;
    return { sealed: await store.inner.load(id), why };
  }
}

/**
 * An encrypted session read without its keys: its envelopes hold the hash chain (each sealed
 * payload carries its digest), so `--integrity` checks it; its content cannot be checked.
 */
function keyless(
  loaded: LoadedSession,
  why: string,
  integrity: boolean,
  keys: readonly string[],
  anchors: readonly Anchor[],
): SessionVerdict {
  const id = loaded.header.id;
  const events = loaded.events.length;
  if (!integrity) {
    return {
      id,
      events,
      ok: false,
      problems: [
        `KEY_REQUIRED: the session is encrypted and ${why}: its content cannot be checked; its hash chain can (--integrity)`,
      ],
      code: 'KEY_REQUIRED',
      notes: [],
    };
  }
  const report = verifyIntegrity(loaded.header, loaded.events, { publicKeys: keys, anchors });
  const problems: string[] = [];
  const notes = [`encrypted, and ${why}: the hash chain was checked, the content was not`];
  integrityFindings(report, problems, notes);
  return { id, events, ok: problems.length === 0, problems, notes, integrity: report };
}

/** The problems and notes an integrity report adds. */
function integrityFindings(report: IntegrityReport, problems: string[], notes: string[]): void {
  const broken = report.broken;
  if (broken !== undefined) {
    problems.unshift(`#${broken.seq} INTEGRITY_${broken.kind.toUpperCase()}: ${broken.message}`);
  }
  if (report.completeness.status === 'truncated') {
    problems.push(`COMPLETENESS: ${report.completeness.message}`);
  }
  if (report.pendingRedactions.length > 0) {
    problems.push(
      `REDACTION_PENDING: seqs ${report.pendingRedactions.join(', ')} still hold the content a redaction erased`,
    );
  }
  if (report.checkpoints === 0 && report.events > 0) {
    notes.push(
      'no checkpoint: the chain protects nothing yet (palimpsest checkpoint ID appends one)',
    );
  } else if (report.completeness.status === 'unknown') {
    notes.push(report.completeness.message);
  }
  if (report.signatures.unknownKey > 0) {
    notes.push(
      `${report.signatures.unknownKey} signed checkpoint(s) not checked: their key was not given (--key)`,
    );
  }
}
