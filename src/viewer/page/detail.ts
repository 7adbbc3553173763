/**
 * The detail pane: the selected event in full (markdown through the inert renderer, tool output
 * as text), and "why is this here?", the CLI's `why` answered by the same core function.
 */
import {
  type ContentBlock,
  estimateMessageTokens,
  REDACTED_TEXT,
  type SessionEvent,
} from '../../core/index.js';
import { eventProvenance, type ProvenanceNode } from '../../core/provenance.js';
import { type Child, el } from './dom.js';
import { renderMarkdown } from './markdown.js';
import { replacementNote } from './row-text.js';
import type { ViewedSession } from './state.js';
import { childSessionOf } from './subagents.js';
import { count, DETAIL_CHARS, seqRange, timeText, visible } from './text.js';

/** What a link in the pane asks the page to do. */
export interface DetailActions {
  /** Select event `seq` (in the current view when it has a row there, else in the raw log). */
  select(seq: number): void;
  /** Show the raw log with the runs holding `seqs` expanded. */
  showChunks(seqs: readonly number[]): void;
  /** Expand or fold the selected replacement. */
  toggle(): void;
  /** A link to another session of the store (text alone where there is no store to open). */
  session(id: string): Child;
}

/** Text longer than {@link DETAIL_CHARS}: the head and a button that shows the rest. */
export function capped(text: string, render: (text: string) => Child): Child {
  if (text.length <= DETAIL_CHARS) return render(text);
  const holder = el('div');
  const more = el(
    'button',
    { class: 'show-all', type: 'button' },
    `show all ${count(text.length)} characters`,
  );
  more.addEventListener('click', () => holder.replaceChildren(el('div', {}, render(text))));
  holder.append(el('div', {}, render(text.slice(0, DETAIL_CHARS))), more);
  return holder;
}

/** `text` as preformatted text, deceptive characters made visible. */
export function plain(text: string): Child {
  return el('pre', { class: 'plain' }, visible(text));
}

function markdown(text: string): Child {
  return el('div', { class: 'markdown' }, renderMarkdown(text));
}

function block(content: ContentBlock, role: string): Child {
  switch (content.type) {
    case 'text':
      return capped(content.text, role === 'tool' ? plain : markdown);
    case 'reasoning':
      return el('div', { class: 'reasoning' }, capped(content.text || '(redacted)', plain));
    case 'image':
      return el('div', { class: 'image' }, `[image ${visible(content.mediaType)}]`);
    case 'tool-call':
      return el(
        'div',
        { class: 'tool-call' },
        `→ ${visible(content.name)}`,
        capped(content.arguments, plain),
      );
    case 'tool-result':
      return el(
        'div',
        { class: content.isError === true ? 'tool-result error' : 'tool-result' },
        ...content.content.map((inner) => block(inner, 'tool')),
      );
  }
}

function link(text: string, onClick: () => void, testId?: string): HTMLElement {
  const element = el('button', { class: 'link', type: 'button' }, text);
  if (testId !== undefined) element.dataset.testid = testId;
  element.addEventListener('click', onClick);
  return element;
}

/** The provenance tree, runs of stream chunks collapsed into one link. */
function tree(
  viewed: ViewedSession,
  nodes: readonly ProvenanceNode[],
  actions: DetailActions,
): Child {
  if (nodes.length === 0) return el('p', {}, 'derived from nothing (an empty provider stream)');
  const chunks = nodes.filter((node) => node.type === 'assistant/chunk').map((node) => node.seq);
  const items: Child[] = [];
  if (chunks.length > 0) {
    items.push(
      el(
        'li',
        {},
        link(
          `${chunks.length} stream chunks ${seqRange(chunks)}`,
          () => actions.showChunks(chunks),
          'chunks-link',
        ),
      ),
    );
  }
  for (const node of nodes) {
    if (node.type === 'assistant/chunk') continue;
    items.push(
      el(
        'li',
        {},
        link(`#${node.seq} ${node.type}`, () => actions.select(node.seq)),
        node.derivedFrom === undefined ? null : tree(viewed, node.derivedFrom, actions),
      ),
    );
  }
  return el('ul', { class: 'tree' }, ...items);
}

