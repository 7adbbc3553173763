/**
 * The conversation a Claude Code transcript holds, read the way Claude Code reads it back. Its
 * `parentUuid` chain is not a faithful tree of the conversation:
 * - parallel tool calls: each content block of a response is its own `assistant` entry, and each
 *   `tool_result` entry names *its own* `tool_use` entry as parent; the chain goes on from one
 *   result (whichever finished last), so the other calls and results hang off it as leaves,
 *   though the model saw all of them;
 * - links that only the UI shows (`progress` entries) hang off the chain as leaves too;
 * - older versions wrote `parentUuid: null` on every line, where file order is the chain;
 * - an entry may name a parent the file does not hold (entries Claude Code kept elsewhere, a
 *   compaction agent's transcript continuing its parent's chain): file order links it.
 * None of these is a branch the user left. A branch is a leaf whose own part (what it does not
 * share with the active path) holds a conversation entry the active path does not take in.
 */
import { pathTo, type TreeNode, type TreePaths, treePaths } from './tree.js';

/** What the chain needs of an entry; the reader's own nodes carry more. */
export interface ChainNode extends TreeNode {
  /** Position in the file (any increasing number). */
  readonly line: number;
  /** `conversation`: carried over; `boundary`: a compaction's start; `other`: only a link. */
  readonly role: 'conversation' | 'boundary' | 'other';
  /** The entry's explicit `parentUuid` was `null` (a root, or an older version's every line). */
  readonly nullParent: boolean;
  /** The `message.id` of an assistant entry: the entries of one response share it. */
  readonly messageId: string | undefined;
  /** The ids of the `tool_use` blocks of an assistant entry. */
  readonly calls: readonly string[];
  /** The `tool_use_id`s a user entry answers; empty for an entry that answers nothing. */
  readonly answers: readonly string[];
  /** True for a user entry holding only tool results (no prompt text or image). */
  readonly resultsOnly: boolean;
}

/** The active path with the parallel results it lost put back, and the branches the user left. */
export function conversationPaths<T extends ChainNode>(nodes: readonly T[]): TreePaths<T> {
  const paths = treePaths(linked(nodes));
  // A path of the tree names no id twice: as long as `nodes`, it holds every id, and nothing is
  // off it to put back (nor is there a branch).
  if (paths.active.length === nodes.length) return { active: paths.active, branches: [] };
  const active = withSiblingResults(paths.active, nodes);
  if (paths.branches.length === 0) return { active, branches: [] };
  const taken = new Set(active.map((node) => node.id));
  const branches = paths.branches.filter(({ path }) =>
    path.some((node) => !taken.has(node.id) && node.role === 'conversation'),
  );
  return { active, branches };
}

/** The active path alone, as {@link conversationPaths} gives it, for a reader that keeps no branches. */
export function activePath<T extends ChainNode>(nodes: readonly T[]): readonly T[] {
  const chain = linked(nodes);
  const last = chain[chain.length - 1];
  if (last === undefined) return [];
  return withSiblingResults(pathTo(last, new Map(chain.map((node) => [node.id, node]))), nodes);
}

/**
 * The part of the active path after `from`, an entry of it no later entry can change, found
 * without walking the whole chain: the walk back from the last entry stops at `from`, and the
 * parallel calls and results put back come from `later` (the entries written after `from`).
 * `undefined` when the walk does not reach `from` (the path left it, or the chain is not one
 * this shortcut reads); the caller then reads the whole path.
 */
export function pathPast<T extends ChainNode>(
  from: T,
  later: readonly T[],
  byId: ReadonlyMap<string, T>,
): T[] | undefined {
  const segment: T[] = [];
  for (let at = later[later.length - 1]; at !== undefined; ) {
    if (at.id === from.id) return withSiblingResults(segment.reverse(), later);
    // An entry written before `from` is not after it on any path through it.
    if (at.line <= from.line || at.parentId === undefined) return undefined;
    segment.push(at);
    at = byId.get(at.parentId);
  }
  return later.length === 0 ? [] : undefined;
}

/** The chain as Claude Code meant it: null and dangling parents linked in file order. */
function linked<T extends ChainNode>(nodes: readonly T[]): readonly T[] {
  return linkDanglingParents(linkNullParents(nodes));
}

/**
 * Gives each entry whose `parentUuid` names no entry of the file the entry before it in the file
 * as parent (the first such entry stays a root): a missing link is not a branch the user left,
 * and file order is the order Claude Code wrote the conversation in.
 */
function linkDanglingParents<T extends ChainNode>(nodes: readonly T[]): readonly T[] {
  let ids: ReadonlySet<string> | undefined;
  // A parent that is the entry before (the usual case) is in the file without a look-up.
  const dangling = (node: T, index: number): boolean => {
    const parent = node.parentId;
    if (parent === undefined || parent === nodes[index - 1]?.id) return false;
    ids ??= new Set(nodes.map((other) => other.id));
    return !ids.has(parent);
  };
  if (!nodes.some(dangling)) return nodes;
  let previous: T | undefined;
  return nodes.map((node, index) => {
    const linked = dangling(node, index)
      ? previous === undefined
        ? { ...node, parentId: undefined }
        : { ...node, parentId: previous.id }
      : node;
    if (node.role !== 'boundary') previous = linked;
    return linked;
  });
}

/**
 * Gives each conversation entry whose `parentUuid` is `null`, other than the first, the entry
 * before it in the file as parent, when the file has no real chain at all (every conversation
 * entry a root): how older Claude Code versions wrote it.
 */
function linkNullParents<T extends ChainNode>(nodes: readonly T[]): readonly T[] {
  const conversation = nodes.filter((node) => node.role === 'conversation');
  if (conversation.length < 2 || !conversation.every((node) => node.nullParent)) return nodes;
  let previous: T | undefined;
  return nodes.map((node) => {
    const linked =
      node.role === 'conversation' && previous !== undefined
        ? { ...node, parentId: previous.id }
        : node;
    if (node.role !== 'boundary') previous = linked;
    return linked;
  });
}

/**
 * Puts back what a response's parallel calls left off the path: the `assistant` entries of a
 * response on the path (same `message.id`) that hang off it, then the tool-result entries that
 * answer calls of the path. Each goes in file order among the entries after the one it belongs
 * with, before the first entry written after it.
 */
function withSiblingResults<T extends ChainNode>(active: readonly T[], nodes: readonly T[]): T[] {
  const path = [...active];
  const onPath = new Set(active.map((node) => node.id));
  const responses = new Map<string, T>();
  for (const node of active) if (node.messageId !== undefined) responses.set(node.messageId, node);
  const insert = (node: T, anchor: number): void => {
    let at = anchor + 1;
    while (at < path.length && (path[at] as T).line < node.line) at++;
    path.splice(at, 0, node);
    onPath.add(node.id);
  };
  for (const node of nodes) {
    const response = node.messageId === undefined ? undefined : responses.get(node.messageId);
    if (response !== undefined && !onPath.has(node.id)) insert(node, path.indexOf(response));
  }
  const caller = new Map<string, T>();
  const answered = new Set<string>();
  for (const node of path) {
    for (const call of node.calls) caller.set(call, node);
    for (const answer of node.answers) answered.add(answer);
  }
  for (const node of nodes) {
    if (onPath.has(node.id) || !node.resultsOnly) continue;
    if (!node.answers.every((id) => caller.has(id) && !answered.has(id))) continue;
    insert(node, Math.max(...node.answers.map((id) => path.indexOf(caller.get(id) as T))));
    for (const id of node.answers) answered.add(id);
  }
  return path;
}
