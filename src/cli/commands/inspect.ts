/**
 * Read-only commands: ls, show, surface, log, why (verify is in verify.ts). They load sessions without taking
 * the writer lock and repair a crashed session in memory only, so they are safe to run while an
 * agent is writing.
 */
import {
  costTree,
  DEFAULT_PRICES,
  pendingMessages,
  type SummaryCost,
  summaryCost,
} from '../../agent/index.js';
import { contextTokens } from '../../compaction/context.js';
import { KNOWN_TYPES } from '../../core/events.js';
import {
  deriveEventMessage,
  foldSurface,
  planRepair,
  Session,
  type SessionEvent,
  type SessionHeader,
  type UsageTotals,
} from '../../core/index.js';
import { eventProvenance, type ProvenanceNode } from '../../core/provenance.js';
import {
  CorruptLogError,
  type DamagedSession,
  EncryptedStore,
  EncryptionError,
  FormatVersionError,
  inspectSession,
  type SessionStats,
  type SessionStore,
  type SessionSummary,
  ShreddedKeyError,
} from '../../store/index.js';
import { everySession } from '../../store/session/list-all.js';
import { type CliContext, parseCount } from '../context.js';
import { CliError, EXIT } from '../failure.js';
import {
  durationText,
  eventLine,
  messageBlock,
  seqList,
  timeText,
  transcriptBlock,
  turnSeparator,
  turnSpans,
} from '../render.js';
import { jsonText, safeLine, table } from '../terminal.js';
import { money, priceTableOption } from './cost.js';
import { childSessions, placeRows, treeJson, treeLines, treeTable } from './session-tree.js';

/** Every session of a store, newest first, page by page. */
export async function allSessions(store: SessionStore): Promise<SessionSummary[]> {
  return (await everySession(store)).sessions;
}

/** How a damaged session is named when the store cannot tell its id. */
export function damagedId(damaged: DamagedSession): string {
  return damaged.id ?? '(unknown id)';
}

/** One row of `ls`. */
interface ListRow {
  readonly id: string;
  readonly createdAt: number;
  readonly turns: number;
  readonly events: number;
  readonly surface?: number;
  readonly tokens?: number;
  readonly usage: UsageTotals;
  /** From the per-model totals at each model's base rates (see `summaryCost`). */
  readonly cost: SummaryCost;
  readonly lastActivity: number;
  /** From its creation to its last event, in milliseconds. */
  readonly durationMs: number;
  readonly parent: string | null;
  /** Why an encrypted session's content could not be read (shredded key...): counted from its envelopes. */
  readonly unreadable?: string;
}

/**
 * `palimpsest ls [--limit N] [--surface]`. Reads each session's stats (`store.summarize`:
 * counts, last activity, usage, from the few events that carry them), never a whole log; with
 * `--surface` it also loads each session (finished stream chunks elided) for the surface
 * columns.
 */
