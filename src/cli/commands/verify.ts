/**
 * `palimpsest verify`: loads, folds and lints sessions, checks their recorded request digests,
 * and with `--integrity` their hash chains (checkpoints, signatures, anchors). Read-only.
 */
import { checkRequestDigests } from '../../agent/index.js';
import { checkInvariants, planRepair, Session } from '../../core/index.js';
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
} from '../../store/index.js';
import { everySession } from '../../store/session/list-all.js';
import { type CliContext, readGivenFile } from '../context.js';
import { CliError, describeFailure, EXIT } from '../failure.js';
import { safeLine, table } from '../terminal.js';
import { readAnchors } from './anchors.js';
import { damagedId } from './inspect.js';

/**
 * How many problems of one session `verify` prints after the table's first: a damaged session
 * can have one per event, and a terminal of 200,000 lines helps nobody. `--json` has them all.
 */
const PROBLEMS_SHOWN = 20;

/** The options of `verify`. */
export interface VerifyOptions {
  readonly all?: boolean;
  /** Check each session's hash chain too. */
  readonly integrity?: boolean;
  /** PEM files of Ed25519 keys whose checkpoint signatures are checked (with `--integrity`). */
  readonly key?: readonly string[];
  /** A file of anchors (JSON lines) or a store URL holding them (with `--integrity`). */
  readonly anchors?: string;
}

/** What `verify` found of one session. */
interface VerifyResult {
  id: string;
  events: number;
  ok: boolean;
  problems: string[];
  code?: string;
  notes: string[];
  integrity?: IntegrityReport;
}

/** `palimpsest verify [ID…] [--all] [--integrity [--key PEM]… [--anchors FILE|URL]]` */
export async function verifyCommand(
  context: CliContext,
  ids: readonly string[],
  options: VerifyOptions,
): Promise<number> {
  if (ids.length === 0 && options.all !== true) {
    throw new CliError('name sessions to verify, or pass --all', EXIT.usage);
  }
  if (options.integrity !== true && (options.key !== undefined || options.anchors !== undefined)) {
    throw new CliError('--key and --anchors check a hash chain: add --integrity', EXIT.usage);
  }
  const keys = (options.key ?? []).map((file) => readGivenFile(file, 'the key file'));
  const anchors = options.anchors === undefined ? [] : await readAnchors(context, options.anchors);
  const results = await context.withReader(async (store) => {
    const listed = options.all === true ? await everySession(store) : undefined;
    const targets =
      listed === undefined ? ids : listed.sessions.map((summary) => summary.header.id);
    const progress = context.terminal.progress('verifying', targets.length);
    const out: VerifyResult[] = [];
    for (const id of targets) {
      out.push(await verifyOne(store, id, options.integrity === true, keys, anchors));
      progress.tick();
    }
    progress.done();
    // Found by the listing but unreadable: a failure of verify --all, never a silent omission.
    for (const entry of listed?.damaged ?? []) {
      out.push({
        id: damagedId(entry),
        events: 0,
        ok: false,
        problems: [describeFailure(entry.error).message],
        code: entry.error.code,
        notes: [],
      });
    }
    return out;
  });
  if (context.json) context.terminal.json(results);
  else printResults(context, results, options.integrity === true);
  return results.every((result) => result.ok) ? EXIT.ok : EXIT.invalid;
}

async function verifyOne(
  store: SessionStore,
  id: string,
  integrity: boolean,
  keys: readonly string[],
  anchors: readonly Anchor[],
): Promise<VerifyResult> {
  try {
    const loaded = await loadOrKeyless(store, id);
    if (!(loaded instanceof LoadedSession)) {
      return keyless(loaded.sealed, loaded.why, integrity, keys, anchors);
    }
    if (holdsSealedPayloads(loaded)) {
      return keyless(
        loaded,
        'no key was given (--key-vault with the master key)',
        integrity,
        keys,
        anchors,
      );
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
    if (!integrity) return { id, events: session.seq, ok: problems.length === 0, problems, notes };
    const report = verifyIntegrity(loaded.header, loaded.events, {
      publicKeys: keys,
      anchors: anchors.filter((anchor) => anchor.session === id),
    });
    integrityFindings(report, problems, notes);
    return {
      id,
      events: session.seq,
      ok: problems.length === 0,
      problems,
      notes,
      integrity: report,
    };
  } catch (error) {
    const failure = describeFailure(error);
    const code = (error as { code?: unknown }).code;
    return {
      id,
      events: 0,
      ok: false,
      problems: [failure.message],
      ...(typeof code === 'string' ? { code } : {}),
      notes: [],
    };
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
): VerifyResult {
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
  const report = verifyIntegrity(loaded.header, loaded.events, {
    publicKeys: keys,
    anchors: anchors.filter((anchor) => anchor.session === id),
  });
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

function printResults(context: CliContext, results: readonly VerifyResult[], integrity: boolean) {
  const integrityColumns = (result: VerifyResult): string[] => {
    const report = result.integrity;
    if (!integrity) return [];
    if (report === undefined) return ['', ''];
    return [
      report.broken === undefined
        ? `ok (${report.covered}/${report.events} covered)`
        : `broken at #${report.broken.seq}`,
      report.completeness.status,
    ];
  };
  context.terminal.line(
    table(
      [
        'ID',
        'EVENTS',
        'RESULT',
        ...(integrity ? ['INTEGRITY', 'COMPLETENESS'] : []),
        'FIRST PROBLEM',
      ],
      results.map((result) => [
        result.id,
        String(result.events),
        result.ok
          ? context.terminal.style('green', 'ok')
          : context.terminal.style('red', `${result.problems.length} problem(s)`),
        ...integrityColumns(result),
        result.problems[0] ?? (result.notes[0] === undefined ? '' : `note: ${result.notes[0]}`),
      ]),
    ),
  );
  for (const result of results) {
    const shown = result.problems.slice(1, 1 + PROBLEMS_SHOWN);
    for (const problem of shown) context.terminal.line(safeLine(`${result.id}: ${problem}`, 160));
    const more = result.problems.length - 1 - shown.length;
    if (more > 0) {
      context.terminal.line(
        safeLine(`${result.id}: … and ${more} more problem(s) (--json lists every one)`, 160),
      );
    }
    const notes = result.problems.length === 0 ? result.notes.slice(1) : result.notes;
    for (const note of notes) context.terminal.line(safeLine(`${result.id}: note: ${note}`, 200));
  }
}
