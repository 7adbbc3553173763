/**
 * An OpenAI Agents SDK `Session` whose history is a palimpsest session: `run(agent, input,
 * { session })` persists into the log, and the SDK reads its history back from the surface.
 */
import type { AgentInputItem, Session as AgentsSession } from '@openai/agents';
import { isDurable, type JsonObject, type Session } from '../../core/index.js';
import {
  type LiveSession,
  type OpenSessionOptions,
  openSession,
  type SessionStore,
} from '../../store/index.js';
import { OpenAIAgentsSessionError } from './errors.js';
import { itemKind } from './item-events.js';
import { copyItem, jsonItem } from './json-item.js';
import { itemsOf, SurfaceItems } from './surface-items.js';
import { TurnWriter } from './turn-writer.js';

/** Options of {@link PalimpsestSession.open}: those of `openSession` the adapter leaves open. */
export type PalimpsestSessionOptions = Pick<
  OpenSessionOptions,
  'create' | 'header' | 'clock' | 'limits' | 'onListenerError'
>;

/**
 * The OpenAI Agents JS SDK's `Session`, backed by a palimpsest session.
 *
 * Each item becomes one surface event that keeps the item verbatim (`data.item`), so
 * `getItems()` returns exactly what was added; consecutive tool calls (the parallel calls of one
 * model response) share one assistant message (`data.items`), as providers require. The mapping
 * of every item type is in docs/openai-agents.md. One `addItems` call is one turn of the log, except that a turn whose
 * tool calls wait for results (a run interrupted for approval) stays open until a later call
 * brings them. Nothing is ever deleted:
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
  private readonly writer: TurnWriter;
  private readonly surfaceItems: SurfaceItems;

  /**
   * Wraps a session. Writes wait for its durability barrier when it has one (a
   * `LiveSession`); an in-memory `Session` works too, with no durability.
   */
  constructor(session: Session) {
    this.session = session;
    this.writer = new TurnWriter(session);
    this.surfaceItems = new SurfaceItems(session);
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
    const items = this.surfaceItems.items();
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
    this.writer.write(checked);
    await this.durable();
  }

  /**
   * Shadows the most recent item (and any removal marker after it) with a removal marker, and
   * returns that item; `undefined`, writing nothing, when there is none. When that item is the
   * last of parallel calls sharing a message, the marker carries the calls before it.
   */
  async popItem(): Promise<AgentInputItem | undefined> {
    const seqs = this.session.surface.seqs;
    let at = seqs.length - 1;
    while (at >= 0 && itemsOf(this.surfaceItems.eventAt(seqs[at])) === undefined) at--;
    if (at < 0) return undefined;
    const items = itemsOf(this.surfaceItems.eventAt(seqs[at])) as readonly JsonObject[];
    const item = items[items.length - 1] as JsonObject;
    // Of parallel calls held in one message, the last is removed and the others stay.
    this.writer.remove(seqs.slice(at), 'popItem', 1, items.slice(0, -1));
    await this.durable();
    return copyItem(item) as AgentInputItem;
  }

  /** Shadows the whole surface with one removal marker; writes nothing when it holds no item. */
  async clearSession(): Promise<void> {
    const count = this.surfaceItems.items().length;
    if (count === 0) return;
    this.writer.remove(this.session.surface.seqs, 'clearSession', count);
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
    this.writer.write(checked, this.session.surface.seqs);
    await this.durable();
  }

  /** Closes the session if {@link PalimpsestSession.open} opened it; idempotent. */
  async close(): Promise<void> {
    if (this.owned) await (this.session as LiveSession).close();
  }

  private durable(): Promise<void> {
    return isDurable(this.session) ? this.session.flush() : Promise.resolve();
  }
}
