/**
 * The Session view: what the session is as a whole. Its verify status (problems first, loudly),
 * its totals (tokens by kind, cost, model and tool calls, turns, duration), how full the context
 * window is, the tree of sessions it belongs to, and the diff of two branches. Live batches
 * update the totals and the context bar in O(batch); the tree and the diff stay as drawn.
 */
import { deriveEventMessage, estimateMessageTokens } from '../../core/index.js';
import type { VerifyStatus } from '../protocol.js';
import { sessionContextWindow } from './context-window.js';
import { type Child, el, replaceChildren } from './dom.js';
import type { Panel, PanelContext } from './panel.js';
import { branchSection, treeSection } from './session-branches.js';
import { sessionChecks } from './session-checks.js';
import { durationText, moneyText, SessionFigures } from './session-figures.js';
import type { ViewedSession } from './state.js';
import { count, counted, excerpt, timeText } from './text.js';

/** Problems listed before "… and N more". */
const PROBLEMS_SHOWN = 100;

/** What the panel drew, kept to apply live batches to. */
interface Drawn {
  readonly viewed: ViewedSession;
  readonly figures: SessionFigures;
  /** Core's estimate of the surface's tokens, grown by appends. */
  surfaceTokens: number;
  readonly verify: HTMLElement;
  readonly totals: HTMLElement;
  readonly window: HTMLElement;
  readonly tree: HTMLElement;
  readonly context: PanelContext;
  readonly stop: () => void;
}

let drawn: Drawn | undefined;

function surfaceTokens(viewed: ViewedSession): number {
  let tokens = 0;
  for (const message of viewed.session.deriveMessages()) tokens += estimateMessageTokens(message);
  return tokens;
}

function section(title: string, testId: string): HTMLElement {
  return el('section', { class: 'sp-section', 'data-testid': testId }, el('h2', {}, title));
}

/** Fills a section (keeping its title) with `children`. */
function fill(into: HTMLElement, ...children: Child[]): void {
  const title = into.firstElementChild;
  replaceChildren(into, title, ...children);
}

/** Label and value pairs as a definition list. */
function facts(pairs: ReadonlyArray<readonly [string, Child]>): HTMLElement {
  return el(
    'dl',
    { class: 'sp-facts' },
    ...pairs.flatMap(([label, value]) => [el('dt', {}, label), el('dd', {}, value)]),
  );
}

function drawVerify(state: Drawn): void {
  const verify = sessionChecks.verify;
  const served = sessionChecks.source !== undefined;
  const again = served
    ? el(
        'button',
        { type: 'button', class: 'sp-check' },
        verify.state === 'done' ? 'Check again' : 'Check',
      )
    : null;
  again?.addEventListener('click', () => void sessionChecks.check());
  state.verify.classList.remove('failed', 'passed');
  if (verify.state === 'pending') {
    fill(state.verify, el('p', {}, 'checking…'));
    return;
  }
  if (verify.state === 'failed') {
    const reason = `verify could not run: ${excerpt(verify.reason, 300)}`;
    fill(state.verify, el('p', {}, reason), again);
  } else if (verify.state === 'absent') {
    const why = served ? 'not checked yet' : 'This file was written without a verify result.';
    fill(state.verify, el('p', {}, why), again);
  } else {
    const status = verify.value;
    state.verify.classList.add(status.ok ? 'passed' : 'failed');
    fill(state.verify, ...verifyBody(status, state.viewed, served), again);
  }
}

