/**
 * The Conversation panel (key 4): the session as a person reads it. Only the last entries are
 * drawn at first; scrolling to the top (or the button there) draws the ones before, keeping what
 * the reader looks at in place. A live batch appends its entries at the bottom and follows them
 * only when the reader was at the bottom.
 */
import { ConversationIndex, separatorText } from './conversation-model.js';
import { type DrawContext, drawEntry, fillResult } from './conversation-render.js';
import { el } from './dom.js';
import { stepFrom } from './keys.js';
import type { Panel, PanelContext } from './panel.js';
import type { ViewedSession } from './state.js';
import { counted, visible } from './text.js';

/** Entries drawn at first, and added each time the reader reaches the top. */
export const CONVERSATION_WINDOW = 60;

/** How close to the bottom (px) counts as reading the newest entries. */
const BOTTOM_SLACK = 48;

/** Each session's conversation, as far as its log has been read: built once, then grown. */
const conversations = new WeakMap<ViewedSession, ConversationIndex>();

/** The conversation of `viewed`, kept: showing the panel again reads only the events since. */
function conversationOf(viewed: ViewedSession): ConversationIndex {
  let index = conversations.get(viewed);
  if (index === undefined) {
    index = new ConversationIndex();
    conversations.set(viewed, index);
  }
  return index;
}

/** One drawing of the panel: the index, the DOM, and how far up it is drawn. */
class ConversationView {
  readonly scroller: HTMLElement;
  private readonly list: HTMLElement;
  private readonly earlier: HTMLButtonElement;
  private readonly context: DrawContext;
  /** Index of the first drawn entry. */
  private drawnFrom: number;
  /** Whether the reader is at the bottom: content that grows there (an image, a font) keeps them there. */
  private following = true;

  constructor(
    into: HTMLElement,
    readonly viewed: ViewedSession,
    page: PanelContext,
  ) {
    const index = conversationOf(viewed);
    index.readUpTo(viewed.session);
    this.context = {
      viewed,
      index,
      page,
      redactions: viewed.redactions,
      pending: new Map(),
      separators: new Map(),
    };
    this.list = el('div', { class: 'entries' });
    this.earlier = el('button', { type: 'button', class: 'earlier' });
    this.earlier.addEventListener('click', () => this.drawEarlier());
    this.scroller = el(
      'div',
      {
        class: 'conversation',
        role: 'region',
        'aria-label': 'Conversation',
        tabindex: '0',
        'data-testid': 'conversation',
      },
      this.earlier,
      this.list,
    );
    this.drawnFrom = index.entries.length;
    into.replaceChildren(this.scroller);
    this.drawEarlier();
    this.scroller.scrollTop = this.scroller.scrollHeight;
    this.scroller.addEventListener('scroll', () => {
      this.following = this.atBottom();
      if (this.scroller.scrollTop < BOTTOM_SLACK && this.drawnFrom > 0) this.drawEarlier();
    });
    // Entries can grow after they are drawn (an image decoded, a font loaded) and the view can
    // shrink (a status line above it): a reader at the bottom stays there.
    const keep = new ResizeObserver(() => {
      if (this.following) this.scroller.scrollTop = this.scroller.scrollHeight;
    });
    keep.observe(this.list);
    keep.observe(this.scroller);
    if (index.entries.length === 0) {
      this.list.append(el('p', { class: 'hint' }, 'This session has no messages yet.'));
    }
  }

  /** Draws up to a window of entries before the first drawn, keeping the reader's place. */
  private drawEarlier(): void {
    const to = this.drawnFrom;
    const from = Math.max(0, to - CONVERSATION_WINDOW);
    const fragment = document.createDocumentFragment();
    for (const entry of this.context.index.entries.slice(from, to)) {
      const element = drawEntry(entry, this.context);
      if (element !== null) fragment.append(element);
    }
    const height = this.scroller.scrollHeight;
    this.list.prepend(fragment);
    this.drawnFrom = from;
    this.scroller.scrollTop += this.scroller.scrollHeight - height;
    this.earlier.hidden = from === 0;
    this.earlier.textContent = `show earlier (${counted(from, 'entry', 'entries')} above)`;
  }

