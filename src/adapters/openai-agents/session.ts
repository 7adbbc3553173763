/**
 * An OpenAI Agents SDK `Session` whose history is a palimpsest session: `run(agent, input,
 * { session })` persists into the log, and the SDK reads its history back from the surface.
 */
import type { AgentInputItem, Session as AgentsSession } from '@openai/agents';
import {
  type AssistantMessageData,
  isDurable,
  type JsonObject,
  lastTurnNumber,
  type ReplaceOp,
  type Session,
  type SessionEvent,
  TOOL_NOT_STARTED,
  TOOL_OUTCOME_UNKNOWN,
} from '../../core/index.js';
import {
  type LiveSession,
  type OpenSessionOptions,
  openSession,
  type SessionStore,
} from '../../store/index.js';
import { OpenAIAgentsSessionError } from './errors.js';
import { ITEM_SOURCE, itemEvent, itemKind } from './item-events.js';
import { copyItem, jsonItem } from './json-item.js';

/** Options of {@link PalimpsestSession.open}: those of `openSession` the adapter leaves open. */
export type PalimpsestSessionOptions = Pick<
  OpenSessionOptions,
  'create' | 'header' | 'clock' | 'limits' | 'onListenerError'
>;

/** What removed items from the SDK's history: the method whose replace shadows them. */
export type RemovalCause = 'popItem' | 'clearSession';

/**
 * The data of the event that shadows removed items: an empty assistant message, which keeps a
 * place on the surface and derives no message, so the model's view loses exactly the items.
 */
export interface RemovalData extends AssistantMessageData {
  readonly removed: { readonly by: RemovalCause; readonly items: number };
}

/**
 * The OpenAI Agents JS SDK's `Session`, backed by a palimpsest session.
 *
 * Each item becomes one surface event that keeps the item verbatim (`data.item`), so
 * `getItems()` returns exactly what was added; the mapping of every item type is in
 * docs/openai-agents.md. One `addItems` call is one turn of the log. Nothing is ever deleted:
 * `popItem` and `clearSession` append a replace that shadows the removed surface range, and
 * `replaceHistoryWithCompaction` puts the provider's compaction item in the place of the whole
 * history, citing every event it shadows. Each method resolves once what it wrote is durable
 * (for a session with a durability barrier, such as one from {@link PalimpsestSession.open}).
 *
 * @example
 * ```ts
 * import { mkdtempSync } from 'node:fs';
 * import { tmpdir } from 'node:os';
 * import { join } from 'node:path';
 * import { PalimpsestSession } from 'palimpsest/openai-agents';
 * import { openStore } from 'palimpsest/store';
 *
 * const store = await openStore(`jsonl:${mkdtempSync(join(tmpdir(), 'palimpsest-'))}`);
 * const session = await PalimpsestSession.open(store, 'chat-1');
 * // Pass it to the runner: run(agent, 'Hello', { session }). By hand:
 * await session.addItems([{ role: 'user', content: 'Hello' }]);
 * await session.addItems([
 *   { type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'Hi!' }] },
 * ]);
 * console.log((await session.getItems()).length); // 2
 * const last = await session.popItem(); // shadowed on the surface, kept in the log
 * console.log(last?.type); // 'message'
 * console.log((await session.getItems()).length); // 1
 * console.log(session.session.events.length); // 9: two turns (3 and 5 events) and the replace
 * await session.close();
 * await store.close();
 * ```
 */
export class PalimpsestSession implements AgentsSession {
  /** The palimpsest session holding the history: its log, surface and derived messages. */
  readonly session: Session;
  private owned = false;
  private open: OpenTurn | undefined;
  private cached: JsonObject[] = [];
  private cachedGeneration = -1;
  private cachedSize = 0;

  /**
   * Wraps a session. Writes wait for its durability barrier when it has one (a
   * `LiveSession`); an in-memory `Session` works too, with no durability.
   */
  constructor(session: Session) {
    this.session = session;
  }

  /**
   * Opens (or creates) the session `id` in `store` for writing, as `openSession` does (lock,
   * repair, group commit), and wraps it. {@link PalimpsestSession.close} closes it. A session it
   * creates gets `metadata: {writer: 'palimpsest/openai-agents'}` in its header unless
   * `options.header` says otherwise.
   *
   * @throws LockedError when another live writer holds the session, and the other errors of
   *   `openSession`.
   */
  static async open(
    store: SessionStore,
    id: string,
    options: PalimpsestSessionOptions = {},
  ): Promise<PalimpsestSession> {
    // Group commit keeps the events of one call in one store append: a crash keeps all or none.
    const live: LiveSession = await openSession(store, id, {
      header: { metadata: { writer: 'palimpsest/openai-agents' } },
      ...options,
      durability: { mode: 'group' },
    });
    const adapter = new PalimpsestSession(live);
    adapter.owned = true;
    return adapter;
  }

  async getSessionId(): Promise<string> {
    return this.session.id;
  }

