/**
 * Subagent conversations kept inside a main Claude Code transcript. Claude Code 1.0.x wrote a
 * `Task` subagent's entries into the transcript of the session that spawned it, marked
 * `isSidechain: true` and naming no agent (no `agentId`): its conversation has no file of its own
 * (newer versions write one, `agent-<id>.jsonl`, and mark its entries with the agent's id). Each
 * subagent's entries form a chain of their own, rooted at its prompt (`parentUuid: null`), the
 * `prompt` of the call that spawned it.
 */
import type { ChildSessionLink, JsonObject } from '../core/index.js';
import type { EntryNode } from './claude-code-nodes.js';
import { objectField, objectsField, stringField } from './fields.js';

/** One subagent's conversation, from the main transcript. */
export interface Sidechain {
  /** The entry its chain starts from: the subagent's prompt. */
  readonly root: EntryNode;
  /** Its entries, in file order. */
  readonly nodes: readonly EntryNode[];
  /** The id of the call that spawned it, when a call of the main conversation has its prompt. */
  readonly toolCallId?: string;
}

/** True for an entry of a subagent's conversation that no file but this one holds. */
export function isInlineSidechain(value: JsonObject): boolean {
  return (
    value.isSidechain === true &&
    (value.type === 'user' || value.type === 'assistant') &&
    (stringField(value, 'agentId') ?? '') === ''
  );
}

/**
 * The subagents' conversations among `sidechain` (the inline sidechain entries of a transcript,
 * in file order), each with the call of `main` (the main conversation's entries) that spawned it.
 * An entry whose parent is a sidechain entry belongs to that entry's conversation; any other
 * starts one. Without a chain (every parent null), a conversation starts at each prompt: a
 * subagent is given only the one.
 */
export function sidechains(
  sidechain: readonly EntryNode[],
  main: readonly EntryNode[],
): Sidechain[] {
  const chained = sidechain.some((node) => node.parentId !== undefined);
  const groups: { root: EntryNode; nodes: EntryNode[] }[] = [];
  const groupOf = new Map<string, { root: EntryNode; nodes: EntryNode[] }>();
  for (const node of sidechain) {
    const parent = node.parentId === undefined ? undefined : groupOf.get(node.parentId);
    let group = chained ? parent : groups[groups.length - 1];
    if (group === undefined || (!chained && isPrompt(node))) {
      group = { root: node, nodes: [] };
      groups.push(group);
    }
    group.nodes.push(node);
    groupOf.set(node.id, group);
  }
  const calls = spawningCalls(main);
  const taken = new Set<string>();
  return groups.map(({ root, nodes }) => {
    const prompt = promptText(root);
    // The earliest call not yet matched with this prompt, written before the subagent's entries.
    const call = calls.find((c) => c.prompt === prompt && c.line < root.line && !taken.has(c.id));
    if (call === undefined) return { root, nodes };
    taken.add(call.id);
    return { root, nodes, toolCallId: call.id };
  });
}

/** The session id of a sidechain's import: beside the subagents newer versions file apart. */
export function sidechainSessionId(parent: string, sidechain: Sidechain): string {
  return `${parent}/subagents/sidechain-${sidechain.root.id}`;
}

/** The child session of each call that spawned a sidechain, by call id. */
export function sidechainChildren(
  parent: string,
  found: readonly Sidechain[],
): Map<string, ChildSessionLink> {
  const children = new Map<string, ChildSessionLink>();
  for (const sidechain of found) {
    if (sidechain.toolCallId === undefined) continue;
    children.set(sidechain.toolCallId, { session: sidechainSessionId(parent, sidechain) });
  }
  return children;
}

/** The `tool_use` blocks of the main conversation that hand a subagent a `prompt`. */
function spawningCalls(main: readonly EntryNode[]): { id: string; prompt: string; line: number }[] {
  const calls: { id: string; prompt: string; line: number }[] = [];
  for (const node of main) {
    if (node.entry.type !== 'assistant' || node.calls.length === 0) continue;
    for (const block of objectsField(objectField(node.entry, 'message'), 'content') ?? []) {
      const id = stringField(block, 'id');
      const prompt = stringField(objectField(block, 'input'), 'prompt');
      if (block.type === 'tool_use' && id !== undefined && prompt !== undefined) {
        calls.push({ id, prompt, line: node.line });
      }
    }
  }
  return calls;
}

function isPrompt(node: EntryNode): boolean {
  return node.entry.type === 'user' && !node.resultsOnly;
}

/** The text a user entry holds (its string content, or its text blocks joined). */
function promptText(node: EntryNode): string | undefined {
  if (node.entry.type !== 'user') return undefined;
  const content = objectField(node.entry, 'message')?.content;
  if (typeof content === 'string') return content;
  const texts = (objectsField(objectField(node.entry, 'message'), 'content') ?? [])
    .map((block) => (block.type === 'text' ? stringField(block, 'text') : undefined))
    .filter((value): value is string => value !== undefined);
  return texts.length === 0 ? undefined : texts.join('\n');
}
