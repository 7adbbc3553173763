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
  const byId = new Map<string, T>();
  const parents = new Set<string>();
  for (const node of nodes) {
    byId.set(node.id, node);
    if (node.parentId !== undefined) parents.add(node.parentId);
  }
  const last = nodes[nodes.length - 1];
  if (last === undefined) return { active: [], branches: [] };
  const active = pathTo(last, byId);
  const onActive = new Set(active.map((node) => node.id));
  const branches: { leaf: T; path: readonly T[] }[] = [];
  for (const node of nodes) {
    if (parents.has(node.id) || onActive.has(node.id)) continue;
    branches.push({ leaf: node, path: pathTo(node, byId) });
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