export async function listCommand(
  context: CliContext,
  options: { limit?: string; surface?: boolean; prices?: string; tree?: boolean },
): Promise<void> {
  const limit = parseCount('--limit', options.limit);
  const prices = await priceTableOption(options.prices);
  if (limit === 0) throw new CliError('--limit expects at least 1 session, found 0', EXIT.usage);
  const withSurface = options.surface === true;
  const headers = new Map<string, SessionHeader>();
  const { rows, damaged } = await context.withReader(async (store) => {
    const { sessions, damaged } = await everySession(store);
    const shown = limit === undefined ? sessions : sessions.slice(0, limit);
    const progress = context.terminal.progress('reading sessions', shown.length);
    const out: ListRow[] = [];
    for (const summary of shown) {
      const id = summary.header.id;
      try {
        const { stats, unreadable } = await statsOf(store, id);
        const surface =
          withSurface && unreadable === undefined ? await surfaceColumns(store, id) : {};
        const lastActivity = stats.lastEventTime ?? summary.updatedAt ?? stats.header.createdAt;
        headers.set(id, stats.header);
        out.push({
          id,
          createdAt: stats.header.createdAt,
          turns: stats.lastTurn,
          events: stats.eventCount,
          ...surface,
          usage: stats.usage,
          cost: summaryCost(stats.usageByModel, prices, lastActivity),
          lastActivity,
          durationMs: Math.max(0, lastActivity - stats.header.createdAt),
          parent: stats.header.parentSession ?? null,
          ...(unreadable === undefined ? {} : { unreadable }),
        });
      } catch (error) {
        // Damage the listing could not see (it reads headers only) is listed, not fatal.
        if (!CorruptLogError.isInstance(error) && !FormatVersionError.isInstance(error)) {
          throw error;
        }
        damaged.push({ id, error });
      }
      progress.tick();
    }
    progress.done();
    return { rows: out, damaged };
  });
  const tree = options.tree === true ? placeRows(rows, headers) : undefined;
  if (context.json) {
    return context.terminal.json([
      ...(tree === undefined ? rows : treeJson(tree)),
      ...damaged.map((entry) => ({
        id: entry.id ?? null,
        damaged: true,
        code: entry.error.code,
        reason: entry.error.message,
      })),
    ]);
  }
  for (const entry of damaged) {
    context.terminal.line(
      safeLine(
        `${context.terminal.style('red', 'DAMAGED')} ${damagedId(entry)}: ${entry.error.message}`,
        200,
      ),
    );
  }
  for (const row of rows) {
    if (row.unreadable === undefined) continue;
    context.terminal.line(
      safeLine(
        `${context.terminal.style('yellow', 'UNREADABLE')} ${row.id}: ${row.unreadable}`,
        200,
      ),
    );
  }
  if (rows.length === 0) {
    if (damaged.length === 0)
      context.terminal.line(`no sessions in ${safeLine(context.printableStoreUrl, 200)}`);
    return;
  }
  if (tree !== undefined) {
    return context.terminal.line(treeTable(tree, { used: usedText, cost: costText }));
  }
  const head = withSurface
    ? [
        'ID',
        'CREATED',
        'TURNS',
        'EVENTS',
        'SURFACE',
        '~TOKENS',
        'USED',
        'COST',
        'LAST ACTIVITY',
        'DURATION',
        'PARENT',
      ]
    : ['ID', 'CREATED', 'TURNS', 'EVENTS', 'USED', 'COST', 'LAST ACTIVITY', 'DURATION', 'PARENT'];
  context.terminal.line(
    table(
      head,
      rows.map((row) => [
        row.id,
        timeText(row.createdAt),
        String(row.turns),
        String(row.events),
        ...(withSurface ? [String(row.surface), String(row.tokens)] : []),
        usedText(row.usage),
        costText(row.usage, row.cost),
        timeText(row.lastActivity),
        durationText(row.durationMs),
        row.parent ?? '-',
      ]),
    ),
  );
}

/**
 * A session's stats; for an encrypted session whose key cannot be had (shredded, missing, not
 * this master key's), those its envelopes give, and why its content could not be read.
 */
async function statsOf(
  store: SessionStore,
  id: string,
): Promise<{ stats: SessionStats; unreadable?: string }> {
  try {
    return { stats: await store.summarize(id) };
  } catch (error) {
    const keyless = EncryptionError.isInstance(error) || ShreddedKeyError.isInstance(error);
    if (!keyless || !(store instanceof EncryptedStore)) throw error;
    return { stats: await store.inner.summarize(id), unreadable: error.message };
  }
}

/** What the model sees now, for `ls --surface`: the surface size and its estimated tokens. */
async function surfaceColumns(
  store: SessionStore,
  id: string,
): Promise<{ surface: number; tokens: number }> {
  const session = await inspectSession(store, id, { chunks: 'elide' });
  return { surface: session.surface.size, tokens: contextTokens(session).tokens };
}

async function load(context: CliContext, id: string): Promise<Session> {
  return context.withReader((store) => inspectSession(store, id));
}

/**
 * The session exactly as stored, for the commands that show the stored log: a turn a crash left
 * open is not closed in memory here, it is pointed out (on stderr) with the command that closes
 * it.
 */
async function loadStored(context: CliContext, id: string, salvage = false): Promise<Session> {
  const session = salvage
    ? await loadSalvaged(context, id)
    : await context.withReader((store) => inspectSession(store, id, { repair: false }));
  const closers = planRepair(session.events).length;
  if (closers > 0) {
    context.terminal.note(
      context.terminal.style(
        'yellow',
        `session '${safeLine(id, 80)}' ends inside a turn (a crashed or still running writer): shown as stored; palimpsest repair ${safeLine(id, 80)} closes it with ${closers} event(s)`,
      ),
    );
  }
  return session;
}

