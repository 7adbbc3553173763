/**
 * `palimpsest gc`, `archive` and `restore`: retention over a store. `gc` plans by age, count and
 * size and only shows what would go until `--delete` or `--archive DIR` applies it; `archive`
 * and `restore` move named sessions to and from a `jsonl:` archive directory, whole or not at
 * all (`moveSession`).
 */
import { existsSync } from 'node:fs';
import { InvalidArgumentError } from '../../core/index.js';
import {
  applyRetention,
  type DamagedSession,
  type MoveReport,
  moveSession,
  openStore,
  parseByteSize,
  parseDuration,
  planRetention,
  type RetentionAction,
  type RetentionOutcome,
  type RetentionPlan,
  type RetentionPolicy,
  retentionCandidates,
  type SessionStore,
} from '../../store/index.js';
import { type CliContext, parseCount } from '../context.js';
import { CliError, describeFailure, EXIT } from '../failure.js';
import { timeText } from '../render.js';
import { safeLine } from '../terminal.js';

/** The options of `palimpsest gc`. */
export interface GcOptions {
  olderThan?: string;
  keep?: string;
  maxSize?: string;
  keepForks?: boolean;
  archive?: string;
  delete?: boolean;
}

/** `palimpsest gc [--older-than D] [--keep N] [--max-size S] [--keep-forks] [--archive DIR | --delete]` */
export async function gcCommand(context: CliContext, options: GcOptions): Promise<number> {
  const policy = policyOf(options);
  if (options.archive !== undefined && options.delete === true) {
    throw new InvalidArgumentError(
      `expected at most one of --archive DIR and --delete, found both (--archive ${options.archive} --delete)`,
    );
  }
  const apply = options.archive !== undefined || options.delete === true;
  const plan = async (store: SessionStore) => {
    const measure = policy.maxSizeBytes !== undefined;
    const { candidates, damaged } = await retentionCandidates(store, { measure });
    return { plan: planRetention(candidates, policy, Date.now()), damaged };
  };
  if (!apply) {
    const planned = await context.withReader(plan);
    report(context, planned.plan, planned.damaged, undefined, options);
    return EXIT.ok;
  }
  const { outcome, planned } = await context.withStore(async (store) => {
    const planned = await plan(store);
    const apply = (action: RetentionAction) => applyRetention(store, planned.plan, action);
    // The archive directory is made only once there is something to put in it.
    const outcome =
      options.archive === undefined || planned.plan.remove.length === 0
        ? await apply({ kind: 'delete' })
        : await withArchive(options.archive, (archive) => {
            checkApart(archive, store);
            return apply({ kind: 'archive', archive });
          });
    return { planned, outcome };
  });
  report(context, planned.plan, planned.damaged, outcome, options);
  if (outcome.failed.length > 0) return EXIT.failure;
  if (outcome.skipped.some((skip) => skip.code === 'LOCKED')) return EXIT.locked;
  return outcome.removed.length === 0 ? EXIT.unchanged : EXIT.ok;
}

function policyOf(options: GcOptions): RetentionPolicy {
  if (
    options.olderThan === undefined &&
    options.keep === undefined &&
    options.maxSize === undefined
  ) {
    throw new InvalidArgumentError(
      'expected at least one of --older-than DURATION, --keep N or --max-size SIZE, found none',
    );
  }
  const keep = parseCount('--keep', options.keep);
  return {
    ...(options.olderThan === undefined ? {} : { olderThanMs: parseDuration(options.olderThan) }),
    ...(keep === undefined ? {} : { keep }),
    ...(options.maxSize === undefined ? {} : { maxSizeBytes: parseByteSize(options.maxSize) }),
    keepForks: options.keepForks === true,
  };
}

