/**
 * A subagent's calls nested in the trace under the tool call that ran it. Served, unfolding the
 * call fetches the child session through the session routes (the stream's snapshot, with the
 * page's token, then the stream is closed) and draws its turns as the trace draws its own:
 * {@link CHILD_GROUPS_AT_ONCE} turns at a time, each waterfall windowed. A failure is shown in
 * place. An export carries one session only: it says so for each child.
 */
import type { CallCost } from '../../model/call-costs.js';
import { el, replaceChildren } from './dom.js';
import type { ServerSource } from './source.js';
import { ViewedSession } from './state.js';
import { counted, visible } from './text.js';
import { Trace, type TraceSpan } from './trace-model.js';
import { drawWaterfall, groupHeading, type WaterfallContext } from './trace-waterfall.js';

/** A child's turns drawn before a button for the next ones. */
export const CHILD_GROUPS_AT_ONCE = 20;

/** What nesting asks of the trace around it. */
export interface ChildCallsContext {
  /** The server, when the page is served (`undefined` in an export, which carries no child). */
  readonly server: ServerSource | undefined;
  /** Each child fetched so far, by id (unfolding again reuses it). */
  readonly loaded: Map<string, Promise<ViewedSession>>;
  readonly sessionLink: (id: string, className: string) => HTMLElement;
  /** Shows a child's span in the detail pane. */
  readonly select: (
    span: TraceSpan,
    row: HTMLElement,
    byKey: boolean,
    viewed: ViewedSession,
    costs: ReadonlyMap<number, CallCost>,
  ) => void;
}

/** The button of a subagent call's row that unfolds the child's calls under the row. */
export function childToggle(
  child: string,
  row: HTMLElement,
  context: ChildCallsContext,
): HTMLElement {
  const button = el(
    'button',
    {
      type: 'button',
      class: 'trace-unfold',
      'aria-expanded': 'false',
      'data-testid': 'trace-unfold',
    },
    '▸ its calls',
  );
  let nested: HTMLElement | undefined;
  button.addEventListener('click', () => {
    if (nested === undefined) {
      nested = drawChildCalls(child, context);
      row.after(nested);
    } else {
      nested.remove();
      nested = undefined;
    }
    button.setAttribute('aria-expanded', String(nested !== undefined));
    button.textContent = nested === undefined ? '▸ its calls' : '▾ its calls';
  });
  return button;
}

/** The child's calls, or why they are not here. */
function drawChildCalls(child: string, context: ChildCallsContext): HTMLElement {
  const holder = el('div', {
    class: 'trace-nested',
    role: 'listitem',
    'aria-label': `calls of the child session ${visible(child)}`,
    'data-testid': 'trace-nested',
  });
  const server = context.server;
  if (server === undefined) {
    holder.append(
      el('p', { class: 'hint' }, `child session ${visible(child)}: not in this export`),
    );
    return holder;
  }
  holder.append(el('p', { class: 'hint' }, `loading the child session ${visible(child)}…`));
  let loading = context.loaded.get(child);
  if (loading === undefined) {
    loading = server
      .snapshotOf(child)
      .then(({ snapshot, bytes }) => new ViewedSession(snapshot.header, snapshot.events, bytes));
    context.loaded.set(child, loading);
    // A failure is not kept: unfolding again asks again.
    loading.catch(() => context.loaded.delete(child));
  }
  loading.then(
    (viewed) => fillChild(holder, viewed, context),
    (error: unknown) =>
      replaceChildren(
        holder,
        el(
          'p',
          { class: 'trace-error', 'data-testid': 'trace-nested-error' },
          `child session ${visible(child)}: ${visible(error instanceof Error ? error.message : String(error))}`,
        ),
      ),
  );
  return holder;
}

function fillChild(holder: HTMLElement, viewed: ViewedSession, context: ChildCallsContext): void {
  const trace = new Trace();
  trace.update(viewed.session);
  const waterfall: WaterfallContext = {
    costs: trace.costs,
    selected: undefined,
    select: (span, row, byKey) => context.select(span, row, byKey, viewed, trace.costs),
    sessionLink: context.sessionLink,
    childToggle: (child, row) => childToggle(child, row, context),
  };
  replaceChildren(
    holder,
    el(
      'p',
      { class: 'trace-nested-title' },
      'child session ',
      context.sessionLink(viewed.session.header.id, 'session-link'),
      ` · ${counted(trace.groups.filter((group) => group.turn !== undefined).length, 'turn')} · ${counted(trace.calls, 'model call')}`,
    ),
  );
  if (trace.groups.length === 0) holder.append(el('p', { class: 'hint' }, 'It has no turns.'));
  const drawFrom = (from: number): void => {
    const to = Math.min(trace.groups.length, from + CHILD_GROUPS_AT_ONCE);
    for (const group of trace.groups.slice(from, to)) {
      holder.append(
        el('p', { class: 'trace-nested-turn' }, groupHeading(group, trace.costs)),
        drawWaterfall(group, waterfall),
      );
    }
    if (to < trace.groups.length) {
      const more = el(
        'button',
        { type: 'button', class: 'trace-more' },
        `show ${Math.min(CHILD_GROUPS_AT_ONCE, trace.groups.length - to)} more turns of ${trace.groups.length - to}`,
      );
      more.addEventListener('click', () => {
        more.remove();
        drawFrom(to);
      });
      holder.append(more);
    }
  };
  drawFrom(0);
}
