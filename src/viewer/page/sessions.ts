/**
 * The session list of the served page: the store's sessions, searched by id and by text (the
 * server asks the store's search index), sorted by last activity, creation or id; under each
 * session found by its text, the messages that matched, each a link that opens it at that event.
 */
import type { SessionListing, SessionListingHit } from '../protocol.js';
import { byId, type Child, el, replaceChildren } from './dom.js';
import type { ServerSource } from './source.js';
import { counted, timeText, visible } from './text.js';

type SortKey = 'activity' | 'created' | 'id';

function sorted(sessions: readonly SessionListing[], key: SortKey): SessionListing[] {
  const copy = [...sessions];
  if (key === 'id') return copy.sort((a, b) => a.id.localeCompare(b.id));
  if (key === 'created') return copy.sort((a, b) => b.createdAt - a.createdAt);
  return copy.sort((a, b) => b.lastActivity - a.lastActivity);
}

/** Keeps the sidebar's list in step with its search box and sort order. */
export class SessionSidebar {
  private sessions: readonly SessionListing[] = [];
  /** Whether the server has answered once (until then the list says it is coming). */
  private answered = false;
  private asked = 0;

  constructor(
    private readonly source: ServerSource,
    private readonly current: () => string | undefined,
  ) {
    const search = byId<HTMLInputElement>('session-search');
    let timer: ReturnType<typeof setTimeout> | undefined;
    search.addEventListener('input', () => {
      clearTimeout(timer);
      timer = setTimeout(() => void this.refresh(), 200);
    });
    byId<HTMLSelectElement>('session-sort').addEventListener('change', () => this.render());
    // Below 1100 px the list is folded away (styles/layout.css); the header's button shows it.
    const toggle = byId('sidebar-toggle');
    toggle.addEventListener('click', () => {
      const open = document.body.classList.toggle('sidebar-open');
      toggle.setAttribute('aria-expanded', String(open));
    });
  }

  /** Asks the server again (the search text may have changed). */
  async refresh(): Promise<void> {
    const asked = ++this.asked;
    const text = byId<HTMLInputElement>('session-search').value.trim();
    try {
      const list = await this.source.sessions(text);
      if (asked !== this.asked) return; // a newer search answered first
      this.sessions = list.sessions;
      this.answered = true;
      this.render();
      if (list.damaged.length > 0) {
        byId('session-list').append(
          ...list.damaged.map((entry) =>
            el(
              'li',
              { class: 'damaged' },
              `DAMAGED ${visible(entry.id ?? '(unknown id)')}: ${visible(entry.reason)}`,
            ),
          ),
        );
      }
    } catch (error) {
      replaceChildren(byId('session-list'), el('li', { class: 'damaged' }, String(error)));
    }
  }

  /** Redraws the list, marking the open session. */
  render(): void {
    const key = byId<HTMLSelectElement>('session-sort').value as SortKey;
    const open = this.current();
    replaceChildren(
      byId('session-list'),
      ...sorted(this.sessions, key).map((session) =>
        el(
          'li',
          session.id === open ? { class: 'open' } : {},
          el('a', { href: `#/s/${encodeURIComponent(session.id)}` }, visible(session.id)),
          el(
            'span',
            { class: 'meta' },
            `${counted(session.events, 'event')} · ${counted(session.turns, 'turn')} · ${timeText(session.lastActivity)}${session.parent === null ? '' : ` · fork of ${visible(session.parent)}`}`,
          ),
          ...(session.hits ?? []).map((hit) => hitLink(session.id, hit)),
        ),
      ),
      this.sessions.length > 0
        ? null
        : this.answered
          ? el('li', { class: 'empty' }, 'no session matches')
          : el('li', { class: 'pending' }, 'listing the sessions…'),
    );
  }
}

/** A matched message: `#seq role: snippet`, its matches marked, linking to the session at `seq`. */
function hitLink(id: string, hit: SessionListingHit): HTMLAnchorElement {
  const parts: Child[] = [];
  for (const [index, piece] of visible(hit.snippet).split(/[«»]/).entries()) {
    parts.push(index % 2 === 1 ? el('mark', {}, piece) : piece);
  }
  return el(
    'a',
    { class: 'hit', href: `#/s/${encodeURIComponent(id)}?seq=${hit.seq}` },
    `#${hit.seq} ${hit.role}: `,
    ...parts,
  );
}