function report(
  context: CliContext,
  plan: RetentionPlan,
  damaged: readonly DamagedSession[],
  outcome: RetentionOutcome | undefined,
  options: GcOptions,
): void {
  const verb = options.archive === undefined ? 'delete' : 'archive';
  if (context.json) {
    context.terminal.json({
      dryRun: outcome === undefined,
      action: verb,
      ...plan,
      damaged: damaged.map(({ id, error }) => ({ id, code: error.code })),
      ...(outcome === undefined ? {} : outcome),
    });
    return;
  }
  const line = (text: string): void => context.terminal.line(text);
  const total = plan.kept + plan.remove.length;
  const head = outcome === undefined ? `would ${verb}` : `${verb}d`;
  const gone = outcome?.removed ?? plan.remove;
  const bytes = gone.reduce((sum, session) => sum + session.sizeBytes, 0);
  line(`${head} ${gone.length} of ${total} session(s), ${bytes} of ${plan.bytesBefore} bytes`);
  const failedIds = new Set(
    [...(outcome?.skipped ?? []), ...(outcome?.failed ?? [])].map((s) => s.id),
  );
  for (const session of plan.remove) {
    if (failedIds.has(session.id)) continue;
    line(
      `  ${safeLine(session.id, 80)}  last active ${timeText(session.lastActivity)}  ${session.sizeBytes} bytes  (${session.reasons.join(', ')})`,
    );
  }
  for (const held of plan.heldForForks) {
    line(
      `kept for its forks: ${safeLine(held.id, 80)} (${held.reasons.join(', ')}; forks ${held.forks.map((id) => safeLine(id, 80)).join(', ')})`,
    );
  }
  if (plan.overBudget) line(`still over --max-size: ${plan.bytesAfter} bytes stay`);
  for (const skip of [...(outcome?.skipped ?? []), ...(outcome?.failed ?? [])]) {
    line(`left in place: ${safeLine(skip.id, 80)}: ${safeLine(skip.message, 300)} [${skip.code}]`);
  }
  if (damaged.length > 0) {
    line(
      `not considered, ${damaged.length} damaged session(s) (palimpsest verify --all names them): ${damaged.map((d) => safeLine(d.id ?? '?', 80)).join(', ')}`,
    );
  }
  if (outcome === undefined && plan.remove.length > 0) {
    line('dry run: nothing was changed; add --delete, or --archive DIR, to apply this plan');
  }
  if (outcome !== undefined && plan.remove.length === 0) line('nothing to remove: nothing changed');
}

/** Runs `work` on the `jsonl:` store of an archive directory (created when missing), then closes it. */
async function withArchive<T>(
  directory: string,
  work: (archive: SessionStore) => Promise<T>,
): Promise<T> {
  const archive = await openStore(`jsonl:${directory}`);
  try {
    return await work(archive);
  } finally {
    await archive.close();
  }
}

/** `palimpsest archive ID… --to DIR` */
export function archiveCommand(
  context: CliContext,
  ids: readonly string[],
  options: { to: string },
): Promise<number> {
  return moveCommand(context, ids, 'archived', (store, move) =>
    withArchive(options.to, (archive) => move(store, archive)),
  );
}

/** `palimpsest restore ID… --from DIR` */
export function restoreCommand(
  context: CliContext,
  ids: readonly string[],
  options: { from: string },
): Promise<number> {
  if (!existsSync(options.from)) {
    throw new CliError(
      `there is no archive at ${options.from} (nothing was restored; palimpsest archive ID --to DIR or gc --archive DIR writes one)`,
      EXIT.notFound,
    );
  }
  return moveCommand(context, ids, 'restored', (store, move) =>
    withArchive(options.from, (archive) => move(archive, store)),
  );
}

/** Refuses an archive directory that is the store itself (two handles on one directory). */
function checkApart(archive: SessionStore, store: SessionStore): void {
  if (archive.location === store.location) {
    throw new InvalidArgumentError(
      `expected an archive directory other than the store, found ${archive.location} as both`,
    );
  }
}

type MoveWork = (from: SessionStore, to: SessionStore) => Promise<number>;

/**
 * Moves each session, the next one also when one fails; prints what moved and what did not.
 * Exits 0 only when every one moved, else with the exit code of the first failure.
 */
async function moveCommand(
  context: CliContext,
  ids: readonly string[],
  verb: string,
  open: (store: SessionStore, work: MoveWork) => Promise<number>,
): Promise<number> {
  const moved: MoveReport[] = [];
  const failed: Array<{ id: string; code: number; message: string }> = [];
  return context.withStore((store) =>
    open(store, async (from, to) => {
      checkApart(from === store ? to : from, store);
      for (const id of ids) {
        try {
          moved.push(await moveSession(from, id, to));
        } catch (error) {
          failed.push({ id, ...describeFailure(error) });
        }
      }
      if (context.json) context.terminal.json({ [verb]: moved, failed });
      else {
        for (const report of moved) {
          context.terminal.line(
            `${verb} '${safeLine(report.id, 80)}' (${report.events} events) from ${from.location} to ${to.location}`,
          );
        }
        for (const failure of failed)
          context.terminal.note(`palimpsest: ${safeLine(failure.message, 2000)}`);
      }
      return failed[0]?.code ?? EXIT.ok;
    }),
  );
}