/**
 * The intact prefix of a damaged session (all of an intact one), with a note on stderr that says
 * where the damage is and how to go on from the prefix.
 */
async function loadSalvaged(context: CliContext, id: string): Promise<Session> {
  const loaded = await context.withReader((store) => store.load(id, { salvage: true }));
  const { damage } = loaded;
  if (damage !== undefined && loaded.events.length === 0) {
    throw new CliError(
      `${safeLine(damage.message, 300)}: no event before the damage is intact, so there is nothing to show (restore the session from a backup)`,
      EXIT.corrupt,
    );
  }
  if (damage !== undefined) {
    const name = safeLine(id, 80);
    context.terminal.note(
      context.terminal.style(
        'yellow',
        `${safeLine(damage.message, 300)}: shown are the ${loaded.events.length} acknowledged event(s) before the damage; palimpsest salvage ${name} copies them into a new session`,
      ),
    );
  }
  return Session.create({ header: loaded.header, seed: loaded.events, seedMode: 'parsed' });
}

/** Tokens the provider reported, in and out, over every call; `-` when none reported any. */
function usedText(usage: UsageTotals): string {
  if (usage.calls === 0) return '-';
  const { inputTokens = 0, outputTokens = 0 } = usage.tokens;
  return String(inputTokens + outputTokens);
}

/** A session's COST cell: `-` without calls, `?` when no model of it has a price. */
function costText(usage: UsageTotals, cost: SummaryCost): string {
  if (usage.calls === 0) return '-';
  if (cost.amount === 0 && cost.unpricedModels.length > 0) return '?';
  return `${money(cost.amount, cost.currency)}${cost.unpricedModels.length > 0 ? '+?' : ''}`;
}

/** `palimpsest show ID` */
export async function showCommand(
  context: CliContext,
  id: string,
  options: { full?: boolean; salvage?: boolean } = {},
): Promise<void> {
  const session = await loadStored(context, id, options.salvage === true);
  const transcript = session.transcript();
  if (context.json) {
    return context.terminal.json(
      transcript.map((entry) =>
        entry.kind === 'message'
          ? {
              kind: entry.kind,
              seq: entry.seq,
              time: entry.time,
              onSurface: entry.onSurface,
              message: entry.message,
            }
          : {
              kind: entry.kind,
              seq: entry.seq,
              time: entry.time,
              shadowedSeqs: entry.shadowedSeqs,
              onSurface: entry.onSurface,
              message: entry.message,
            },
      ),
    );
  }
  const maxLines = options.full === true ? 0 : 40;
  const parent = session.header.parentSession;
  if (parent !== undefined) {
    // Where the log's first events come from, as the viewer says it: the last event copied.
    const seed = session.header.seedLength ?? 0;
    context.terminal.line(
      context.terminal.style(
        'dim',
        `forked from ${safeLine(parent, 120)} ${seed === 0 ? 'before its first event' : `at #${seed - 1}`}`,
      ),
    );
  }
  const children = await context.withReader(async (store) => {
    const named = await childSessions(store, session);
    const tree =
      named.length === 0 ? undefined : await costTree(store, id, { prices: DEFAULT_PRICES });
    return { named, tree };
  });
  for (const line of treeLines(session.header, children.named))
    context.terminal.line(context.terminal.style('dim', line));
  if (children.tree !== undefined) {
    const { rolledUp, cost } = children.tree;
    context.terminal.line(
      context.terminal.style(
        'dim',
        `cost with its ${children.tree.children.length} child session(s): ${money(rolledUp.cost, cost.currency)} over ${rolledUp.calls} call(s)${rolledUp.unpricedCalls === 0 ? '' : `, ${rolledUp.unpricedCalls} of them unpriced`} (palimpsest cost ${safeLine(id, 80)} itemises it)`,
      ),
    );
  }
  // Each turn opens with a line naming its model, start and duration, before its first entry.
  const turns = turnSpans(session.events);
  let nextTurn = 0;
  for (const entry of transcript) {
    while (nextTurn < turns.length && (turns[nextTurn]?.startSeq ?? 0) <= entry.seq) {
      const turn = turns[nextTurn++];
      if (turn !== undefined && (turn.endSeq === undefined || entry.seq <= turn.endSeq)) {
        context.terminal.line(turnSeparator(context.terminal, turn));
      }
    }
    context.terminal.line(transcriptBlock(context.terminal, entry, maxLines));
  }
  // Typed while a turn ran and not read by the model yet (a crash, a cancelled turn): the
  // reader sees them too, marked as waiting, at the end where they will enter.
  const { steers, followUps } = pendingMessages(session);
  for (const queued of [...steers, ...followUps].sort((a, b) => a.seq - b.seq)) {
    const what = queued.kind === 'steer' ? 'steer' : 'follow-up';
    context.terminal.line(
      `${messageBlock(context.terminal, queued.seq, queued.message, maxLines)}\n${' '.repeat(18)}${context.terminal.style('dim', `(queued ${what}, not yet read by the model)`)}`,
    );
  }
  // What the transcript cannot show, and why: each redaction names what it erased.
  for (const event of session.events) {
    if (event.type !== 'log/redaction') continue;
    const seqs = event.data.erased.map((erased) => erased.seq);
    context.terminal.line(
      context.terminal.style(
        'dim',
        safeLine(
          `#${event.seq} redaction (${event.data.reason}): content of ${seqs.length} event(s) erased, shown as [redacted]: ${seqList(seqs)}`,
          240,
        ),
      ),
    );
  }
}

