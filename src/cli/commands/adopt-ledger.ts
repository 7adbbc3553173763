/**
 * `palimpsest repair --adopt-ledger`: pairs a SQLite database with a ledger that records it as
 * it is now, after a `LedgerError` (no ledger beside it, another database's, or an older one).
 * It says what it found and what it cannot vouch for: the events of the sessions it vouches for
 * anew, a loss among which can no longer be detected.
 */
import { existsSync } from 'node:fs';
import { parseStoreUrl } from '../../store/index.js';
import type { LedgerAdoption } from '../../store/sqlite/index.js';
import type { CliContext } from '../context.js';
import { CliError, EXIT } from '../failure.js';
import { safeLine } from '../terminal.js';

/** How many newly vouched sessions the text output names one per line. */
const LISTED = 20;

/** Adopts the database of the context's `sqlite:` store; prints and returns the report. */
export async function adoptLedgerCommand(context: CliContext): Promise<LedgerAdoption> {
  const { scheme, path } = parseStoreUrl(context.storeUrl);
  if (scheme !== 'sqlite') {
    throw new CliError(
      `--adopt-ledger: only a sqlite: store keeps a ledger beside its database; ${context.printableStoreUrl} is a ${scheme} store`,
      EXIT.usage,
    );
  }
  if (!existsSync(path)) {
    throw new CliError(
      `there is no store at ${context.printableStoreUrl} (nothing was created)`,
      EXIT.notFound,
    );
  }
  const { adoptSqliteLedger } = await import('../../store/sqlite/index.js');
  const report = await adoptSqliteLedger(path);
  if (!context.json) print(context, report);
  return report;
}

function print(context: CliContext, report: LedgerAdoption): void {
  const line = (text: string): void => context.terminal.line(safeLine(text, 200));
  const found =
    report.found === 'missing'
      ? `there was no ledger beside it; a new one is at ${report.ledger}`
      : report.found === 'foreign'
        ? `the ledger beside it was another database's: moved, untouched, to ${report.setAside ?? '?'}; a new one is at ${report.ledger}`
        : `kept its own ledger, ${report.ledger}`;
  line(`adopted ${report.file} (${report.sessions} session(s)): ${found}`);
  const vouched = report.newlyVouched;
  if (vouched.length === 0) {
    line('the ledger already recorded every session as it is: it vouches for nothing new');
  } else {
    line(
      `now vouched for as they are, ${vouched.length} session(s) the ledger had not (all) recorded: a loss among their events before now can no longer be detected`,
    );
    for (const session of vouched.slice(0, LISTED)) {
      const had = session.recorded < 0 ? 'unknown to the ledger' : `${session.recorded} recorded`;
      line(`  ${session.id}: ${session.events} events (${had})`);
    }
    if (vouched.length > LISTED)
      line(`  … and ${vouched.length - LISTED} more (--json lists every one)`);
  }
  if (report.stillDamaged.length > 0) {
    line(
      `still reported as damaged, ${report.stillDamaged.length} session(s) the ledger records as longer, named otherwise or lost (palimpsest verify --all names them): ${report.stillDamaged.slice(0, LISTED).join(', ')}`,
    );
  }
}
