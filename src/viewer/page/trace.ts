/**
 * The Trace panel (key 5): per turn, the model calls and tool executions on a time axis, and
 * beside them the selected one whole (its exact request, its recorded stream). The trace is
 * read from the log once and continued by each live batch; only the groups a batch touched are
 * drawn again. Turns are listed {@link GROUPS_AT_ONCE} at a time, and a turn's waterfall is
 * drawn when it is opened (all of them at first when the session is small).
 */
import type { CallCost } from '../../model/call-costs.js';
import { el, replaceChildren } from './dom.js';
import { stepFrom } from './keys.js';
import type { Panel, PanelContext } from './panel.js';
import { ServerSource } from './source.js';
import type { ViewedSession } from './state.js';
import { counted } from './text.js';
import { childToggle } from './trace-children.js';
import { drawSpanDetail } from './trace-detail.js';
import { money } from './trace-figures.js';
import { Trace, type TraceGroup, type TraceSpan } from './trace-model.js';
import { drawWaterfall, groupHeading, spanSeq, type WaterfallContext } from './trace-waterfall.js';

/** Turns listed before a button for the next ones. */
const GROUPS_AT_ONCE = 100;
/** Up to this many spans in all, every turn opens on the first draw; above it, the last one. */
const OPEN_ALL_SPANS = 2_500;

/** What the panel keeps for one viewed session. */
interface TraceState {
  readonly trace: Trace;
  /** Groups listed (the rest behind the "more" button). */
  shown: number;
  /** Indexes of the open groups. */
  readonly open: Set<number>;
  /** The selected span's seq. */
  selected: number | undefined;
  /** The element of each listed group, by index. */
  readonly groups: HTMLElement[];
  /** The subagent sessions fetched to nest their calls, by id. */
  readonly children: Map<string, Promise<ViewedSession>>;
}

const states = new WeakMap<ViewedSession, TraceState>();

function stateOf(viewed: ViewedSession): TraceState {
  let state = states.get(viewed);
  if (state === undefined) {
    const trace = new Trace();
    trace.update(viewed.session);
    const spans = trace.groups.reduce((sum, group) => sum + group.spans.length, 0);
    const open = new Set<number>();
    if (spans <= OPEN_ALL_SPANS) {
      for (let index = 0; index < trace.groups.length; index++) open.add(index);
    } else if (trace.groups.length > 0) open.add(trace.groups.length - 1);
    state = {
      trace,
      shown: GROUPS_AT_ONCE,
      open,
      selected: undefined,
      groups: [],
      children: new Map(),
    };
    states.set(viewed, state);
  }
  return state;
}

/** The trace panel. */
export const tracePanel: Panel = {
  name: 'trace',
  label: 'Trace',
  key: '5',
  keys: {
    move(into, by) {
      const rows = [...into.querySelectorAll<HTMLElement>('.trace-row')];
      const scroller = into.querySelector<HTMLElement>('.trace-main') ?? into;
      const next = stepFrom(rows, by, scroller, (row) => row.hasAttribute('aria-current'));
      next?.focus({ preventScroll: true });
      next?.scrollIntoView({ block: 'nearest' });
    },
    open(into) {
      const row = placeOf(into);
      if (row === undefined) return;
      row.focus({ preventScroll: true });
      row.click();
      into.querySelector('.trace-request')?.scrollIntoView({ block: 'nearest' });
    },
    help: [
      ['j / k, ↓ / ↑', 'go to the next / previous call, tool or compaction'],
      ['Enter', 'show it whole: a call’s exact request and its recorded stream'],
      ['Tab', 'the turns (Enter opens or folds one) and the rows'],
    ],
  },
  render(into, viewed, context) {
    const state = stateOf(viewed);
    state.trace.update(viewed.session);
    state.groups.length = 0;
    const list = el('div', { class: 'trace-groups' });
    const detail = el(
      'aside',
      { class: 'trace-detail', 'data-testid': 'trace-detail', 'aria-label': 'Selected call' },
      el(
        'p',
        { class: 'hint' },
        'Select a call or a tool to see it whole: its request and its stream.',
      ),
    );
    replaceChildren(
      into,
      el(
        'div',
        { class: 'trace' },
        el('div', { class: 'trace-main' }, el('p', { class: 'trace-summary' }), list),
        detail,
      ),
    );
    fillList(list, viewed, state, context);
    summarize(into, state);
  },
  extend(into, viewed, _from, context) {
    const state = stateOf(viewed);
    const changed = state.trace.update(viewed.session);
    const list = into.querySelector<HTMLElement>('.trace-groups');
    if (list === null) return;
    const groups = state.trace.groups;
    for (let index = changed; index < Math.min(groups.length, state.shown); index++) {
      const group = groups[index] as TraceGroup;
      const drawn = drawGroup(group, index, viewed, state, context);
      const old = state.groups[index];
      if (old === undefined) list.insertBefore(drawn, list.querySelector('.trace-more-turns'));
      else old.replaceWith(drawn);
      state.groups[index] = drawn;
    }
    summarize(into, state);
  },
};