/** One sentence on why the event is where it is. */
function reason(
  viewed: ViewedSession,
  event: SessionEvent,
  onSurface: boolean,
  shadowedBy: readonly number[],
): string {
  if (event.surfaceOp === undefined) return 'A log event: it never enters what the model sees.';
  const replaced = replacementNote(viewed, event.seq);
  if (replaced !== undefined) {
    return `It took the place of a range of the surface (${replaced})${onSurface ? ', and the model sees it now.' : '; a later replace removed it too.'}`;
  }
  const by = shadowedBy[0];
  if (by !== undefined) {
    const kind = viewed.event(by)?.type === 'tool/result' ? 'a prune' : 'a compaction';
    return `Appended to the surface, then removed from it by #${by} (${kind}): the model no longer sees it, the log keeps it.`;
  }
  return 'Appended to the surface, and the model still sees it.';
}

function why(viewed: ViewedSession, seq: number, actions: DetailActions): Child {
  const provenance = eventProvenance(viewed.session, seq);
  if (provenance === undefined) return null;
  const { event } = provenance;
  return el(
    'section',
    { class: 'why', 'data-testid': 'why' },
    el('h3', {}, 'Why is this here?'),
    el('p', {}, reason(viewed, event, provenance.onSurface, provenance.shadowedBy)),
    provenance.derivedFrom === undefined
      ? el('p', {}, 'It records no sources.')
      : el('div', {}, el('h4', {}, 'derived from'), tree(viewed, provenance.derivedFrom, actions)),
    provenance.shadowedBy.length === 0
      ? null
      : el(
          'p',
          {},
          'shadowed by ',
          ...provenance.shadowedBy.map((by) => link(`#${by}`, () => actions.select(by))),
        ),
    el(
      'p',
      {},
      'cited by ',
      ...(provenance.citedBy.length === 0
        ? ['(none)']
        : provenance.citedBy.map((by) => link(`#${by}`, () => actions.select(by)))),
    ),
    el('p', {}, `on the surface now: ${provenance.onSurface ? 'yes' : 'no'}`),
  );
}

/** The last `log/redaction` that erased event `seq`'s content, if one did. */
function redactionOf(
  viewed: ViewedSession,
  seq: number,
): SessionEvent<'log/redaction'> | undefined {
  const by = viewed.redactions.get(seq);
  const event = by === undefined ? undefined : viewed.event(by);
  return event?.type === 'log/redaction' ? (event as SessionEvent<'log/redaction'>) : undefined;
}

/** The pane's contents for event `seq`. */
export function detail(viewed: ViewedSession, seq: number, actions: DetailActions): Child[] {
  const event = viewed.event(seq);
  if (event === undefined) return [el('p', {}, `no event #${seq}`)];
  const message = viewed.message(seq);
  const replacement = viewed.replacements().get(seq);
  const head = el(
    'h2',
    {},
    `#${seq} ${event.type}`,
    el('span', { class: 'time' }, timeText(event.time)),
    message === null
      ? null
      : el('span', { class: 'tokens' }, `~${count(estimateMessageTokens(message))} tokens`),
  );
  const parts: Child[] = [head];
  const erasedBy = redactionOf(viewed, seq);
  if (erasedBy !== undefined) {
    parts.push(
      el(
        'p',
        { class: 'redacted', 'data-testid': 'redacted' },
        `Its content was erased (shown as ${REDACTED_TEXT}) by `,
        link(`#${erasedBy.seq}`, () => actions.select(erasedBy.seq)),
        `: ${erasedBy.data.reason}`,
      ),
    );
  }
  if (replacement !== undefined) {
    parts.push(
      el(
        'p',
        { class: 'replaces' },
        replacementNote(viewed, seq) ?? '',
        ' ',
        link('expand / fold the originals (Enter)', () => actions.toggle(), 'expand'),
      ),
    );
  }
  if (message !== null) {
    parts.push(
      el(
        'div',
        { class: 'content' },
        ...message.content.map((content) => block(content, message.role)),
      ),
    );
  } else {
    const data = viewed.dataOf(seq);
    parts.push(
      data === undefined
        ? el('p', { class: 'hint' }, 'The body of this stream chunk is loading.')
        : capped(JSON.stringify(data, null, 2) ?? '', plain),
    );
  }
  const child = childSessionOf(event);
  if (child !== undefined) {
    parts.push(
      el(
        'p',
        { class: 'child', 'data-testid': 'child-session' },
        'Ran in the subagent session ',
        actions.session(child.session),
      ),
    );
  }
  parts.push(why(viewed, seq, actions));
  return parts;
}
