/**
 * The session among its relatives: the tree of forks and subagents it belongs to, each node a
 * link to its session when served, and the side-by-side diff of this session and a branch that
 * shares its beginning (a fork, its parent, a sibling fork), fetched from the server.
 */
import { isEventOfType, isSurfaceEligibleType, type SessionEvent } from '../../core/index.js';
import { subagentField, treeLinkOf } from '../../core/tree-link.js';
import type { SessionTreeNode } from '../protocol.js';
import { type BranchMessage, type BranchRow, diffBranches } from './branch-diff.js';
import { type Child, el, replaceChildren } from './dom.js';
import type { PanelContext } from './panel.js';
import type { SessionChecks } from './session-checks.js';
import type { ViewedSession } from './state.js';
import { count, counted, excerpt, seqRange } from './text.js';

/** Lines of the diff drawn at most, on each side of the fold. */
const DIFF_ROWS_SHOWN = 400;

/**
 * The tree as this page knows it without a store: the parent the header names, this session,
 * and the subagents its own tool calls ran. Forks of it are known only to the store.
 */
function localTree(viewed: ViewedSession): { root: SessionTreeNode; parent?: string } {
  const header = viewed.session.header;
  const children: SessionTreeNode[] = [];
  for (const event of viewed.session.events) {
    if (!isEventOfType(event, 'tool/call') || event.data.child === undefined) continue;
    children.push({
      id: event.data.child.session,
      link: 'subagent',
      createdAt: event.time,
      toolCallId: event.data.callId,
      children: [],
    });
  }
  const parent = treeLinkOf(header)?.parent;
  return {
    root: { id: header.id, link: null, createdAt: header.createdAt, children },
    ...(parent === undefined ? {} : { parent }),
  };
}

function nodeItem(node: SessionTreeNode, current: string, context: PanelContext): HTMLElement {
  const how =
    node.link === 'fork'
      ? ` fork${node.seedLength === undefined ? '' : ` at #${node.seedLength - 1}`}`
      : node.link === 'subagent'
        ? ` subagent${node.toolCallId === undefined ? '' : ` (call ${excerpt(node.toolCallId, 60)})`}`
        : '';
  const self = node.id === current;
  return el(
    'li',
    self ? { class: 'current', 'data-testid': 'tree-current' } : {},
    self ? el('strong', {}, excerpt(node.id, 200)) : context.sessionLink(node.id, 'tree-node'),
    el('span', { class: 'sp-dim' }, `${how}${self ? ' · this session' : ''}`),
    node.children.length === 0
      ? null
      : el('ul', {}, ...node.children.map((child) => nodeItem(child, current, context))),
  );
}

/** Draws the tree into `into` (its title kept): the store's when it answered, else the local one. */
export function treeSection(
  into: HTMLElement,
  viewed: ViewedSession,
  context: PanelContext,
  checks: SessionChecks,
): void {
  const title = into.firstElementChild;
  const id = viewed.session.header.id;
  const tree = checks.tree;
  const parts: Child[] = [];
  if (tree.state === 'done') {
    const { root, missingParent, omitted } = tree.value;
    if (missingParent !== undefined)
      parts.push(
        el(
          'p',
          { class: 'sp-dim' },
          `above it: ${excerpt(missingParent, 200)}, which the store no longer holds`,
        ),
      );
    parts.push(el('ul', { class: 'sp-tree' }, nodeItem(root, id, context)));
    if (omitted > 0) parts.push(el('p', {}, `… and ${counted(omitted, 'session')} more`));
    if (checks.source === undefined)
      parts.push(el('p', { class: 'sp-dim' }, 'as the store held them when this file was written'));
  } else {
    const local = localTree(viewed);
    if (local.parent !== undefined)
      parts.push(
        el(
          'p',
          {},
          'under ',
          context.sessionLink(local.parent, 'tree-node'),
          subagentField(viewed.session.header, 'session') === undefined
            ? ' (forked from it)'
            : ' (its subagent)',
        ),
      );
    parts.push(el('ul', { class: 'sp-tree' }, nodeItem(local.root, id, context)));
    parts.push(
      el(
        'p',
        { class: 'sp-dim' },
        tree.state === 'pending'
          ? 'asking the store for the whole tree…'
          : tree.state === 'failed'
            ? `the store's tree could not be had: ${excerpt(tree.reason, 200)}`
            : 'from this session alone: its forks are known only to the store (palimpsest view shows them)',
      ),
    );
  }
  replaceChildren(into, title, ...parts);
}

/** The sessions that share a beginning with this one: its fork parent, its forks, sibling forks. */
function branchCandidates(
  viewed: ViewedSession,
  context: PanelContext,
  checks: SessionChecks,
): string[] {
  const id = viewed.session.header.id;
  const found = new Set<string>();
  const parent = viewed.session.header.parentSession;
  if (parent !== undefined) found.add(parent);
  for (const child of context.children) found.add(child);
  const tree = checks.tree;
  if (tree.state === 'done') {
    const visit = (node: SessionTreeNode, up: SessionTreeNode | undefined): void => {
      if (node.id === id) {
        for (const child of node.children) if (child.link === 'fork') found.add(child.id);
        if (node.link === 'fork' && up !== undefined) {
          for (const sibling of up.children) if (sibling.link === 'fork') found.add(sibling.id);
        }
      }
      for (const child of node.children) visit(child, node);
    };
    visit(tree.value.root, undefined);
  }
  found.delete(id);
  return [...found];
}