function summarize(into: HTMLElement, state: TraceState): void {
  const { trace } = state;
  const tools = trace.groups.reduce(
    (sum, group) => sum + group.spans.filter((span) => span.kind === 'tool').length,
    0,
  );
  const summary = into.querySelector('.trace-summary');
  if (summary !== null) {
    const cost = trace.pricedCalls === 0 ? '' : ` · ${money(trace.cost)}`;
    summary.textContent = `${counted(trace.groups.filter((g) => g.turn !== undefined).length, 'turn')} · ${counted(trace.calls, 'model call')} · ${counted(tools, 'tool execution')}${cost}`;
  }
}

function fillList(
  list: HTMLElement,
  viewed: ViewedSession,
  state: TraceState,
  context: PanelContext,
): void {
  const groups = state.trace.groups;
  if (groups.length === 0) {
    list.append(el('p', { class: 'hint' }, 'This session has no turns yet.'));
    return;
  }
  for (let index = state.groups.length; index < Math.min(groups.length, state.shown); index++) {
    const drawn = drawGroup(groups[index] as TraceGroup, index, viewed, state, context);
    state.groups[index] = drawn;
    list.append(drawn);
  }
  list.querySelector('.trace-more-turns')?.remove();
  if (groups.length > state.shown) {
    const more = el(
      'button',
      { type: 'button', class: 'trace-more trace-more-turns' },
      `show ${Math.min(GROUPS_AT_ONCE, groups.length - state.shown)} more turns of ${groups.length - state.shown}`,
    );
    more.addEventListener('click', () => {
      state.shown += GROUPS_AT_ONCE;
      fillList(list, viewed, state, context);
    });
    list.append(more);
  }
}

function drawGroup(
  group: TraceGroup,
  index: number,
  viewed: ViewedSession,
  state: TraceState,
  context: PanelContext,
): HTMLElement {
  const waterfall: WaterfallContext = {
    costs: state.trace.costs,
    selected: state.selected,
    select: (span, row, byKey) =>
      select(span, row, byKey, viewed, state.trace.costs, state, context),
    sessionLink: context.sessionLink,
    childToggle: (child, row) =>
      childToggle(child, row, {
        server: serverOf(context),
        loaded: state.children,
        sessionLink: context.sessionLink,
        select: (span, nestedRow, byKey, childViewed, costs) =>
          select(span, nestedRow, byKey, childViewed, costs, state, context, false),
      }),
  };
  const open = state.open.has(index);
  const heading = el(
    'button',
    { type: 'button', class: 'trace-turn', 'aria-expanded': String(open) },
    groupHeading(group, state.trace.costs),
  );
  const section = el(
    'section',
    {
      class: `trace-group${group.ended?.startsWith('error') === true ? ' failed' : ''}`,
      'data-testid': 'trace-group',
    },
    heading,
    open ? drawWaterfall(group, waterfall) : null,
  );
  heading.addEventListener('click', () => {
    if (state.open.has(index)) state.open.delete(index);
    else state.open.add(index);
    const drawn = drawGroup(group, index, viewed, state, context);
    state.groups[index] = drawn;
    section.replaceWith(drawn);
    drawn.querySelector<HTMLElement>('.trace-turn')?.focus();
  });
  return section;
}

function select(
  span: TraceSpan,
  row: HTMLElement,
  byKey: boolean,
  viewed: ViewedSession,
  costs: ReadonlyMap<number, CallCost>,
  state: TraceState,
  context: PanelContext,
  own = true,
): void {
  // A child's span (nested under a subagent call) has a seq of its child's log.
  state.selected = own ? spanSeq(span) : undefined;
  const panel = row.closest('.trace');
  for (const other of panel?.querySelectorAll('.trace-row[aria-current]') ?? []) {
    other.removeAttribute('aria-current');
  }
  row.setAttribute('aria-current', 'true');
  const detail = panel?.querySelector<HTMLElement>('.trace-detail');
  if (detail === null || detail === undefined) return;
  replaceChildren(
    detail,
    drawSpanDetail(span, viewed, {
      sessionLink: context.sessionLink,
      reveal: own ? context.reveal : revealIn(viewed.session.header.id, context),
      server: serverOf(context),
      costs,
    }),
  );
  if (byKey) detail.querySelector('.trace-request')?.scrollIntoView({ block: 'nearest' });
}

/** A child's event opens in the child's own page, selected (an export has no child to open). */
function revealIn(id: string, context: PanelContext): (seq: number) => void {
  const linker = context.linker;
  return (seq) => {
    if (linker !== undefined) location.hash = `${linker(id)}?seq=${seq}`;
  };
}

/** The server: the link maker exists only where the page is served, an export has none to ask. */
function serverOf(context: PanelContext): ServerSource | undefined {
  return context.linker === undefined ? undefined : new ServerSource();
}

/** The row the keyboard is on: the focused one, else the selected one. */
function placeOf(into: HTMLElement): HTMLElement | undefined {
  const focused = document.activeElement;
  if (focused instanceof HTMLElement && focused.matches('.trace-row') && into.contains(focused))
    return focused;
  return into.querySelector<HTMLElement>('.trace-row[aria-current]') ?? undefined;
}
