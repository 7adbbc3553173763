/**
 * The keyboard's help and the moves the panels share. The controller (`app.ts`) dispatches each
 * key to the view on screen; this module says what the keys are, per view, and moves the
 * keyboard's place through a panel's items.
 */
import { byId, el } from './dom.js';
import type { Panel } from './panel.js';

/** A key and what it does, as the help lists it. */
export type KeyHelp = readonly (readonly [string, string])[];

/** The list views' keys (model view, transcript, raw log). */
const LIST_KEYS: KeyHelp = [
  ['j / k, ↓ / ↑', 'select the next / previous row'],
  ['Enter', 'unfold or fold the selected row'],
  ['/ or f', 'find in this view (Enter jumps to the next match)'],
  ['t', 'time travel: type a seq, Enter'],
];

/** Keys that work in every view. */
function globalKeys(panels: readonly Panel[], sessionList: boolean): KeyHelp {
  return [
    ...(sessionList
      ? ([
          ['s', 'search sessions'],
          ['/', 'search sessions, over the conversation, trace and session views'],
        ] as const)
      : []),
    ['1 2 3', 'model view, transcript, raw log'],
    [panels.map((panel) => panel.key).join(' '), panels.map((panel) => panel.label).join(', ')],
    ['?', 'show or hide these keys'],
    ['Escape', 'leave the input you are in, close this help'],
  ];
}

/** Where focus was when the key help opened, to give it back when it closes. */
const returnFocus = new WeakMap<HTMLElement, HTMLElement | null>();

/**
 * Shows the keys of the view on screen (a panel's, else the list views') and those of every
 * view, or hides them when shown; focus goes to the help and back where it was.
 */
export function toggleKeyHelp(
  panel: Panel | undefined,
  panels: readonly Panel[],
  sessionList: boolean,
): void {
  const shown = document.getElementById('key-help');
  if (shown !== null) {
    closeKeyHelp();
    return;
  }
  const viewKeys = panel === undefined ? LIST_KEYS : (panel.keys?.help ?? []);
  const table = (caption: string, keys: KeyHelp): HTMLElement =>
    el(
      'table',
      {},
      el('caption', {}, caption),
      ...keys.map(([key, does]) =>
        el('tr', {}, el('th', { scope: 'row' }, key), el('td', {}, does)),
      ),
    );
  const back = document.activeElement instanceof HTMLElement ? document.activeElement : null;
  const help = el(
    'section',
    {
      id: 'key-help',
      role: 'dialog',
      'aria-label': 'Keyboard',
      tabindex: '-1',
      'data-testid': 'key-help',
    },
    el('h2', { class: 'key-help-title' }, 'Keyboard'),
    table(
      panel === undefined ? 'In the list views' : `In the ${panel.label.toLowerCase()}`,
      viewKeys.length === 0 ? [['', 'no keys of its own: Tab moves through it']] : viewKeys,
    ),
    table('Everywhere', globalKeys(panels, sessionList)),
  );
  returnFocus.set(help, back);
  byId('tabs').after(help);
  help.focus();
}

/** Hides the key help if it shows; returns whether it did. */
export function closeKeyHelp(): boolean {
  const help = document.getElementById('key-help');
  if (help === null) return false;
  const back = returnFocus.get(help);
  help.remove();
  back?.focus();
  return true;
}

/** Focuses the session list's search, unfolding the list where it is folded (narrow screens). */
export function focusSessionSearch(): void {
  if (!document.body.classList.contains('sidebar-open')) {
    document.body.classList.add('sidebar-open');
    byId('sidebar-toggle').setAttribute('aria-expanded', 'true');
  }
  const search = byId<HTMLInputElement>('session-search');
  search.focus();
  search.select();
}

/**
 * The item `by` away from the current one among `items`: the focused one, else the one marked
 * current; with neither, the first item in sight going down or the last going up.
 */
export function stepFrom(
  items: readonly HTMLElement[],
  by: 1 | -1,
  scroller: HTMLElement,
  isCurrent: (item: HTMLElement) => boolean,
): HTMLElement | undefined {
  const focused = document.activeElement;
  let index = items.findIndex((item) => item === focused || item.contains(focused));
  if (index < 0) index = items.findIndex(isCurrent);
  if (index >= 0) return items[Math.min(items.length - 1, Math.max(0, index + by))];
  const box = scroller.getBoundingClientRect();
  const inSight = items.filter((item) => {
    const rect = item.getBoundingClientRect();
    return rect.bottom > box.top && rect.top < box.bottom;
  });
  return by === 1 ? (inSight[0] ?? items[0]) : (inSight.at(-1) ?? items.at(-1));
}
