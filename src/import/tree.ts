/**
 * Conversation trees (Claude Code's `uuid`/`parentUuid`, pi's `id`/`parentId`) as paths from the
 * root: the active path, ending at the file's last entry (where the harness resumes), and one path
 * per other leaf, each a branch the user left.
 */

/** One entry of a tree: its id, its parent's id, and its position in the file. */
export interface TreeNode {
  readonly id: string;
  readonly parentId: string | undefined;
}

/** The paths of a tree, root first. */
export interface TreePaths<T extends TreeNode> {
  /** The path to the last entry of the file. */
  readonly active: readonly T[];
  /** The path to every other leaf, in file order of the leaves. */
  readonly branches: readonly { readonly leaf: T; readonly path: readonly T[] }[];
}

/** Splits `nodes` (in file order) into root-to-leaf paths. */
export function treePaths<T extends TreeNode>(nodes: readonly T[]): TreePaths<T> {
  const last = nodes[nodes.length - 1];
  if (last === undefined) return { active: [], branches: [] };
  const byId = new Map<string, T>();
  const parents = new Set<string>();
  let chain = (nodes[0] as T).parentId === undefined;
  let previous: T | undefined;
  for (const node of nodes) {
    byId.set(node.id, node);
    if (node.parentId !== undefined) parents.add(node.parentId);
    if (chain && previous !== undefined) chain = node.parentId === previous.id;
    previous = node;
  }
  // Distinct ids, each entry's parent the one before it: the walk from the last entry takes
  // every entry, and every entry but the last is a parent, so there is no other leaf.
  const unique = byId.size === nodes.length;
  if (chain && unique) return { active: nodes.slice(), branches: [] };
  const walk = unique ? pathAmongUnique : pathTo;
  const active = walk(last, byId);
  const onActive = new Set(active.map((node) => node.id));
  const branches: { leaf: T; path: readonly T[] }[] = [];
  for (const node of nodes) {
    if (parents.has(node.id) || onActive.has(node.id)) continue;
    branches.push({ leaf: node, path: walk(node, byId) });
  }
  return { active, branches };
}

/** The path from the root to `leaf`. */
export function pathTo<T extends TreeNode>(leaf: T, byId: ReadonlyMap<string, T>): T[] {
  const path: T[] = [];
  const seen = new Set<string>();
  // A parent that is missing (a file cut at its start) or a cycle ends the walk: that is the root.
  for (let at: T | undefined = leaf; at !== undefined && !seen.has(at.id); ) {
    seen.add(at.id);
    path.push(at);
    at = at.parentId === undefined ? undefined : byId.get(at.parentId);
  }
  return path.reverse();
}

/**
 * {@link pathTo} where `byId` holds every node under its own id (no id repeats): an id met again
 * is a node met again, so a walk that has not ended after `byId.size` steps is in a cycle, and
 * one that ended met no id twice. Only a cycle needs the set of ids seen.
 */
function pathAmongUnique<T extends TreeNode>(leaf: T, byId: ReadonlyMap<string, T>): T[] {
  const path: T[] = [];
  for (let at: T | undefined = leaf; at !== undefined; ) {
    if (path.length === byId.size) return pathTo(leaf, byId);
    path.push(at);
    at = at.parentId === undefined ? undefined : byId.get(at.parentId);
  }
  return path.reverse();
}
