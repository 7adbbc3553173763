/**
 * What the store says of the open session beyond its events: `palimpsest verify`'s result and
 * the tree of sessions around it. Served, the server answers (verify once the page has drawn);
 * in an export, they are what the file embedded when it was written. A session that fails
 * verify says so at the top of the page, whichever view is shown.
 */
import type { SessionSnapshot, SessionTree, VerifyStatus } from '../protocol.js';
import { byId, el, replaceChildren } from './dom.js';
import type { ServerSource } from './source.js';
import { counted, excerpt, timeText } from './text.js';

/** Where a figure stands: asked and not yet answered, answered, failed, or not to be had. */
export type Asked<T> =
  | { readonly state: 'pending' }
  | { readonly state: 'done'; readonly value: T }
  | { readonly state: 'failed'; readonly reason: string }
  | { readonly state: 'absent' };

/** The open session's verify result and tree, and who to tell when they change. */
export class SessionChecks {
  id = '';
  verify: Asked<VerifyStatus> = { state: 'absent' };
  tree: Asked<SessionTree> = { state: 'absent' };
  /** The server, when served (`undefined` in an export). */
  source: ServerSource | undefined;
  private readonly listeners = new Set<() => void>();

  /** Takes the session a snapshot opened: an export's embedded figures, or none yet. */
  open(snapshot: SessionSnapshot, source: ServerSource | undefined): void {
    this.id = snapshot.header.id;
    this.source = source;
    this.verify =
      snapshot.verify === undefined
        ? { state: 'absent' }
        : { state: 'done', value: snapshot.verify };
    this.tree =
      snapshot.tree === undefined ? { state: 'absent' } : { state: 'done', value: snapshot.tree };
    this.renderBanner();
  }

  /**
   * Asks the server to verify the session: at `head` events (the snapshot's count; the server
   * answers from what it kept when it checked that many before), or without, afresh.
   */
  async check(head?: number): Promise<void> {
    const source = this.source;
    if (source === undefined) return;
    const id = this.id;
    this.verify = { state: 'pending' };
    this.changed();
    const query: Record<string, string> = head === undefined ? {} : { seq: String(head) };
    const answer = await settle(source.about(id, 'verify', query));
    if (id !== this.id) return;
    this.verify = answer;
    this.changed();
  }

  /** Asks the server for the tree, once per session. */
  async loadTree(): Promise<void> {
    const source = this.source;
    if (source === undefined || this.tree.state !== 'absent') return;
    const id = this.id;
    this.tree = { state: 'pending' };
    const answer = await settle(source.about(id, 'tree'));
    if (id !== this.id) return;
    this.tree = answer;
    this.changed();
  }

  /** Calls `listener` after each change; returns its removal. */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private changed(): void {
    this.renderBanner();
    for (const listener of this.listeners) listener();
  }

  /** The line at the top of the page: loud when verify failed, quiet when it passed. */
  private renderBanner(): void {
    const into = byId('verify-status');
    const verify = this.verify;
    into.className = '';
    if (verify.state !== 'done') {
      replaceChildren(
        into,
        verify.state === 'failed' ? `verify could not run: ${excerpt(verify.reason, 160)}` : null,
      );
      return;
    }
    const status = verify.value;
    if (status.ok) {
      into.className = 'verify-ok';
      const when = this.source === undefined ? 'when this file was written' : 'by the server';
      replaceChildren(
        into,
        `verify: ok (${counted(status.events, 'event')}, checked ${timeText(status.checkedAt)} ${when})`,
      );
      return;
    }
    into.className = 'verify-failed';
    replaceChildren(
      into,
      el('strong', {}, `VERIFY FAILED: ${counted(status.problems.length, 'problem')}`),
      ` · ${excerpt(status.problems[0] ?? '', 160)} · the Session view (6) lists them`,
    );
  }
}

async function settle<T>(promise: Promise<T>): Promise<Asked<T>> {
  try {
    return { state: 'done', value: await promise };
  } catch (error) {
    return { state: 'failed', reason: error instanceof Error ? error.message : String(error) };
  }
}

/** The page's one instance, shared by the entry point and the session panel. */
export const sessionChecks = new SessionChecks();
