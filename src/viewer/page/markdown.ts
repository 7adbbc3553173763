/**
 * Markdown from a model, rendered without ever parsing HTML: markdown-it (raw HTML off) turns the
 * text into tokens, and this walks the tokens into DOM nodes itself. Text stays text, only a
 * fixed set of tags is made, and the only attribute taken from the input is a link's `href`,
 * kept when it is http(s).
 */
import MarkdownIt, { type Token } from 'markdown-it';
import { visible } from './text.js';

const parser = new MarkdownIt({ html: false, linkify: false, typographer: false });
// An image would be a request to wherever the text points; the CSP forbids it, and the text says
// what it was instead.
parser.disable(['image']);

/** Tags a token may open; anything else (a plugin's, a future rule's) becomes a span. */
const TAGS = new Set([
  'p',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'ul',
  'ol',
  'li',
  'blockquote',
  'em',
  'strong',
  's',
  'a',
  'table',
  'thead',
  'tbody',
  'tr',
  'th',
  'td',
  'hr',
  'br',
  'code',
  'pre',
]);

/** `href` when it is an absolute http(s) URL, else `undefined` (javascript:, data:, relative...). */
export function safeHref(href: string): string | undefined {
  try {
    const url = new URL(href);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : undefined;
  } catch {
    return undefined;
  }
}

/** Draws a fenced code block from its text and its info string (the language after the fence). */
export type FenceDrawer = (code: string, info: string) => Node;

/** `source` rendered as markdown into a fragment; `fence`, when given, draws fenced code. */
export function renderMarkdown(source: string, fence?: FenceDrawer): DocumentFragment {
  const fragment = document.createDocumentFragment();
  build(parser.parse(visible(source), {}), fragment, fence);
  return fragment;
}

function build(tokens: readonly Token[], root: Node, fence?: FenceDrawer): void {
  const stack: Node[] = [root];
  const top = (): Node => stack[stack.length - 1] ?? root;
  for (const token of tokens) {
    if (token.nesting === 1) {
      const element = open(token);
      top().appendChild(element);
      stack.push(element);
    } else if (token.nesting === -1) {
      if (stack.length > 1) stack.pop();
    } else if (token.type === 'inline') {
      build(token.children ?? [], top(), fence);
    } else if ((token.type === 'fence' || token.type === 'code_block') && fence !== undefined) {
      top().appendChild(fence(token.content, token.info));
    } else if (token.type === 'text') {
      top().appendChild(document.createTextNode(token.content));
    } else if (token.type === 'code_inline') {
      const code = document.createElement('code');
      code.textContent = token.content;
      top().appendChild(code);
    } else if (token.type === 'fence' || token.type === 'code_block') {
      const pre = document.createElement('pre');
      const code = document.createElement('code');
      code.textContent = token.content;
      pre.appendChild(code);
      top().appendChild(pre);
    } else if (token.type === 'softbreak') {
      top().appendChild(document.createTextNode('\n'));
    } else if (token.type === 'hardbreak' || token.type === 'hr') {
      top().appendChild(document.createElement(token.type === 'hr' ? 'hr' : 'br'));
    } else if (token.content !== '') {
      // html_inline and html_block cannot occur with html off; anything unknown stays text.
      top().appendChild(document.createTextNode(token.content));
    }
  }
}

function open(token: Token): HTMLElement {
  const element = document.createElement(TAGS.has(token.tag) ? token.tag : 'span');
  if (token.tag === 'a') {
    const href = safeHref(String(token.attrGet('href') ?? ''));
    if (href === undefined) element.className = 'defused-link';
    else {
      element.setAttribute('href', href);
      element.setAttribute('rel', 'noopener noreferrer nofollow');
      element.setAttribute('target', '_blank');
    }
  }
  if (token.tag === 'ol') {
    const start = Number(token.attrGet('start'));
    if (Number.isSafeInteger(start)) element.setAttribute('start', String(start));
  }
  return element;
}