  /** Draws the entries of the events that came since, at the bottom. */
  extend(): void {
    const atBottom = this.atBottom();
    const fragment = document.createDocumentFragment();
    this.context.index.readUpTo(this.viewed.session, (seq, entries) => {
      for (const entry of entries) {
        const element = drawEntry(entry, this.context);
        if (element !== null) fragment.append(element);
      }
      this.fillAnswered(seq);
    });
    this.list.querySelector(':scope > .hint')?.remove();
    this.list.append(fragment);
    for (const [info, heading] of this.context.separators) {
      heading.textContent = visible(separatorText(info));
      if (info.endTime !== undefined) this.context.separators.delete(info);
    }
    if (atBottom) this.scroller.scrollTop = this.scroller.scrollHeight;
  }

  /** Moves the keyboard's place to the entry `by` away, drawing earlier ones at the top. */
  move(by: 1 | -1): void {
    let items = this.items();
    const first = items[0];
    if (by === -1 && first !== undefined && this.drawnFrom > 0 && this.isPlace(first)) {
      this.drawEarlier();
      items = this.items();
    }
    const next = stepFrom(items, by, this.scroller, (item) => item.hasAttribute('aria-current'));
    if (next === undefined) return;
    for (const item of this.list.querySelectorAll(':scope > [aria-current]')) {
      item.removeAttribute('aria-current');
    }
    next.setAttribute('aria-current', 'true');
    next.tabIndex = -1;
    next.focus({ preventScroll: true });
    next.scrollIntoView({ block: 'nearest' });
    this.following = this.atBottom();
  }

  /** Opens or folds the first fold of the current entry (a tool card, reasoning, a compaction). */
  open(): void {
    const place = this.list.querySelector(':scope > [aria-current]');
    const fold = place?.matches('details') === true ? place : place?.querySelector('details');
    if (fold instanceof HTMLDetailsElement) fold.open = !fold.open;
  }

  private items(): HTMLElement[] {
    return [...this.list.children].filter(
      (child): child is HTMLElement => child instanceof HTMLElement && !child.matches('.hint'),
    );
  }

  private isPlace(item: HTMLElement): boolean {
    const focused = document.activeElement;
    return item === focused || item.contains(focused) || item.hasAttribute('aria-current');
  }

  private atBottom(): boolean {
    const { scrollHeight, scrollTop, clientHeight } = this.scroller;
    return scrollHeight - scrollTop - clientHeight < BOTTOM_SLACK;
  }

  /** Puts a result that just arrived into the card of its call, when that card is drawn. */
  private fillAnswered(seq: number): void {
    const message = this.context.viewed.message(seq);
    if (message?.role !== 'tool') return;
    for (const block of message.content) {
      if (block.type !== 'tool-result') continue;
      const key = this.context.index.latestKey(block.toolCallId);
      const holder = key === undefined ? undefined : this.context.pending.get(key);
      if (key === undefined || holder === undefined) continue;
      fillResult(holder, seq, { key, callId: block.toolCallId }, this.context);
      this.context.pending.delete(key);
    }
  }
}

let current: ConversationView | undefined;

/** The conversation panel. */
export const conversationPanel: Panel = {
  name: 'conversation',
  label: 'Conversation',
  key: '4',
  keys: {
    move: (_into, by) => current?.move(by),
    open: () => current?.open(),
    help: [
      ['j / k, ↓ / ↑', 'go to the next / previous entry (earlier ones are drawn at the top)'],
      ['Enter', 'open or fold the entry’s tool card, reasoning or compaction'],
      ['Tab', 'the links and folds inside the conversation'],
    ],
  },
  render(into, viewed, context) {
    current = new ConversationView(into, viewed, context);
  },
  extend(into, viewed, _from, context) {
    if (current === undefined || current.viewed !== viewed || !into.contains(current.scroller)) {
      current = new ConversationView(into, viewed, context);
    } else current.extend();
  },
};
