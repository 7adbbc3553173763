/**
 * Commands that write: repair, fork, compact, prune, unlock. Each takes the session's writer lock
 * (a live writer elsewhere makes them fail with exit code 5) and leaves the log valid; unlock
 * removes a lock whose holder is gone.
 */
import { type CompactionResult, compact } from '../../compaction/compact.js';
import { pruneToolResults } from '../../compaction/prune.js';
import { forkSession } from '../../core/index.js';
import { inspectSession, openSession, salvageSession } from '../../store/index.js';
import { type CliContext, parseCount } from '../context.js';
import { CliError, EXIT } from '../failure.js';
import { announce, resolveModel } from '../model.js';
import { safeLine } from '../terminal.js';
import { adoptLedgerCommand } from './adopt-ledger.js';

/**
 * `palimpsest repair ID`, `palimpsest repair --adopt-ledger [ID]`: the adoption first (a store
 * whose ledger does not pair up opens for nothing else), then the session's repair.
 */
export async function repairCommand(
  context: CliContext,
  id: string | undefined,
  options: { adoptLedger?: boolean },
): Promise<void> {
  if (options.adoptLedger !== true && id === undefined) {
    throw new CliError('name the session to repair, or pass --adopt-ledger', EXIT.usage);
  }
  const adoption = options.adoptLedger === true ? await adoptLedgerCommand(context) : undefined;
  if (id === undefined) {
    if (context.json) context.terminal.json({ adoption });
    return;
  }
  const report = await context.withStore(async (store) => {
    const session = await openSession(store, id, { create: false });
    const { openReport } = session;
    const events = session.seq;
    await session.close();
    return { ...openReport, events };
  });
  if (context.json) {
    return context.terminal.json({
      id,
      ...report,
      ...(adoption === undefined ? {} : { adoption }),
    });
  }
  const done: string[] = [];
  if (report.tornBytesDropped > 0)
    done.push(`dropped a torn final batch of ${report.tornBytesDropped} bytes`);
  if (report.repairedEvents > 0)
    done.push(`appended ${report.repairedEvents} closing event(s) for the interrupted turn`);
  context.terminal.line(
    done.length === 0
      ? `session '${id}' needed no repair (${report.events} events)`
      : `session '${id}': ${done.join('; ')} (${report.events} events now)`,
  );
}

/**
 * `palimpsest unlock ID [--force]`: removes the session's writer lock when its holder is gone
 * (its process no longer runs on this host, or it runs elsewhere and stopped refreshing the
 * lock). A holder alive on this host or with a fresh heartbeat is refused (exit code 5) unless
 * `--force`.
 */
export async function unlockCommand(
  context: CliContext,
  id: string,
  options: { force?: boolean },
): Promise<void> {
  const report = await context.withStore((store) =>
    store.unlock(id, { force: options.force === true }),
  );
  if (context.json) return context.terminal.json({ id, ...report });
  if (!report.removed) {
    context.terminal.line(`session '${id}' is not locked; nothing was changed`);
    return;
  }
  const { owner } = report;
  const refreshed = new Date(report.refreshedAt).toISOString();
  context.terminal.line(
    `removed the lock of session '${id}' held by pid ${owner.pid} on ${owner.host} since ${new Date(owner.since).toISOString()}, last refreshed ${refreshed}${
      report.wasLive ? ' (forced: that holder still counted as live)' : ''
    }`,
  );
}

/** `palimpsest fork ID --at SEQ [--id NEW]` */
export async function forkCommand(
  context: CliContext,
  id: string,
  options: { at?: string; id?: string },
): Promise<void> {
  const at = parseCount('--at', options.at);
  const child = await context.withStore(async (store) => {
    const parent = await inspectSession(store, id);
    const forked = forkSession(parent, at, options.id === undefined ? {} : { id: options.id });
    await store.create(forked.header);
    await store.append(forked.id, forked.events, { expectedSeq: 0 });
    return forked;
  });
  if (context.json) return context.terminal.json({ id: child.id, parent: id, events: child.seq });
  context.terminal.line(
    `forked '${id}' at #${child.seq - 1} into '${child.id}' (${child.seq} events)`,
  );
}

