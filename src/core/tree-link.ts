/**
 * How a session hangs in the tree of sessions, read from its header alone: under the session
 * whose tool call ran it as a subagent (`metadata.subagentOf`), else under the session it was
 * forked from (`parentSession`). The CLI's `ls --tree` and `show` and the viewer share it.
 */
import type { SessionHeader } from './header.js';
import type { JsonObject } from './json.js';

/** How a session hangs off another. */
export interface TreeLink {
  readonly parent: string;
  readonly link: 'subagent' | 'fork';
}

/** The session a session hangs off, from its header: its subagent parent first, else its fork parent. */
export function treeLinkOf(header: SessionHeader): TreeLink | undefined {
  const parent = subagentField(header, 'session');
  if (parent !== undefined) return { parent, link: 'subagent' };
  return header.parentSession === undefined
    ? undefined
    : { parent: header.parentSession, link: 'fork' };
}

/** A text field of the header's `metadata.subagentOf`, when it has one. */
export function subagentField(
  header: SessionHeader,
  name: 'session' | 'toolCallId',
): string | undefined {
  const link = header.metadata?.subagentOf;
  if (typeof link !== 'object' || link === null || Array.isArray(link)) return undefined;
  const value = (link as JsonObject)[name];
  return typeof value === 'string' ? value : undefined;
}
