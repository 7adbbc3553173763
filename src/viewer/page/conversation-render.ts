/**
 * The conversation's entries drawn as DOM: messages as blocks by role, assistant text as inert
 * markdown with highlighted code, a tool call as one card holding its arguments and its result,
 * reasoning folded, images from inline data, a compaction or prune where it happened with its
 * originals one click away, turn separators, and the end of a cut turn. Every string from the
 * session reaches the page as a text node (through `el` or the markdown walker).
 */
import {
  type ContentBlock,
  type ImageBlock,
  REDACTED_TEXT,
  type ToolCallBlock,
  type TurnEndReason,
} from '../../core/index.js';
import { codeBlock } from './conversation-code.js';
import {
  argumentsText,
  type ConversationEntry,
  type ConversationIndex,
  callKey,
  cutText,
  imageSource,
  separatorText,
  speaker,
  type TurnInfo,
} from './conversation-model.js';
import { append, type Child, el } from './dom.js';
import { renderMarkdown } from './markdown.js';
import type { PanelContext } from './panel.js';
import { replacementNote } from './row-text.js';
import type { ViewedSession } from './state.js';
import { childSessionOf } from './subagents.js';
import { count, DETAIL_CHARS, excerpt, seqRange, timeText, visible } from './text.js';

/** A tool card opens by itself when its arguments and result together are shorter than this. */
export const CARD_OPEN_CHARS = 600;

/** Originals a rewrite lists in place; the rest are one link to the log away. */
const ORIGINALS_SHOWN = 20;

/** What drawing needs besides the entry: the session, its index, the page, and its redactions. */
export interface DrawContext {
  readonly viewed: ViewedSession;
  readonly index: ConversationIndex;
  readonly page: PanelContext;
  /** Erased seq → the `log/redaction` that erased it. */
  readonly redactions: ReadonlyMap<number, number>;
  /** Result holders of cards still waiting for their result, by call key. */
  readonly pending: Map<string, HTMLElement>;
  /** Separators of turns still open, to say their end when it comes. */
  readonly separators: Map<TurnInfo, HTMLElement>;
}

/** Text that may be huge: the first {@link DETAIL_CHARS} characters and a button for the rest. */
function capped(text: string, draw: (text: string) => Child): Child {
  if (text.length <= DETAIL_CHARS) return draw(text);
  const holder = el('div', {}, draw(text.slice(0, DETAIL_CHARS)));
  const more = el(
    'button',
    { type: 'button', class: 'show-all' },
    `show all ${count(text.length)} characters`,
  );
  more.addEventListener('click', () => holder.replaceChildren(el('div', {}, draw(text))));
  holder.append(more);
  return holder;
}

function plain(text: string): Child {
  return el('pre', { class: 'plain' }, visible(text));
}

function markdown(text: string): Child {
  return el('div', { class: 'markdown' }, renderMarkdown(text, codeBlock));
}

function image(block: ImageBlock, seq: number): Child {
  const source = imageSource(block);
  if (source === undefined) {
    return el('p', { class: 'image-named' }, `[image ${visible(block.mediaType)}, not drawn]`);
  }
  return el('img', {
    class: 'image',
    src: source,
    alt: `image (${visible(block.mediaType)}) #${seq}`,
  });
}

function button(text: string, onClick: () => void, label?: string): HTMLElement {
  const element = el('button', { type: 'button', class: 'link' }, text);
  if (label !== undefined) element.setAttribute('aria-label', label);
  element.addEventListener('click', onClick);
  return element;
}

/** The words of a tool result's blocks, for its card. */
function resultBody(seq: number, context: DrawContext, callId: string): Child[] {
  const message = context.viewed.message(seq);
  const parts: Child[] = [];
  for (const block of message?.content ?? []) {
    if (block.type !== 'tool-result' || block.toolCallId !== callId) continue;
    parts.push(
      el(
        'div',
        { class: block.isError === true ? 'result error' : 'result' },
        el('span', { class: 'card-label' }, block.isError === true ? 'error' : 'result'),
        ...block.content.map((inner) =>
          inner.type === 'text' ? capped(inner.text, plain) : image(inner, seq),
        ),
      ),
    );
  }
  return parts;
}

function resultLength(seq: number | undefined, context: DrawContext): number {
  if (seq === undefined) return 0;
  let length = 0;
  for (const block of context.viewed.message(seq)?.content ?? []) {
    if (block.type !== 'tool-result') continue;
    for (const inner of block.content) length += inner.type === 'text' ? inner.text.length : 100;
  }
  return length;
}