/** `palimpsest salvage ID [--id NEW]` */
export async function salvageCommand(
  context: CliContext,
  id: string,
  options: { id?: string },
): Promise<number> {
  const result = await context.withStore((store) =>
    salvageSession(store, id, options.id === undefined ? {} : { id: options.id }),
  );
  if (result.kind === 'intact') {
    if (context.json) context.terminal.json({ id, kind: result.kind, events: result.events });
    else
      context.terminal.note(
        `session '${safeLine(id, 80)}' is not damaged (${result.events} events): nothing to salvage, nothing was created (palimpsest fork copies a session)`,
      );
    return EXIT.unchanged;
  }
  if (result.kind === 'nothing-intact') {
    throw new CliError(
      `nothing of session '${safeLine(id, 80)}' is intact: ${safeLine(result.damage.message, 300)}; no event before the damage can be verified, so nothing was created (restore the session from a backup)`,
      EXIT.corrupt,
    );
  }
  const { damage } = result;
  if (context.json) {
    context.terminal.json({
      id: result.id,
      parent: id,
      kind: result.kind,
      events: result.events,
      repairedEvents: result.repairedEvents,
      damage: { code: damage.code, message: damage.message },
    });
    return EXIT.ok;
  }
  const closing =
    result.repairedEvents === 0
      ? ''
      : `, and closed its interrupted turn with ${result.repairedEvents} event(s)`;
  context.terminal.line(
    `salvaged ${result.events} acknowledged event(s) of '${safeLine(id, 80)}' into '${safeLine(result.id, 80)}'${closing}; '${safeLine(id, 80)}' is unchanged (${safeLine(damage.reason, 200)})`,
  );
  return EXIT.ok;
}

/** `palimpsest compact ID` */
export async function compactCommand(
  context: CliContext,
  id: string,
  options: { keepRecentTokens?: string; model?: string },
): Promise<number> {
  const keepRecentTokens = parseCount('--keep-recent-tokens', options.keepRecentTokens);
  const script = [{ text: scriptedSummary }];
  const picked = await resolveModel(options.model, script, {
    offline: 'explicit',
    purpose: 'compact',
  });
  const model = announce(picked, (text) => context.terminal.note(text));
  const result = await context.withStore(async (store) => {
    const session = await openSession(store, id, { create: false });
    try {
      return await compact(session, {
        model,
        ...(keepRecentTokens === undefined ? {} : { keepRecentTokens }),
      });
    } finally {
      await session.close();
    }
  });
  if (context.json) context.terminal.json(result);
  else if (result.replaced) {
    context.terminal.line(
      `replaced ${result.shadowedSeqs.length} surface entries with summary #${result.summarySeq}: ~${result.tokensBefore} → ~${result.tokensAfter} tokens`,
    );
  } else {
    const why = result.error === undefined ? '' : `: ${result.error.message}`;
    context.terminal.line(`nothing replaced (${result.skipped}${why})`);
  }
  return compactExit(result.skipped);
}

/**
 * 0 when the history was replaced or there was nothing left to compact; otherwise the command
 * did not do what it was asked, and says why by its code.
 */
function compactExit(skipped: CompactionResult['skipped']): number {
  switch (skipped) {
    case undefined:
    case 'nothing-to-compact':
      return EXIT.ok;
    case 'failed':
      return EXIT.model;
    case 'aborted':
      return EXIT.interrupted;
    case 'not-shorter':
    case 'surface-changed':
      return EXIT.unchanged;
  }
}

const scriptedSummary =
  'Placeholder summary written offline by the scripted model (--model scripted): the earlier turns are kept in the log; compact with a real model for a real summary.';

/** `palimpsest prune ID` */
export async function pruneCommand(
  context: CliContext,
  id: string,
  options: { keepRecentTurns?: string; minChars?: string },
): Promise<void> {
  const keepRecentTurns = parseCount('--keep-recent-turns', options.keepRecentTurns);
  const minChars = parseCount('--min-chars', options.minChars);
  const result = await context.withStore(async (store) => {
    const session = await openSession(store, id, { create: false });
    try {
      return pruneToolResults(session, {
        ...(keepRecentTurns === undefined ? {} : { keepRecentTurns }),
        ...(minChars === undefined ? {} : { minChars }),
      });
    } finally {
      await session.close();
    }
  });
  if (context.json) return context.terminal.json(result);
  context.terminal.line(
    result.prunedSeqs.length === 0
      ? 'no tool result to prune'
      : `pruned ${result.prunedSeqs.length} tool result(s): ${result.charsBefore} → ${result.charsAfter} characters, ~${result.tokensBefore} → ~${result.tokensAfter} tokens`,
  );
}
