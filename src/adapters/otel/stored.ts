/**
 * Exporting sessions kept in a store, after the fact: each loaded as stored (a turn a crash left
 * open stays open), priced as `sessionCost` prices each call, and a subagent's parent found so
 * its turns hang under the call that ran them.
 */
import { callCosts, type PriceTable } from '../../model/index.js';
import { inspectSession, type SessionStore } from '../../store/index.js';
import { costBySeq } from './cost.js';
import {
  exportSession,
  locateSubagentCall,
  type OtelExportOptions,
  type OtelExportReport,
} from './export.js';
import type { SpanAddress } from './ids.js';
import { subagentOf } from './span-model.js';

/** Options of {@link exportStoredSessions}. */
export interface StoredExportOptions extends OtelExportOptions {
  /**
   * The table calls are priced with when the session recorded no rates (see `sessionCost`), or
   * `false` to write no cost. Ignored when `cost` is given. Default: the shipped table.
   */
  readonly prices?: PriceTable | false;
}

/** Subagents nest; past this depth a chain of parents is not followed (a cycle, a damaged store). */
const MAX_PARENT_DEPTH = 16;

/**
 * Exports stored sessions one after another (see {@link exportSession}), finding each
 * subagent's parent call in the same store. Rejects with the first failure; the report of each
 * session exported before it is lost with it, so callers that need them export one id at a time.
 *
 * @example
 * ```ts
 * import { Session } from 'palimpsest';
 * import { MemoryStore } from 'palimpsest/store';
 * import { exportStoredSessions } from 'palimpsest/otel';
 * import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
 *
 * const store = new MemoryStore();
 * const session = Session.create({ id: 'stored' });
 * session.append('turn/start', { turn: 1 });
 * session.append('turn/end', { turn: 1, reason: { kind: 'completed' } });
 * await store.create(session.header);
 * await store.append('stored', session.events, { expectedSeq: 0 });
 * const [report] = await exportStoredSessions(store, ['stored'], { exporter: new InMemorySpanExporter() });
 * console.log(report?.spans); // 1
 * ```
 */
export async function exportStoredSessions(
  store: SessionStore,
  ids: readonly string[],
  options: StoredExportOptions,
): Promise<OtelExportReport[]> {
  const reports: OtelExportReport[] = [];
  for (const id of ids) {
    // As stored: a turn a crash left open stays open (and unexported), not closed in memory.
    const loaded = await inspectSession(store, id, { repair: false });
    const prices = options.prices;
    const cost =
      options.cost ??
      (prices === false
        ? undefined
        : costBySeq(callCosts(loaded, prices === undefined ? {} : { prices })));
    const parentCall =
      options.parentCall ??
      (await parentCallOf(
        store,
        loaded.header.metadata?.subagentOf === undefined ? undefined : loaded.header,
        0,
      ));
    reports.push(
      await exportSession(loaded, {
        ...options,
        ...(parentCall === undefined ? {} : { parentCall }),
        ...(cost === undefined ? {} : { cost }),
      }),
    );
  }
  return reports;
}

async function parentCallOf(
  store: SessionStore,
  header: Parameters<typeof subagentOf>[0] | undefined,
  depth: number,
): Promise<SpanAddress | undefined> {
  if (header === undefined || depth >= MAX_PARENT_DEPTH) return undefined;
  const link = subagentOf(header);
  if (link?.toolCallId === undefined) return undefined;
  let parent: Awaited<ReturnType<SessionStore['load']>>;
  try {
    parent = await store.load(link.session, { elideFinishedChunks: true });
  } catch {
    // A parent that is gone or unreadable leaves the child a trace of its own, still named.
    return undefined;
  }
  const grandparent = await parentCallOf(store, parent.header, depth + 1);
  return locateSubagentCall(parent, link.toolCallId, grandparent);
}