/** The child session a call ran in, from its `tool/call` or result event. */
function childOf(key: string, context: DrawContext): string | undefined {
  const place = context.index.calls.get(key);
  for (const seq of [place?.callSeq, place?.resultSeq]) {
    const event = seq === undefined ? undefined : context.viewed.event(seq);
    const child = event === undefined ? undefined : childSessionOf(event);
    if (child !== undefined) return child.session;
  }
  return undefined;
}

/** Fills the result holder of the card of call `key` (call id `callId`) with message `seq`. */
export function fillResult(
  holder: HTMLElement,
  seq: number,
  call: { readonly key: string; readonly callId: string },
  context: DrawContext,
): void {
  holder.replaceChildren();
  append(holder, resultBody(seq, context, call.callId));
  holder.classList.remove('waiting');
  const child = childOf(call.key, context);
  const card = holder.closest('.tool-card');
  if (child !== undefined && card !== null && card.querySelector('.child') === null) {
    holder.before(subagentLine(child, context));
  }
}

function subagentLine(child: string, context: DrawContext): HTMLElement {
  return el(
    'p',
    { class: 'child', 'data-testid': 'conversation-child' },
    'ran in the subagent session ',
    context.page.sessionLink(child, 'child-session'),
  );
}

/** A tool call and its result as one card, open when short. */
function toolCard(block: ToolCallBlock, seq: number, context: DrawContext): HTMLElement {
  const key = callKey(seq, block.id);
  const place = context.index.calls.get(key);
  const resultSeq = place?.resultSeq;
  const result = el('div', { class: 'card-result' });
  if (resultSeq === undefined) {
    result.classList.add('waiting');
    result.append(el('p', { class: 'hint' }, 'no result in the log yet'));
    context.pending.set(key, result);
  } else {
    append(result, resultBody(resultSeq, context, block.id));
  }
  const args = argumentsText(block.arguments);
  const error = resultSeq !== undefined && isErrorResult(resultSeq, block.id, context);
  const card = el(
    'details',
    { class: error ? 'tool-card error' : 'tool-card', 'data-seq': String(seq) },
    el(
      'summary',
      {},
      el('span', { class: 'tool-name' }, `→ ${visible(block.name)}`),
      el('span', { class: 'tool-args' }, excerpt(block.arguments, 120)),
    ),
    el(
      'div',
      { class: 'card-args' },
      el('span', { class: 'card-label' }, 'arguments'),
      capped(args, plain),
    ),
  );
  const child = childOf(key, context);
  if (child !== undefined) {
    // Said on the folded card too: the link itself is inside.
    card.querySelector('summary')?.append(el('span', { class: 'tool-subagent' }, 'ran a subagent'));
    card.append(subagentLine(child, context));
  }
  card.append(result);
  if (args.length + resultLength(resultSeq, context) < CARD_OPEN_CHARS) card.open = true;
  return card;
}

function isErrorResult(seq: number, callId: string, context: DrawContext): boolean {
  return (context.viewed.message(seq)?.content ?? []).some(
    (block) =>
      block.type === 'tool-result' && block.toolCallId === callId && block.isError === true,
  );
}

function content(block: ContentBlock, role: string, seq: number, context: DrawContext): Child {
  switch (block.type) {
    case 'text':
      return capped(block.text, role === 'tool' ? plain : markdown);
    case 'reasoning':
      return el(
        'details',
        { class: 'thinking' },
        el('summary', {}, `reasoning (${count(block.text.length)} characters)`),
        capped(block.text || '(redacted by the provider)', plain),
      );
    case 'image':
      return image(block, seq);
    case 'tool-call':
      return toolCard(block, seq, context);
    case 'tool-result':
      return el(
        'div',
        { class: block.isError === true ? 'result error' : 'result' },
        el('span', { class: 'card-label' }, `result of call ${visible(block.toolCallId)}`),
        ...block.content.map((inner) => content(inner, 'tool', seq, context)),
      );
  }
}