/** `palimpsest surface ID [--at SEQ]` */
export async function surfaceCommand(
  context: CliContext,
  id: string,
  options: { at?: string },
): Promise<void> {
  const session = await load(context, id);
  const at = parseCount('--at', options.at) ?? session.seq - 1;
  if (at >= session.seq) {
    throw new CliError(
      `--at ${at} is past the end of session '${id}' (its last event is #${session.seq - 1})`,
      EXIT.usage,
    );
  }
  const fold = foldSurface(session.events.slice(0, at + 1));
  const entries = fold.seqs.flatMap((seq) => {
    const event = session.event(seq) as SessionEvent;
    const message = deriveEventMessage(event);
    return message === null ? [] : [{ seq, message }];
  });
  if (context.json)
    return context.terminal.json({ at, replaceGeneration: fold.replaceGeneration, entries });
  context.terminal.line(
    context.terminal.style(
      'dim',
      `what the model saw after event #${at}: ${entries.length} messages, ${fold.replaceGeneration} replace(s) so far`,
    ),
  );
  for (const { seq, message } of entries)
    context.terminal.line(messageBlock(context.terminal, seq, message));
}

/** `palimpsest log ID [--type T] [--from SEQ] [--to SEQ]` */
export async function logCommand(
  context: CliContext,
  id: string,
  options: { type?: string; from?: string; to?: string; salvage?: boolean; follow?: boolean },
): Promise<void> {
  if (options.follow === true && (options.to !== undefined || options.salvage === true)) {
    throw new CliError(
      '--follow reads the log as it grows: it takes neither --to nor --salvage',
      EXIT.usage,
    );
  }
  const session = await loadStored(context, id, options.salvage === true);
  const from = parseCount('--from', options.from) ?? 0;
  const to = parseCount('--to', options.to) ?? session.seq - 1;
  if (options.type !== undefined) checkTypeFilter(session, options.type);
  const shown = (event: SessionEvent): boolean =>
    event.seq >= from && (options.type === undefined || matchesType(event.type, options.type));
  for (const event of session.events)
    if (event.seq <= to && shown(event)) printEvent(context, event);
  if (options.follow !== true) return;
  // Ctrl-C ends the follow, which is how it is meant to end: exit code 0.
  const stop = new AbortController();
  const onInterrupt = (): void => stop.abort();
  process.once('SIGINT', onInterrupt);
  process.once('SIGTERM', onInterrupt);
  try {
    await context.withReader(async (store) => {
      for await (const event of store.watch(id, { fromSeq: session.seq, signal: stop.signal })) {
        if (shown(event)) printEvent(context, event);
      }
    });
  } finally {
    process.removeListener('SIGINT', onInterrupt);
    process.removeListener('SIGTERM', onInterrupt);
  }
}

