/**
 * Code blocks highlighted for the conversation. highlight.js grammars, run through lowlight,
 * which returns a syntax tree rather than an HTML string: the tree is walked into `<span>`s with
 * text nodes here, so highlighting never parses markup, and a code block's text stays text.
 * A dozen grammars an agent's transcript is mostly made of; any other language is drawn plain.
 */
import type { ElementContent, RootContent } from 'hast';
import bash from 'highlight.js/lib/languages/bash';
import css from 'highlight.js/lib/languages/css';
import diff from 'highlight.js/lib/languages/diff';
import go from 'highlight.js/lib/languages/go';
import javascript from 'highlight.js/lib/languages/javascript';
import json from 'highlight.js/lib/languages/json';
import python from 'highlight.js/lib/languages/python';
import rust from 'highlight.js/lib/languages/rust';
import sql from 'highlight.js/lib/languages/sql';
import typescript from 'highlight.js/lib/languages/typescript';
import xml from 'highlight.js/lib/languages/xml';
import yaml from 'highlight.js/lib/languages/yaml';
import { createLowlight } from 'lowlight';

const lowlight = createLowlight({
  bash,
  css,
  diff,
  go,
  javascript,
  json,
  python,
  rust,
  sql,
  typescript,
  xml,
  yaml,
});

/** Longer code is drawn plain: highlighting a megabyte would hold the page for seconds. */
export const HIGHLIGHT_MAX_CHARS = 20_000;

/** A class the grammar gave a token (`hljs-keyword`); nothing else becomes a class. */
const TOKEN_CLASS = /^hljs-[a-z_-]+$/;

/** The language a fence's info string names, when a grammar for it is bundled. */
export function highlightLanguage(info: string): string | undefined {
  const name = info.trim().split(/\s+/)[0]?.toLowerCase() ?? '';
  return name !== '' && lowlight.registered(name) ? name : undefined;
}

function draw(nodes: readonly (RootContent | ElementContent)[], into: Node): void {
  for (const node of nodes) {
    if (node.type === 'text') into.appendChild(document.createTextNode(node.value));
    else if (node.type === 'element') {
      const span = document.createElement('span');
      const classes = node.properties.className;
      if (Array.isArray(classes)) {
        span.className = classes
          .filter((name): name is string => typeof name === 'string' && TOKEN_CLASS.test(name))
          .join(' ');
      }
      draw(node.children, span);
      into.appendChild(span);
    }
  }
}

/** `<pre><code>` for `code`, highlighted when `info` names a bundled language. */
export function codeBlock(code: string, info: string): HTMLElement {
  const pre = document.createElement('pre');
  pre.className = 'code';
  const element = document.createElement('code');
  pre.appendChild(element);
  const language = highlightLanguage(info);
  if (language === undefined || code.length > HIGHLIGHT_MAX_CHARS) {
    element.textContent = code;
    return pre;
  }
  element.className = 'hljs';
  element.dataset.language = language;
  draw(lowlight.highlight(language, code).children, element);
  return pre;
}
