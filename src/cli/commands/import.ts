/**
 * `palimpsest import --from claude-code|codex|pi FILE_OR_DIR [--watch]`: reads the sessions another
 * harness wrote into the store. Idempotent: a second run adds nothing, and after the source grew
 * it appends only the new part. `--watch` keeps importing as the source grows, until Ctrl-C.
 */
import {
  type Harness,
  type ImportReport,
  importSessions,
  isHarness,
  watchImports,
} from '../../import/index.js';
import type { CliContext } from '../context.js';
import { CliError, describeFailure, EXIT } from '../failure.js';
import type { Progress } from '../terminal.js';
import { safeLine, table } from '../terminal.js';

export interface ImportCommandOptions {
  readonly from?: string;
  readonly watch?: boolean;
}

export async function importCommand(
  context: CliContext,
  path: string,
  options: ImportCommandOptions,
): Promise<number> {
  const from = options.from;
  if (from === undefined || !isHarness(from)) {
    throw new CliError(
      `import needs --from claude-code, codex or pi, found ${from === undefined ? 'none' : `'${from}'`}`,
      EXIT.usage,
    );
  }
  return context.withStore(
    (store) =>
      options.watch === true ? watch(context, store, from, path) : once(context, store, from, path),
    context.storeUrl,
    { create: true },
  );
}

async function once(
  context: CliContext,
  store: Parameters<typeof importSessions>[0]['store'],
  from: Harness,
  path: string,
): Promise<number> {
  let progress: Progress | undefined;
  const report = await importSessions({
    from,
    path,
    store,
    onFile: (done, total) => {
      progress ??= context.terminal.progress('importing', total);
      progress.tick();
      if (done === total) progress.done();
    },
  });
  print(context, report);
  if (report.failed.length > 0) return failedExit(report);
  if (report.sessions.length === 0) {
    context.terminal.note(
      `nothing imported: ${safeLine(path, 200)} holds no ${from} conversation (${report.files} file(s) read)`,
    );
    return EXIT.unchanged;
  }
  return EXIT.ok;
}

async function watch(
  context: CliContext,
  store: Parameters<typeof importSessions>[0]['store'],
  from: Harness,
  path: string,
): Promise<number> {
  const controller = new AbortController();
  const stop = (): void => controller.abort();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  let first = true;
  let last: ImportReport | undefined;
  try {
    await watchImports({
      from,
      path,
      store,
      signal: controller.signal,
      onImport: (report) => {
        last = report;
        if (first || context.json) print(context, report);
        else {
          for (const session of report.sessions) {
            if (session.added > 0) {
              context.terminal.line(
                `${safeLine(session.id, 120)}: ${session.result}, +${session.added} events (${session.events} in all)`,
              );
            }
          }
          printFailed(context, report);
        }
        if (first) context.terminal.note(`watching ${safeLine(path, 200)} (Ctrl-C stops)`);
        first = false;
      },
      onError: (error) => context.terminal.note(`palimpsest: ${describeFailure(error).message}`),
    });
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
  }
  // The watch ends on Ctrl-C: a file still failing in its last round is not a success.
  return last === undefined || last.failed.length === 0 ? EXIT.ok : failedExit(last);
}

/** Damaged source files are exit 4, as a damaged log is; other refused files exit 1. */
function failedExit(report: ImportReport): number {
  const damaged = report.failed.every(
    (failure) => failure.code === 'MALFORMED_LINE' || failure.code === 'TRUNCATED_LINE',
  );
  return damaged ? EXIT.corrupt : EXIT.failure;
}

function printFailed(context: CliContext, report: ImportReport): void {
  if (report.failed.length === 0) return;
  context.terminal.line();
  context.terminal.line(
    table(
      ['NOT IMPORTED', 'CODE', 'WHY'],
      report.failed.map((failure) => [failure.file, failure.code, failure.message]),
    ),
  );
}

function print(context: CliContext, report: ImportReport): void {
  if (context.json) {
    context.terminal.json(report);
    return;
  }
  context.terminal.line(
    table(
      ['ID', 'RESULT', 'EVENTS', 'ADDED', 'MESSAGES', 'PARENT', 'FILE'],
      report.sessions.map((session) => [
        session.id,
        session.result,
        String(session.events),
        String(session.added),
        String(session.messages),
        session.parentSession ?? '-',
        session.file,
      ]),
    ),
  );
  printFailed(context, report);
  const unlinked = report.sessions.filter((session) => session.unlinkedFork !== undefined);
  if (unlinked.length > 0) {
    // A file its harness wrote as a fork, imported standalone: which parent, and why not linked.
    context.terminal.line();
    context.terminal.line(
      table(
        ['NOT LINKED', 'PARENT', 'REASON'],
        unlinked.map((session) => [
          session.id,
          session.unlinkedFork?.parent ?? '-',
          `${session.unlinkedFork?.reason ?? ''} (${session.unlinkedFork?.detail ?? ''})`,
        ]),
      ),
    );
  }
  const skipped = Object.entries(report.skipped);
  if (skipped.length > 0) {
    context.terminal.line();
    context.terminal.line(
      table(
        ['SKIPPED', 'REASON'],
        skipped.map(([reason, count]) => [String(count), reason]),
      ),
    );
  }
}