/** One event of `log`: a line, or with `--json` the stored JSON (one event per line). */
function printEvent(context: CliContext, event: SessionEvent): void {
  if (context.json) {
    // JSON Lines for jq and friends: unsafe characters escaped, which leaves the same values.
    context.terminal.out.write(`${jsonText(event, 0)}\n`);
    return;
  }
  const op =
    typeof event.surfaceOp === 'object'
      ? ` [replace #${event.surfaceOp.start}…#${event.surfaceOp.end}]`
      : '';
  const sources = event.sourceEventSeqs === undefined ? '' : ` ← ${seqList(event.sourceEventSeqs)}`;
  context.terminal.line(
    `${context.terminal.style('dim', `#${event.seq}`.padEnd(8))}${timeText(event.time)}  ${eventLine(event, 90)}${op}${sources}`,
  );
}

/** `--type tool` matches `tool/call` and `tool/result`; `--type tool/call` matches exactly. */
function matchesType(type: string, filter: string): boolean {
  return filter.includes('/') ? type === filter : type.startsWith(`${filter}/`);
}

/**
 * A `--type` that names neither a type of the vocabulary nor one the session holds is a typo,
 * not a question with an empty answer.
 */
function checkTypeFilter(session: Session, filter: string): void {
  const present = new Set(session.events.map((event) => event.type));
  const known = [...KNOWN_TYPES, ...present];
  if (known.some((type) => matchesType(type, filter))) return;
  const areas = [...new Set(known.map((type) => type.split('/')[0]))].sort();
  throw new CliError(
    `--type expects an event type or area such as ${areas.join(', ')}; found '${filter}', which neither the vocabulary nor session '${session.id}' has`,
    EXIT.usage,
  );
}

/** `palimpsest why ID SEQ` */
export async function whyCommand(context: CliContext, id: string, seqText: string): Promise<void> {
  const session = await load(context, id);
  const seq = parseCount('SEQ', seqText) ?? 0;
  const why = eventProvenance(session, seq);
  if (why === undefined) {
    throw new CliError(
      `session '${id}' has no event #${seq} (it has ${session.seq} events)`,
      EXIT.usage,
    );
  }
  if (context.json) {
    return context.terminal.json({
      event: why.event,
      derivedFrom: why.derivedFrom,
      shadowedBy: why.shadowedBy,
      citedBy: why.citedBy,
      onSurface: why.onSurface,
    });
  }
  const lines = [`#${seq} ${eventLine(why.event, 100)}`];
  if (why.derivedFrom !== undefined) {
    lines.push('derived from:');
    tree(session, why.derivedFrom, '', lines);
  }
  for (const by of why.shadowedBy) {
    lines.push(`shadowed by #${by} ${eventLine(session.event(by) as SessionEvent, 80)}`);
  }
  lines.push(`cited by: ${seqList(why.citedBy)}`);
  lines.push(`on the surface now: ${why.onSurface ? 'yes' : 'no'}`);
  for (const line of lines) context.terminal.line(line);
}

/** The provenance tree as text; runs of stream chunks are collapsed to one line. */
function tree(
  session: Session,
  nodes: readonly ProvenanceNode[],
  indent: string,
  lines: string[],
): void {
  if (nodes.length === 0) {
    lines.push(`${indent}└─ derived from nothing (an empty provider stream)`);
    return;
  }
  const chunks = nodes.filter((node) => node.type === 'assistant/chunk').map((node) => node.seq);
  const others = nodes.filter((node) => node.type !== 'assistant/chunk');
  const items: Array<{ text: string; node?: ProvenanceNode }> = [];
  if (chunks.length > 0)
    items.push({ text: `${chunks.length} stream chunk(s) ${seqList(chunks)}` });
  for (const node of others) {
    items.push({
      text: `#${node.seq} ${eventLine(session.event(node.seq) as SessionEvent, 80)}`,
      node,
    });
  }
  for (const [index, item] of items.entries()) {
    const last = index === items.length - 1;
    lines.push(`${indent}${last ? '└─' : '├─'} ${item.text}`);
    const node = item.node;
    if (node === undefined) continue;
    const next = `${indent}${last ? '   ' : '│  '}`;
    if (node.derivedFrom !== undefined) tree(session, node.derivedFrom, next, lines);
    else {
      // Past the depth limit the node's own sources are counted, not followed.
      const more = session.event(node.seq)?.sourceEventSeqs?.length ?? 0;
      if (more > 0) lines.push(`${next}└─ … (${more} more sources)`);
    }
  }
}
