/**
 * `palimpsest verify`: loads, folds and lints sessions, checks their recorded request digests,
 * and with `--integrity` their hash chains (checkpoints, signatures, anchors). Read-only.
 */
import { type SessionVerdict, verifyStoredSession } from '../../agent/session-verify.js';
import type { Anchor, SessionStore } from '../../store/index.js';
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
type VerifyResult = SessionVerdict;

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
    return await verifyStoredSession(store, id, { integrity, keys, anchors });
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
