/**
 * `palimpsest cache ID`: for each model call, the prefix its request shared with the previous
 * call's (what a provider's prompt cache could serve), beside the cached tokens the provider
 * reported, and where the prefix broke, the event that broke it.
 */
import { type CacheCall, cacheReport } from '../../agent/index.js';
import { inspectSession } from '../../store/index.js';
import type { CliContext } from '../context.js';
import { EXIT } from '../failure.js';
import { table } from '../terminal.js';

/** `palimpsest cache ID` (`--json`: the report as the library returns it). */
export async function cacheCommand(context: CliContext, id: string): Promise<number> {
  const session = await context.withReader((store) => inspectSession(store, id));
  const report = cacheReport(session);
  if (context.json) context.terminal.json({ session: id, ...report });
  if (report.calls.length === 0) {
    context.terminal.note(`session ${id} holds no model call: there is no request to compare`);
    return EXIT.unchanged;
  }
  if (context.json) return EXIT.ok;
  const out = context.terminal.out;
  const rows = report.calls.map((call) => [
    String(call.seq),
    `${call.turn}.${call.step}`,
    count(call.requestTokens),
    `${count(call.sharedTokens)} ${percent(call.sharedTokens, call.requestTokens)}`,
    call.usage?.cachedInputTokens === undefined ? '-' : count(call.usage.cachedInputTokens),
    breakText(call),
  ]);
  out.write(`${table(['SEQ', 'TURN.STEP', 'REQUEST', 'SHARED', 'CACHED', 'BREAK'], rows)}\n`);
  const reported =
    report.cachedInputTokens === undefined
      ? 'the provider reported no cached tokens'
      : `the provider reported ${count(report.cachedInputTokens)} cached of ${count(report.inputTokens ?? 0)} input tokens`;
  out.write(
    `\n${report.calls.length} call(s), ${report.breaks} break(s); ${count(report.sharedTokens)} of ${count(report.requestTokens)} request tokens ${percent(report.sharedTokens, report.requestTokens)} shared with the call before; ${reported}.\n`,
  );
  out.write(
    'REQUEST and SHARED are estimated tokens (an over-estimate); CACHED is what the provider reported.\n',
  );
  return EXIT.ok;
}

function breakText(call: CacheCall): string {
  const broke = call.break;
  if (broke === undefined) return '';
  const at = broke.seq === undefined ? '' : ` at #${broke.seq}`;
  const message = broke.messageIndex === undefined ? '' : ` (message ${broke.messageIndex})`;
  return `${broke.cause}${at}${message}: ${count(broke.lostTokens)} tokens no longer shared`;
}

function count(value: number): string {
  return value.toLocaleString('en-US');
}

function percent(part: number, whole: number): string {
  return whole === 0 ? '(0%)' : `(${Math.round((100 * part) / whole)}%)`;
}
