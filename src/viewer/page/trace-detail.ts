/**
 * The trace's detail pane: the selected call, tool execution or compaction whole. For a model
 * call, its figures, the exact request it received and its recorded stream. Served, the request
 * comes from the server's `requestAt` (canonical form with its digest, or a provider's HTTP
 * body); in an export, which has no server, the page rebuilds its header and messages with core
 * (`messagesAt` of the call's step, as `requestAt` does), shows the digest palimpsest took when
 * it wrote the file, and says that the provider's body needs the CLI.
 */
import type { JsonValue } from '../../core/index.js';
import type { CallCost } from '../../model/call-costs.js';
import { type CallRequest, REQUEST_WIRES } from '../protocol.js';
import { capped, plain } from './detail.js';
import { type Child, el, replaceChildren } from './dom.js';
import { exportedDigest } from './exported-requests.js';
import type { ServerSource } from './source.js';
import type { ViewedSession } from './state.js';
import { count, excerpt, timeText } from './text.js';
import { costOf, money, tokensText } from './trace-figures.js';
import { formatDuration } from './trace-layout.js';
import type { TraceCall, TraceSpan, TraceTool } from './trace-model.js';

/** Stream parts the pane lists before a button for the rest. */
const PARTS_AT_ONCE = 300;

/** What the pane asks of the page around it. */
export interface TraceDetailContext {
  readonly sessionLink: (id: string, className: string) => HTMLElement;
  readonly reveal: (seq: number) => void;
  /** The priced calls of the span's trace (`Trace.costs`). */
  readonly costs: ReadonlyMap<number, CallCost>;
  /** The server, when the page is served (`undefined` in an export). */
  readonly server: ServerSource | undefined;
}

/** The pane for `span`. */
export function drawSpanDetail(
  span: TraceSpan,
  viewed: ViewedSession,
  context: TraceDetailContext,
): HTMLElement {
  if (span.kind === 'call') return callDetail(span, viewed, context);
  if (span.kind === 'tool') return toolDetail(span, viewed, context);
  const cost = costOf(span, context.costs);
  return el(
    'div',
    { class: 'trace-detail-body' },
    el('h3', {}, 'Compaction (a summarizer call)'),
    facts([
      ['started', timeText(span.start)],
      ['took', formatDuration(span.end - span.start)],
      ['tokens', cost === undefined ? 'not reported' : tokensText(cost)],
      ['cost', cost?.cost === undefined ? 'not priced' : money(cost.cost.total)],
      ['events', seqLink(span.startSeq, context)],
    ]),
  );
}

function callDetail(
  call: TraceCall,
  viewed: ViewedSession,
  context: TraceDetailContext,
): HTMLElement {
  const cost = costOf(call, context.costs);
  const model =
    call.header === undefined
      ? 'no request header'
      : `${call.header.provider} · ${call.header.model}`;
  const rows: [string, Child][] = [
    ['model', visibleText(model)],
    ['started', timeText(call.start)],
    ['latency', formatDuration(call.end - call.start)],
    [
      'first part after',
      call.firstPart === undefined ? 'no stream' : formatDuration(call.firstPart - call.start),
    ],
    ['tokens', cost === undefined ? 'not reported' : tokensText(cost)],
    ['cost', costText(cost)],
    ['finish', call.finishReason ?? (call.error === undefined ? 'no answer' : 'failed')],
  ];
  for (const retry of call.retries) {
    rows.push([
      `retry ${retry.attempt}`,
      `${visibleText(excerpt(retry.error, 300))} (waited ${formatDuration(retry.delayMs)})`,
    ]);
  }
  if (call.error !== undefined) rows.push(['error', visibleText(excerpt(call.error, 500))]);
  if (call.interrupted === true) rows.push(['interrupted', 'the stream was cancelled']);
  rows.push(['step', seqLink(call.stepStartSeq, context)]);
  if (call.answerSeq !== undefined) rows.push(['answer', seqLink(call.answerSeq, context)]);
  return el(
    'div',
    { class: 'trace-detail-body' },
    el('h3', {}, `Model call · turn ${call.turn} step ${call.step}`),
    facts(rows),
    el('h4', {}, 'Request'),
    requestSection(call, viewed, context),
    el(
      'h4',
      {},
      `Recorded stream (${call.parts.length === 1 ? '1 part' : `${count(call.parts.length)} parts`})`,
    ),
    streamList(call, viewed, PARTS_AT_ONCE),
  );
}

