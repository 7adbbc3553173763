/**
 * The one way the page builds DOM: elements with fixed attributes and text children. Session
 * content only ever becomes a text node, so no string from a log is parsed as markup.
 */

/** A child of {@link el}: an element, or text (set as a text node, never parsed). */
export type Child = Node | string | null | undefined | false;

/** Creates `<tag class=…>` with `attributes` and `children`. */
export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Readonly<Record<string, string>> = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, value);
  append(element, children);
  return element;
}

/** Appends `children` to `parent`, strings as text nodes. */
export function append(parent: Node, children: readonly Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(typeof child === 'string' ? document.createTextNode(child) : child);
  }
}

/** Replaces everything inside `parent` with `children`. */
export function replaceChildren(parent: Element, ...children: Child[]): void {
  parent.replaceChildren();
  append(parent, children);
}

/** The element with `id`, which the page's own markup always has. */
export function byId<T extends HTMLElement>(id: string): T {
  const found = document.getElementById(id);
  if (found === null) throw new Error(`the page has no #${id}`);
  return found as T;
}