  /**
   * The items on the surface, oldest first; with `limit`, the most recent `limit` of them
   * (none for 0). Each call returns fresh copies.
   *
   * @throws OpenAIAgentsSessionError `INVALID_LIMIT` for a limit that is not a non-negative
   *   integer, `FOREIGN_SURFACE_EVENT` when the surface holds an event this adapter did not write.
   */
  async getItems(limit?: number): Promise<AgentInputItem[]> {
    if (limit !== undefined && !(Number.isSafeInteger(limit) && limit >= 0)) {
      throw new OpenAIAgentsSessionError(
        'INVALID_LIMIT',
        `getItems expects a non-negative integer limit, found ${String(limit)}`,
      );
    }
    const items = this.surfaceItems();
    const kept = limit === undefined ? items : limit === 0 ? [] : items.slice(-limit);
    return kept.map((item) => copyItem(item) as AgentInputItem);
  }

  /**
   * Appends `items` as one turn, and resolves once it is durable. An empty list writes nothing.
   *
   * @throws OpenAIAgentsSessionError `INVALID_ITEM` or `NON_JSON_ITEM`; nothing is written then.
   */
  async addItems(items: AgentInputItem[]): Promise<void> {
    const checked = items.map((item, index) => jsonItem(item, index));
    if (checked.length === 0) return;
    this.writeTurn(checked);
    await this.durable();
  }

  /**
   * Shadows the most recent item (and any removal marker after it) with a removal marker, and
   * returns that item; `undefined`, writing nothing, when there is none.
   */
  async popItem(): Promise<AgentInputItem | undefined> {
    const seqs = this.session.surface.seqs;
    let at = seqs.length - 1;
    while (at >= 0 && itemOf(this.eventAt(seqs[at])) === undefined) at--;
    if (at < 0) return undefined;
    const item = itemOf(this.eventAt(seqs[at])) as JsonObject;
    this.remove(seqs.slice(at), 'popItem', 1);
    await this.durable();
    return copyItem(item) as AgentInputItem;
  }

  /** Shadows the whole surface with one removal marker; writes nothing when it holds no item. */
  async clearSession(): Promise<void> {
    const count = this.surfaceItems().length;
    if (count === 0) return;
    this.remove(this.session.surface.seqs, 'clearSession', count);
    await this.durable();
  }

  /**
   * Replaces the history with `items`, whose first is the provider's `compaction` item: it takes
   * the place of the whole surface (a replace citing every shadowed event, inside a
   * `compaction/start` / `compaction/end` bracket), and the rest follow it, all in one turn.
   *
   * @throws OpenAIAgentsSessionError `INVALID_COMPACTION` when `items` does not start with a
   *   compaction item, or the errors of {@link PalimpsestSession.addItems}.
   */
  async replaceHistoryWithCompaction(items: AgentInputItem[]): Promise<void> {
    const checked = items.map((item, index) => jsonItem(item, index));
    const first = checked[0];
    if (first === undefined || itemKind(first) !== 'compaction') {
      throw new OpenAIAgentsSessionError(
        'INVALID_COMPACTION',
        `replaceHistoryWithCompaction expects a compaction item first, found ${first === undefined ? 'no items' : `a '${itemKind(first)}' item`}`,
      );
    }
    this.writeTurn(checked, this.session.surface.seqs);
    await this.durable();
  }

  /** Closes the session if {@link PalimpsestSession.open} opened it; idempotent. */
  async close(): Promise<void> {
    if (this.owned) await (this.session as LiveSession).close();
  }

  /**
   * Writes one batch as a turn; with `shadow`, its first item replaces those surface entries.
   * A batch whose step requests calls it does not answer leaves its turn open (the run waits
   * for tool approval), and the next batch continues it, unless that one starts a new run.
   */
  private writeTurn(items: readonly JsonObject[], shadow?: readonly number[]): void {
    const session = this.session;
    const open = shadow === undefined && !startsRun(items[0]) ? this.open : undefined;
    if (open === undefined) this.closeOpenTurn();
    const turn = open?.turn ?? lastTurnNumber(session) + 1;
    const step = 1;
    const requested = open?.requested ?? new Map<string, number>();
    const answered = open?.answered ?? new Set<string>();
    let stepOpen = open !== undefined;
    if (open === undefined) session.append('turn/start', { turn });
    items.forEach((item, index) => {
      const event = itemEvent(item, { turn, step, fallbackId: `item-${session.seq}` });
      if (!stepOpen && (event.type === 'assistant/message' || event.type === 'tool/result')) {
        session.append('step/start', { turn, step });
        stepOpen = true;
      }
      if (
        index === 0 &&
        shadow !== undefined &&
        shadow.length > 0 &&
        event.type === 'user/message'
      ) {
        const id = `openai-agents-${session.seq}`;
        const start = session.append('compaction/start', {
          id,
          by: 'replaceHistoryWithCompaction',
        });
        session.append('user/message', event.data, {
          surfaceOp: replaceOf(shadow),
          sourceEventSeqs: [...shadow, start.seq],
        });
        session.append('compaction/end', { id, shadowed: shadow.length });
      } else if (event.type === 'tool/result') {
        const call = requested.get(event.answers);
        session.append('tool/result', event.data, {
          surfaceOp: 'append',
          ...(call === undefined ? {} : { sourceEventSeqs: [call] }),
        });
        answered.add(event.answers);
      } else if (event.type === 'assistant/message') {
        const appended = session.append('assistant/message', event.data, { surfaceOp: 'append' });
        // The first request of a call id is the one a result answers (the linter's rule P1).
        for (const callId of event.calls) {
          if (!requested.has(callId)) requested.set(callId, appended.seq);
        }
      } else {
        session.append(event.type, event.data, { surfaceOp: 'append' });
      }
    });
    const waiting = [...requested.keys()].some((callId) => !answered.has(callId));
    if (stepOpen && waiting) {
      this.open = { turn, requested, answered };
      return;
    }
    this.open = undefined;
    if (stepOpen) session.append('step/end', { turn, step });
    session.append('turn/end', { turn, reason: { kind: 'completed' } });
  }