function costText(cost: ReturnType<typeof costOf>): string {
  if (cost?.cost === undefined)
    return cost === undefined ? 'no usage reported' : 'not priced (no rates for the model)';
  const { input, cacheRead, cacheWrite, output, reasoning, total } = cost.cost;
  const parts = [
    `input ${money(input)}`,
    `cache read ${money(cacheRead)}`,
    `cache write ${money(cacheWrite)}`,
    `output ${money(output)}`,
  ];
  if (reasoning > 0) parts.push(`reasoning ${money(reasoning)}`);
  const source =
    cost.price === undefined
      ? ''
      : ` (${cost.price.recorded ? 'recorded rates' : `${cost.price.table} rates`})`;
  return `${money(total)}: ${parts.join(', ')}${source}`;
}

/** The request section: served, a choice of form fetched from the server; exported, core's rebuild. */
function requestSection(
  call: TraceCall,
  viewed: ViewedSession,
  context: TraceDetailContext,
): HTMLElement {
  const section = el('div', { class: 'trace-request', 'data-testid': 'trace-request' });
  if (call.header === undefined) {
    section.append(
      el(
        'p',
        { class: 'hint' },
        'No request header was logged before this call: there is no request to rebuild.',
      ),
    );
    return section;
  }
  const server = context.server;
  if (server === undefined) {
    const messages = viewed.session.messagesAt(call.stepStartSeq);
    section.append(
      el(
        'p',
        { class: 'hint' },
        `palimpsest's canonical form only: the header and the ${messages.length === 1 ? 'message' : `${messages.length} messages`} the call received, rebuilt from the log. The provider's HTTP body needs the CLI: palimpsest request ${visibleText(viewed.session.header.id)} ${call.stepStartSeq} --wire openai`,
      ),
      el(
        'p',
        { class: 'trace-digest', 'data-testid': 'trace-digest' },
        exportedDigestText(call, viewed),
      ),
      el(
        'div',
        { 'data-testid': 'trace-request-body' },
        capped(json({ header: call.header ?? null, messages }), plain),
      ),
    );
    return section;
  }
  const body = el(
    'div',
    { 'data-testid': 'trace-request-body' },
    el('p', { class: 'hint' }, 'loading…'),
  );
  const status = el('p', { class: 'trace-digest', 'data-testid': 'trace-digest' });
  const buttons = REQUEST_WIRES.map((wire) => {
    const button = el(
      'button',
      { type: 'button', 'data-wire': wire, 'aria-pressed': 'false' },
      wire === 'palimpsest' ? 'palimpsest form' : `${wire} body`,
    );
    button.addEventListener('click', () => show(wire));
    return button;
  });
  const show = (wire: CallRequest['wire']): void => {
    for (const button of buttons)
      button.setAttribute('aria-pressed', String(button.dataset.wire === wire));
    replaceChildren(body, el('p', { class: 'hint' }, 'loading…'));
    server.request(viewed.session.header.id, call.stepStartSeq, wire).then(
      (answer) => {
        replaceChildren(body, capped(json(answer.body as JsonValue), plain));
        body.dataset.wire = wire;
        status.textContent = `digest ${answer.digest}${digestAgainst(answer.digest, answer.recordedDigest)}`;
      },
      (error: unknown) =>
        replaceChildren(body, el('p', { class: 'trace-error' }, visibleText(String(error)))),
    );
  };
  section.append(
    el('div', { class: 'trace-wires', role: 'group', 'aria-label': 'Request form' }, ...buttons),
    status,
    body,
  );
  show('palimpsest');
  return section;
}

/** The export's digest of the call's request, beside the one its writer recorded. */
function exportedDigestText(call: TraceCall, viewed: ViewedSession): string {
  const digest = exportedDigest(call.stepStartSeq);
  if (digest === undefined) return 'This file was written without request digests.';
  if (digest === 'none') return 'No digest: the call has no answer in the log.';
  const answer = call.answerSeq === undefined ? undefined : viewed.event(call.answerSeq);
  const recorded = (answer?.data as { requestDigest?: unknown } | undefined)?.requestDigest;
  return `digest ${digest}, computed when this file was written${digestAgainst(digest, recorded)}`;
}

