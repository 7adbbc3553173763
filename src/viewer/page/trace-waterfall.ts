/**
 * One group of the trace drawn as a waterfall: a row per model call, tool execution or
 * compaction, its bar placed on the group's time axis (`layoutBars`), its figures after it.
 * A group of many spans draws {@link ROWS_AT_ONCE} rows and a button for the next ones.
 */
import type { CallCost } from '../../model/call-costs.js';
import { el } from './dom.js';
import { excerpt, timeText } from './text.js';
import { costOf, money, spanError, spanFigures } from './trace-figures.js';
import { formatDuration, layoutBars, rangeOf } from './trace-layout.js';
import type { TraceGroup, TraceSpan } from './trace-model.js';

/** Rows a waterfall draws before its "show more" button. */
export const ROWS_AT_ONCE = 200;

/** The seq that names a span: the event that began it. */
export function spanSeq(span: TraceSpan): number {
  return span.kind === 'call'
    ? span.stepStartSeq
    : span.kind === 'tool'
      ? span.callSeq
      : span.startSeq;
}

/** What a waterfall asks of the panel around it. */
export interface WaterfallContext {
  /** The trace's priced calls (`Trace.costs`). */
  readonly costs: ReadonlyMap<number, CallCost>;
  /** The seq of the selected span, if any. */
  readonly selected: number | undefined;
  /** Shows `span` whole; `byKey` when the keyboard chose it (its request is scrolled to). */
  readonly select: (span: TraceSpan, row: HTMLElement, byKey: boolean) => void;
  readonly sessionLink: (id: string, className: string) => HTMLElement;
  /** The button that unfolds a subagent call's own calls under its row `row`. */
  readonly childToggle?: (child: string, row: HTMLElement) => HTMLElement;
}

/** The text of a group's heading: turn, time, duration, calls, tools, cost, how it ended. */
export function groupHeading(group: TraceGroup, costs: WaterfallContext['costs']): string {
  let calls = 0;
  let tools = 0;
  let cost = 0;
  let priced = false;
  for (const span of group.spans) {
    if (span.kind === 'tool') tools++;
    else {
      if (span.kind === 'call') calls++;
      const total = costOf(span, costs)?.cost?.total;
      if (total !== undefined) {
        cost += total;
        priced = true;
      }
    }
  }
  const parts = [
    group.turn === undefined ? 'Between turns' : `Turn ${group.turn}`,
    timeText(group.start),
    formatDuration(group.end - group.start),
    calls === 1 ? '1 call' : `${calls} calls`,
    tools === 1 ? '1 tool' : `${tools} tools`,
  ];
  if (priced) parts.push(money(cost));
  if (group.turn !== undefined) parts.push(group.ended ?? 'running');
  return parts.join(' · ');
}

/** The waterfall of `group`, its first `limit` rows. */
export function drawWaterfall(
  group: TraceGroup,
  context: WaterfallContext,
  limit = ROWS_AT_ONCE,
): HTMLElement {
  const holder = el('div', { class: 'trace-waterfall', role: 'list' });
  const range = rangeOf(group.spans);
  const range0 = { start: Math.min(range.start, group.start), end: Math.max(range.end, group.end) };
  const shown = group.spans.slice(0, limit);
  const bars = layoutBars(shown, range0);
  shown.forEach((span, index) => {
    const bar = bars[index];
    if (bar !== undefined) holder.append(row(span, bar, context));
  });
  if (group.spans.length > limit) {
    const more = el(
      'button',
      { type: 'button', class: 'trace-more' },
      `show ${Math.min(ROWS_AT_ONCE, group.spans.length - limit)} more of ${group.spans.length - limit}`,
    );
    more.addEventListener('click', () =>
      holder.replaceWith(drawWaterfall(group, context, limit + ROWS_AT_ONCE)),
    );
    holder.append(more);
  }
  return holder;
}

function row(
  span: TraceSpan,
  bar: ReturnType<typeof layoutBars>[number],
  context: WaterfallContext,
): HTMLElement {
  const seq = spanSeq(span);
  const error = spanError(span);
  const cost = span.kind === 'tool' ? undefined : costOf(span, context.costs);
  const barElement = el('div', { class: 'trace-bar' });
  barElement.style.left = `${(bar.left * 100).toFixed(3)}%`;
  barElement.style.width = `${(bar.width * 100).toFixed(3)}%`;
  if (bar.duration < 0) barElement.title = 'its end was logged before its start (clock skew)';
  const element = el(
    'div',
    {
      class: `trace-row ${span.kind}${error === undefined ? '' : ' failed'}${bar.overlaps ? ' parallel' : ''}`,
      role: 'listitem',
      tabindex: '0',
      'data-seq': String(seq),
      'data-testid': `trace-${span.kind}`,
      ...(context.selected === seq ? { 'aria-current': 'true' } : {}),
    },
    el('span', { class: 'trace-label' }, labelOf(span)),
    el('div', { class: 'trace-track' }, barElement),
    el(
      'span',
      { class: 'trace-figures' },
      spanFigures(span, cost),
      error === undefined
        ? null
        : el('span', { class: 'trace-error' }, ` ✖ ${excerpt(error, 120)}`),
      span.kind === 'tool' && span.child !== undefined
        ? el(
            'span',
            { class: 'trace-child' },
            ' ↳ ',
            context.sessionLink(span.child, 'session-link'),
          )
        : null,
    ),
  );
  if (span.kind === 'tool' && span.child !== undefined && context.childToggle !== undefined) {
    element.querySelector('.trace-child')?.append(' ', context.childToggle(span.child, element));
  }
  element.addEventListener('click', (event) => {
    if ((event.target as HTMLElement).closest('a, button') === null)
      context.select(span, element, false);
  });
  element.addEventListener('keydown', (event) => {
    if (event.target === element && (event.key === 'Enter' || event.key === ' ')) {
      event.preventDefault();
      context.select(span, element, true);
    }
  });
  return element;
}

function labelOf(span: TraceSpan): string {
  if (span.kind === 'call') {
    const model = span.header === undefined ? 'model call' : excerpt(span.header.model, 40);
    return `step ${span.step} · ${model}`;
  }
  if (span.kind === 'tool') return `tool ${excerpt(span.name, 40)}`;
  return span.label;
}
