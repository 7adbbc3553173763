/**
 * The subagent link as the page reads it: the child session a tool call ran in (`child` on its
 * `tool/call` and `tool/result`), and the parent a subagent's session names in its header
 * (`metadata.subagentOf`). Imported subagents carry the same link as the loop's own.
 */
import type {
  ChildSessionLink,
  JsonObject,
  SessionEvent,
  SessionHeader,
} from '../../core/index.js';

/** Where a subagent's session came from: the parent session and the call that ran it. */
export interface SubagentParent {
  readonly session: string;
  readonly toolCallId?: string;
}

/** The parent named by the header's `metadata.subagentOf`, when it names one. */
export function subagentParent(header: SessionHeader): SubagentParent | undefined {
  const link = header.metadata?.subagentOf;
  if (typeof link !== 'object' || link === null || Array.isArray(link)) return undefined;
  const { session, toolCallId } = link as JsonObject;
  if (typeof session !== 'string') return undefined;
  return { session, ...(typeof toolCallId === 'string' ? { toolCallId } : {}) };
}

/** The child session of a `tool/call` or `tool/result`, when it names one. */
export function childSessionOf(event: SessionEvent): ChildSessionLink | undefined {
  if (event.type !== 'tool/call' && event.type !== 'tool/result') return undefined;
  const child = (event.data as JsonObject | null)?.child;
  if (typeof child !== 'object' || child === null || Array.isArray(child)) return undefined;
  const { session } = child as JsonObject;
  return typeof session === 'string' ? { session } : undefined;
}