/** How a digest compares with the one the writer recorded. */
function digestAgainst(digest: string, recorded: unknown): string {
  if (typeof recorded !== 'string') return ' (the writer recorded none)';
  return recorded === digest
    ? ', as the writer recorded it'
    : `; the writer recorded ${visibleText(recorded)}: the rebuilt request differs (palimpsest verify lists every such call)`;
}

/** The call's stream parts in order: seq, time after the call began, attempt, kind and content. */
function streamList(call: TraceCall, viewed: ViewedSession, limit: number): HTMLElement {
  const list = el('ol', { class: 'trace-stream', 'data-testid': 'trace-stream' });
  for (const seq of call.parts.slice(0, limit)) {
    const event = viewed.event(seq);
    const data = viewed.dataOf(seq) as
      | { attempt?: unknown; chunk?: { type?: unknown; delta?: unknown } }
      | undefined;
    const after = event === undefined ? '' : `+${formatDuration(event.time - call.start)}`;
    const attempt =
      typeof data?.attempt === 'number' && data.attempt > 1 ? ` attempt ${data.attempt}` : '';
    const chunk = data?.chunk;
    const content =
      data === undefined
        ? 'its body is loading'
        : typeof chunk?.delta === 'string'
          ? JSON.stringify(chunk.delta)
          : json(chunk as JsonValue);
    list.append(
      el(
        'li',
        {},
        el('span', { class: 'trace-part-seq' }, `#${seq} ${after}${attempt}`),
        ` ${visibleText(typeof chunk?.type === 'string' ? chunk.type : '?')} `,
        el('span', { class: 'trace-part' }, excerpt(content, 300)),
      ),
    );
  }
  if (call.parts.length > limit) {
    const more = el(
      'button',
      { type: 'button', class: 'trace-more' },
      `show ${count(Math.min(PARTS_AT_ONCE, call.parts.length - limit))} more`,
    );
    more.addEventListener('click', () =>
      list.replaceWith(streamList(call, viewed, limit + PARTS_AT_ONCE)),
    );
    list.append(el('li', {}, more));
  }
  return list;
}

function toolDetail(
  tool: TraceTool,
  viewed: ViewedSession,
  context: TraceDetailContext,
): HTMLElement {
  const call = viewed.event(tool.callSeq);
  const argumentsText = (call?.data as { arguments?: unknown } | undefined)?.arguments;
  const rows: [string, Child][] = [
    ['call id', visibleText(tool.callId)],
    ['started', timeText(tool.start)],
    ['took', tool.resultSeq === undefined ? 'no result' : formatDuration(tool.end - tool.start)],
  ];
  if (tool.error !== undefined) rows.push(['error', visibleText(excerpt(tool.error, 500))]);
  if (tool.child !== undefined)
    rows.push(['subagent', context.sessionLink(tool.child, 'session-link')]);
  rows.push(['call', seqLink(tool.callSeq, context)]);
  if (tool.resultSeq !== undefined) rows.push(['result', seqLink(tool.resultSeq, context)]);
  return el(
    'div',
    { class: 'trace-detail-body' },
    el('h3', {}, `Tool ${visibleText(tool.name)}`),
    facts(rows),
    el('h4', {}, 'Arguments'),
    capped(
      typeof argumentsText === 'string' ? argumentsText : json(argumentsText as JsonValue),
      plain,
    ),
  );
}

function facts(rows: readonly (readonly [string, Child])[]): HTMLElement {
  const list = el('dl', { class: 'trace-facts' });
  for (const [name, value] of rows) list.append(el('dt', {}, name), el('dd', {}, value));
  return list;
}

function seqLink(seq: number, context: TraceDetailContext): HTMLElement {
  const link = el('button', { type: 'button', class: 'seq-link' }, `#${seq} in the log`);
  link.addEventListener('click', () => context.reveal(seq));
  return link;
}

function json(value: JsonValue | undefined): string {
  return JSON.stringify(value ?? null, null, 2);
}

/** Session text with deceptive characters made visible (the pane's `plain` does the same). */
function visibleText(text: string): string {
  return excerpt(text, 10_000);
}