  /**
   * Ends a turn left waiting for results, when what comes next is not them (a new run, a
   * removal, a compaction): its calls stay unanswered, and the turn says it was cut short.
   */
  private closeOpenTurn(): void {
    const open = this.open;
    if (open === undefined) return;
    this.open = undefined;
    this.session.append('step/end', { turn: open.turn, step: 1 });
    this.session.append('turn/end', {
      turn: open.turn,
      reason: { kind: 'aborted', cause: 'the history moved on with tool calls unanswered' },
    });
  }

  private remove(shadow: readonly number[], by: RemovalCause, count: number): void {
    this.closeOpenTurn();
    const data: RemovalData = {
      turn: lastTurnNumber(this.session),
      step: 1,
      message: {
        id: `removed-${this.session.seq}`,
        role: 'assistant',
        content: [],
        source: ITEM_SOURCE,
      },
      finishReason: 'other',
      removed: { by, items: count },
    };
    this.session.append('assistant/message', data, {
      surfaceOp: replaceOf(shadow),
      sourceEventSeqs: [...shadow],
    });
  }

  /** The stored items on the surface, in order; rebuilt only when a replace changed it. */
  private surfaceItems(): readonly JsonObject[] {
    const surface = this.session.surface;
    if (surface.replaceGeneration !== this.cachedGeneration) {
      this.cached = [];
      this.cachedSize = 0;
      this.cachedGeneration = surface.replaceGeneration;
    }
    for (; this.cachedSize < surface.size; this.cachedSize++) {
      const event = this.eventAt(surface.at(this.cachedSize));
      const item = itemOf(event);
      if (item !== undefined) this.cached.push(item);
      else if (!isRemoval(event) && !isRepairCloser(event)) {
        throw new OpenAIAgentsSessionError(
          'FOREIGN_SURFACE_EVENT',
          `the surface holds seq ${event.seq} (${event.type}), which carries no OpenAI Agents item; this session was not written by PalimpsestSession alone`,
        );
      }
    }
    return this.cached;
  }

  private eventAt(seq: number | undefined): SessionEvent {
    return this.session.event(seq ?? -1) as SessionEvent;
  }

  private durable(): Promise<void> {
    return isDurable(this.session) ? this.session.flush() : Promise.resolve();
  }
}

/** A turn whose step requested calls that no batch has answered yet. */
interface OpenTurn {
  readonly turn: number;
  readonly requested: Map<string, number>;
  readonly answered: Set<string>;
}

/** The runner persists a run's input first: a batch opening with a message starts a run. */
function startsRun(first: JsonObject | undefined): boolean {
  const kind = first === undefined ? '' : itemKind(first);
  return kind === 'user' || kind === 'system' || kind === 'developer';
}

function replaceOf(shadow: readonly number[]): ReplaceOp {
  return { op: 'replace', start: shadow[0] as number, end: shadow[shadow.length - 1] as number };
}

function itemOf(event: SessionEvent): JsonObject | undefined {
  const data = event.data as { item?: unknown } | null;
  const item = data?.item;
  return typeof item === 'object' && item !== null && !Array.isArray(item)
    ? (item as JsonObject)
    : undefined;
}

/**
 * A result crash repair appended for a call a crash left unanswered: it answers the model, not
 * the SDK, which has no item for it (and drops a call left without a result on its own).
 */
function isRepairCloser(event: SessionEvent): boolean {
  const code = (event.data as { error?: { code?: unknown } } | null)?.error?.code;
  return (
    event.type === 'tool/result' && (code === TOOL_NOT_STARTED || code === TOOL_OUTCOME_UNKNOWN)
  );
}

function isRemoval(event: SessionEvent): boolean {
  const data = event.data as { removed?: unknown } | null;
  return event.type === 'assistant/message' && typeof data?.removed === 'object';
}