function verifyBody(status: VerifyStatus, viewed: ViewedSession, served: boolean): Child[] {
  const when = served
    ? `checked ${timeText(status.checkedAt)} UTC by the server, on the stored log of ${counted(status.events, 'event')}`
    : `checked ${timeText(status.checkedAt)} UTC, when this file was written, on ${counted(status.events, 'event')}`;
  const grown = viewed.session.seq > status.events && status.events > 0;
  const shown = status.problems.slice(0, PROBLEMS_SHOWN);
  return [
    el(
      'p',
      { class: 'sp-verdict' },
      status.ok
        ? 'ok: every check of palimpsest verify passed'
        : `FAILED: ${counted(status.problems.length, 'problem')}`,
    ),
    el(
      'p',
      { class: 'sp-dim' },
      `${when} · ${status.integrity === 'checked' ? 'hash chain checked' : 'no hash chain (no checkpoint)'}`,
      grown ? ` · the log has grown to ${counted(viewed.session.seq, 'event')} since` : '',
    ),
    shown.length === 0
      ? null
      : el(
          'ul',
          { class: 'sp-problems' },
          ...shown.map((problem) => el('li', {}, excerpt(problem, 600))),
        ),
    status.problems.length > shown.length
      ? el(
          'p',
          {},
          `… and ${count(status.problems.length - shown.length)} more (palimpsest verify --json lists them all)`,
        )
      : null,
    status.notes.length === 0
      ? null
      : el(
          'ul',
          { class: 'sp-notes' },
          ...status.notes.map((note) => el('li', {}, `note: ${excerpt(note, 400)}`)),
        ),
  ];
}

function drawTotals(state: Drawn): void {
  const f = state.figures;
  const t = f.tokens;
  const unpriced = [...f.unpriced];
  const noRates = `no rates for ${unpriced.map((model) => excerpt(model, 80)).join(', ')}`;
  const inherited =
    f.inheritedCost > 0
      ? ` · ${moneyText(f.inheritedCost, f.currency)} of it in the prefix copied from the parent`
      : '';
  const cost =
    f.pricedCalls === 0
      ? 'no call reported usage'
      : f.unpricedCalls === f.pricedCalls
        ? `unknown (${noRates})`
        : `${moneyText(f.cost.total, f.currency)}${unpriced.length === 0 ? '' : ` (${noRates}: those calls are not in it)`}${inherited}`;
  const tools = [...f.tools].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  const toolCalls = tools.reduce((sum, [, n]) => sum + n, 0);
  fill(
    state.totals,
    facts([
      ['Cost', cost],
      ['Input, uncached', count(t.input)],
      ['Cache read', count(t.cacheRead)],
      ['Cache write', count(t.cacheWrite)],
      ['Output', count(t.output)],
      ['of which reasoning', count(t.reasoning)],
      [
        'Model calls',
        `${count(f.modelCalls)}${f.compactionCalls === 0 ? '' : ` (+ ${counted(f.compactionCalls, 'summarizer call')})`}`,
      ],
      ['Tool calls', count(toolCalls)],
      ['Turns', count(f.turns)],
      [
        'Duration',
        f.firstTime === undefined || f.lastTime === undefined
          ? 'no events'
          : `${durationText(f.lastTime - f.firstTime)} (${timeText(f.firstTime)} to ${timeText(f.lastTime)} UTC)`,
      ],
    ]),
    el(
      'p',
      { class: 'sp-dim' },
      'Tokens as the providers reported them; calls priced at the rates the session recorded, else at the table palimpsest ships for the day of the call.',
    ),
    tools.length === 0
      ? null
      : el(
          'table',
          { class: 'sp-tools', 'data-testid': 'tool-calls' },
          el('thead', {}, el('tr', {}, el('th', {}, 'tool'), el('th', {}, 'calls'))),
          el(
            'tbody',
            {},
            ...tools.map(([name, n]) =>
              el('tr', {}, el('td', {}, excerpt(name, 80)), el('td', {}, count(n))),
            ),
          ),
        ),
  );
}

/** A figure without a bar (the window is unknown). */
function figureLine(label: string, _share: number, testId: string): HTMLElement {
  return el('p', { 'data-testid': testId }, label);
}

/** A bar of `share` (0..1) of the window, labelled. */
function barLine(label: string, share: number, testId: string): HTMLElement {
  const fill = el('span', { class: 'sp-fill' });
  fill.style.width = `${Math.min(100, share * 100).toFixed(2)}%`;
  if (share > 0.9) fill.classList.add('full');
  return el(
    'div',
    { class: 'sp-bar-row', 'data-testid': testId },
    el('span', { class: 'sp-bar' }, fill),
    el('span', {}, label),
  );
}