function messageBlock(seq: number, context: DrawContext): HTMLElement | null {
  const event = context.viewed.event(seq);
  const message = context.viewed.message(seq);
  if (event === undefined || message === null) return null;
  const who = speaker(event, message.role, 'source' in message ? message.source?.kind : undefined);
  const erasedBy = context.redactions.get(seq);
  const interrupted =
    event.type === 'assistant/message' &&
    (event.data as { interrupted?: unknown }).interrupted === true;
  const reveal = button(`#${seq}`, () => context.page.reveal(seq), `show event ${seq} in the log`);
  return el(
    'article',
    {
      class: `message from-${who.replace(' ', '-')}${erasedBy === undefined ? '' : ' redacted'}`,
      'data-seq': String(seq),
    },
    el(
      'header',
      {},
      el('span', { class: 'speaker' }, who),
      reveal,
      el('time', {}, timeText(event.time)),
    ),
    erasedBy === undefined
      ? null
      : el(
          'p',
          { class: 'erased', 'data-testid': 'conversation-redacted' },
          `content erased (shown as ${REDACTED_TEXT}) by #${erasedBy}`,
        ),
    ...message.content.map((block) => content(block, message.role, seq, context)),
    interrupted
      ? el('p', { class: 'cut' }, 'The stream was cancelled here: this answer is cut.')
      : null,
  );
}

/** Whether message `seq` is a tool result that its call's card shows. */
function inCard(seq: number, context: DrawContext): boolean {
  const message = context.viewed.message(seq);
  if (message?.role !== 'tool') return false;
  return message.content.every((block) => {
    if (block.type !== 'tool-result') return false;
    const key = context.index.latestKey(block.toolCallId);
    return key !== undefined && context.index.calls.get(key)?.resultSeq === seq;
  });
}

/** A compaction or prune where it happened: what it says, and its originals on demand. */
function rewriteBlock(seq: number, context: DrawContext): HTMLElement {
  const { viewed } = context;
  const prune = viewed.event(seq)?.type === 'tool/result';
  const note = replacementNote(viewed, seq) ?? '';
  const body = el('div', { class: 'rewrite-body' });
  const details = el(
    'details',
    { class: prune ? 'rewrite prune' : 'rewrite compaction', 'data-seq': String(seq) },
    el('summary', {}, `${prune ? 'Pruned' : 'Compacted'} at #${seq}: ${note}`),
    body,
  );
  // The originals are drawn when the reader opens it: a compaction may shadow thousands.
  details.addEventListener('toggle', () => {
    if (!details.open || body.childElementCount > 0) return;
    const message = viewed.message(seq);
    const originals = [...(viewed.replacements().get(seq)?.shadowedSeqs ?? [])].sort(
      (a, b) => a - b,
    );
    append(body, [
      el(
        'p',
        { class: 'card-label' },
        prune ? 'what the model sees instead' : 'the summary the model sees',
      ),
      ...(message?.content ?? []).map((block) =>
        content(block, prune ? 'tool' : 'user', seq, context),
      ),
      el('p', { class: 'card-label' }, `the originals, ${seqRange(originals)}`),
      ...originals
        .slice(0, ORIGINALS_SHOWN)
        .filter((original) => !inCard(original, context))
        .map((original) => messageBlock(original, context)),
      originals.length > ORIGINALS_SHOWN
        ? button(
            `${count(originals.length - ORIGINALS_SHOWN)} more: open #${originals[ORIGINALS_SHOWN]} in the log`,
            () => context.page.reveal(originals[ORIGINALS_SHOWN] as number),
          )
        : null,
    ]);
  });
  return details;
}

function cutBlock(seq: number, context: DrawContext): HTMLElement {
  const reason = (context.viewed.event(seq)?.data as { reason?: TurnEndReason } | undefined)
    ?.reason;
  return el(
    'p',
    { class: 'cut', 'data-seq': String(seq), 'data-testid': 'turn-cut' },
    reason === undefined ? 'The turn ended.' : visible(cutText(reason)),
  );
}

/** The element for one entry. */
export function drawEntry(entry: ConversationEntry, context: DrawContext): HTMLElement | null {
  switch (entry.kind) {
    case 'turn': {
      const heading = el(
        'h2',
        { class: 'turn-sep', 'data-seq': String(entry.info.startSeq) },
        visible(separatorText(entry.info)),
      );
      if (entry.info.endTime === undefined) context.separators.set(entry.info, heading);
      return heading;
    }
    case 'message':
      return messageBlock(entry.seq, context);
    case 'rewrite':
      return rewriteBlock(entry.seq, context);
    case 'cut':
      return cutBlock(entry.seq, context);
  }
}