/** One message of a branch; with `reveal`, its seq is a button that opens it in the list views. */
function messageCell(
  message: BranchMessage | undefined,
  reveal: ((seq: number) => void) | undefined,
): HTMLElement {
  if (message === undefined) return el('div', { class: 'sp-cell empty' });
  let seq: HTMLElement;
  if (reveal === undefined) seq = el('span', { class: 'seq' }, `#${message.seq}`);
  else {
    const title = 'Show it in the list views';
    seq = el('button', { type: 'button', class: 'sp-seq', title }, `#${message.seq}`);
    seq.addEventListener('click', () => reveal(message.seq));
  }
  return el(
    'div',
    { class: `sp-cell sp-role-${message.role}` },
    seq,
    el('span', { class: 'label' }, message.role),
    excerpt(message.text, 600),
  );
}

function diffRow(row: BranchRow, reveal: (seq: number) => void): HTMLElement {
  return el(
    'div',
    { class: `sp-diff-row${row.same ? ' same' : ''}`, 'data-testid': 'diff-row' },
    messageCell(row.left, reveal),
    messageCell(row.right, undefined),
  );
}

/** Draws the diff of this session (left) and `other` (right). */
function drawDiff(
  into: HTMLElement,
  viewed: ViewedSession,
  otherId: string,
  other: readonly SessionEvent[],
  context: PanelContext,
): void {
  const mine = viewed.session.events.filter((event) => isSurfaceEligibleType(event.type));
  const diff = diffBranches(mine, other);
  const prefix = diff.prefix;
  const rows = diff.rows.slice(0, DIFF_ROWS_SHOWN);
  const fold = el(
    'details',
    { class: 'sp-prefix', 'data-testid': 'diff-prefix' },
    el(
      'summary',
      {},
      prefix.length === 0
        ? 'no message in common'
        : `${counted(prefix.length, 'message')} in common (${seqRange(prefix.map((m) => m.seq))})`,
    ),
    ...prefix.slice(-DIFF_ROWS_SHOWN).map((message) => messageCell(message, context.reveal)),
  );
  replaceChildren(
    into,
    fold,
    el(
      'div',
      { class: 'sp-diff-row sp-diff-head' },
      el(
        'div',
        {},
        `this session: ${excerpt(viewed.session.header.id, 120)} (${counted(diff.rows.filter((r) => r.left !== undefined).length, 'message')} after)`,
      ),
      el(
        'div',
        {},
        `${excerpt(otherId, 120)} (${counted(diff.rows.filter((r) => r.right !== undefined).length, 'message')} after)`,
      ),
    ),
    ...rows.map((row) => diffRow(row, context.reveal)),
    diff.rows.length > rows.length
      ? el('p', {}, `… and ${count(diff.rows.length - rows.length)} more lines`)
      : null,
    diff.rows.length === 0 ? el('p', {}, 'Neither branch goes on past the common messages.') : null,
  );
}

/**
 * The "compare branches" section: a branch to pick, then the two continuations side by side.
 * Returns the removal of its listener (the candidates change when the store's tree arrives).
 */
export function branchSection(
  into: HTMLElement,
  viewed: ViewedSession,
  context: PanelContext,
  checks: SessionChecks,
): () => void {
  const source = checks.source;
  if (source === undefined) {
    into.append(
      el(
        'p',
        {},
        'The branch diff needs the served viewer (palimpsest view): this file holds one session.',
      ),
    );
    return () => undefined;
  }
  const picker = el('select', {
    'aria-label': 'Branch to compare with',
    'data-testid': 'diff-pick',
  });
  const compare = el('button', { type: 'button', 'data-testid': 'diff-compare' }, 'Compare');
  const out = el('div', { class: 'sp-diff' });
  const empty = el('span', { class: 'sp-dim', 'data-testid': 'diff-none' });
  const fillPicker = (): void => {
    const chosen = picker.value;
    const candidates = branchCandidates(viewed, context, checks);
    replaceChildren(
      picker,
      ...candidates.map((id) => el('option', { value: id }, excerpt(id, 120))),
    );
    if (candidates.includes(chosen)) picker.value = chosen;
    const none = candidates.length === 0;
    picker.hidden = none;
    compare.hidden = none;
    replaceChildren(
      empty,
      none
        ? checks.tree.state === 'pending'
          ? 'asking the store for the forks…'
          : 'No fork, fork parent or sibling fork of this session is in the store.'
        : null,
    );
  };
  fillPicker();
  const stop = checks.onChange(() => {
    if (picker.isConnected) fillPicker();
  });
  compare.addEventListener('click', () => {
    const otherId = picker.value;
    if (otherId === '') return;
    replaceChildren(out, el('p', {}, 'loading…'));
    source.about(otherId, 'messages').then(
      (answer) => drawDiff(out, viewed, otherId, answer.events, context),
      (error: unknown) =>
        replaceChildren(
          out,
          el('p', {}, `the other branch could not be had: ${excerpt(String(error), 300)}`),
        ),
    );
  });
  into.append(
    el(
      'p',
      { class: 'sp-dim' },
      'A fork, its parent or a sibling fork: the messages both begin with are folded, then each goes on in its own column, a message both hold facing its twin.',
    ),
    el('div', { class: 'sp-diff-pick' }, picker, compare, empty),
    out,
  );
  return stop;
}