function drawWindow(state: Drawn): void {
  const viewed = state.viewed;
  const header = viewed.headerAt(viewed.session.seq - 1)?.data;
  const window = sessionContextWindow(viewed);
  const last = state.figures.lastInput;
  const estimate = state.surfaceTokens;
  const windowText =
    window === undefined
      ? `unknown window${header === undefined ? '' : ` (the request header names no contextWindow setting and ${excerpt(header.model, 60)} is not in the viewer's table)`}`
      : `window ${count(window.tokens)} tokens (${window.source === 'settings' ? "the request header's settings.contextWindow" : `known window of ${excerpt(window.model, 60)}`})`;
  const share = (tokens: number) => (window === undefined ? 0 : tokens / window.tokens);
  const pct = (tokens: number) =>
    window === undefined ? '' : ` · ${(share(tokens) * 100).toFixed(1)}%`;
  // Without a window there is nothing to fill: the figures stand as text alone.
  const bar = window === undefined ? figureLine : barLine;
  fill(
    state.window,
    el('p', {}, windowText),
    last === undefined
      ? el('p', { class: 'sp-dim' }, 'No model call reported its input tokens.')
      : bar(
          `last call's input, as the provider reported it (exact): ${count(last.tokens)} tokens at #${last.seq}${pct(last.tokens)}`,
          share(last.tokens),
          'window-recorded',
        ),
    bar(
      `the surface now, core's estimate (≈4 characters a token; no system prompt or tools): ~${count(estimate)} tokens${pct(estimate)}`,
      share(estimate),
      'window-estimate',
    ),
  );
}

/** Draws the tree section again when the checks change (the tree arrived). */
function drawChecks(state: Drawn): void {
  if (!state.verify.isConnected) return;
  drawVerify(state);
  treeSection(state.tree, state.viewed, state.context, sessionChecks);
}

/** The Session view, key 6. */
export const sessionPanel: Panel = {
  name: 'session',
  label: 'Session',
  key: '6',
  // Nothing to step through: the arrows scroll it, Tab reaches its links and buttons.
  keys: {
    help: [
      ['Tab', 'the links and buttons (check again, the tree, compare branches)'],
      ['↓ / ↑', 'scroll'],
    ],
  },
  render(into, viewed, context) {
    drawn?.stop();
    const figures = new SessionFigures();
    figures.update(viewed.session);
    const diff = section('Compare branches', 'sp-diff');
    const state: Drawn = {
      viewed,
      figures,
      surfaceTokens: surfaceTokens(viewed),
      verify: section('Verify', 'sp-verify'),
      totals: section('Totals', 'sp-totals'),
      window: section('Context window', 'sp-window'),
      tree: section('Forks and subagents', 'sp-tree'),
      context,
      stop: () => {
        stopChecks();
        stopDiff();
      },
    };
    const stopChecks = sessionChecks.onChange(() => drawChecks(state));
    const stopDiff = branchSection(diff, viewed, context, sessionChecks);
    drawn = state;
    drawVerify(state);
    drawTotals(state);
    drawWindow(state);
    treeSection(state.tree, viewed, context, sessionChecks);
    replaceChildren(
      into,
      el(
        'div',
        { class: 'session-panel' },
        state.verify,
        state.totals,
        state.window,
        state.tree,
        diff,
      ),
    );
    void sessionChecks.loadTree();
  },
  extend(into, viewed, from, context) {
    const state = drawn;
    if (state === undefined || state.viewed !== viewed || !state.verify.isConnected) {
      this.render(into, viewed, context);
      return;
    }
    state.figures.update(viewed.session);
    // No replace in the batch (the page draws again after one): only appends reached the surface.
    for (let seq = from; seq < viewed.session.seq; seq++) {
      const event = viewed.session.event(seq);
      const message = event?.surfaceOp === 'append' ? deriveEventMessage(event) : null;
      if (message !== null) state.surfaceTokens += estimateMessageTokens(message);
    }
    drawTotals(state);
    drawWindow(state);
    drawVerify(state);
  },
};
