/**
 * The shortcuts of `treePaths` (src/import/tree.ts): a file whose entries form one chain, and walks
 * among distinct ids that keep no set of the ids seen, must split every list of entries as the
 * general walk does. The oracle is the general walk as it was before the shortcuts, on random
 * trees, forests, cycles, repeated ids and chains (with and without a flaw).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { pathTo, type TreeNode, type TreePaths, treePaths } from '../../src/import/tree.js';
import { fuzzRuns } from '../fuzz-runs.js';

interface Node extends TreeNode {
  readonly line: number;
}

/** treePaths before the shortcuts. */
function reference<T extends TreeNode>(nodes: readonly T[]): TreePaths<T> {
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

const id = fc.integer({ min: 0, max: 12 }).map((n) => `n${n}`);

/** Any entries: ids and parents drawn from a few names, so repeats, cycles and gaps are common. */
const anyNodes = fc
  .array(fc.record({ id, parentId: fc.option(id, { nil: undefined }) }), { maxLength: 30 })
  .map((nodes) => nodes.map((node, line) => ({ ...node, line })));

/** A chain (each entry's parent the one before), then maybe one flaw. */
const chains = fc
  .tuple(
    fc.integer({ min: 1, max: 30 }),
    fc.option(fc.tuple(fc.nat(), fc.constantFrom('repeat-id', 'reparent', 'root-parent')), {
      nil: undefined,
    }),
    fc.nat(),
  )
  .map(([length, flaw, other]) => {
    const nodes: Node[] = Array.from({ length }, (_, line) => ({
      id: `e${line}`,
      parentId: line === 0 ? undefined : `e${line - 1}`,
      line,
    }));
    if (flaw !== undefined) {
      const [at, kind] = flaw;
      const i = at % length;
      const j = other % length;
      const node = nodes[i] as Node;
      nodes[i] =
        kind === 'repeat-id'
          ? { ...node, id: `e${j}` }
          : kind === 'reparent'
            ? { ...node, parentId: `e${j}` }
            : { ...node, parentId: `e${length - 1}` };
    }
    return nodes;
  });

describe('treePaths', () => {
  it('splits any entries into the paths the general walk gives', () => {
    fc.assert(
      fc.property(fc.oneof(anyNodes, chains), (nodes) => {
        expect(treePaths(nodes)).toEqual(reference(nodes));
      }),
      { numRuns: fuzzRuns(20_000) },
    );
  });

  it('gives a chain as one path, a copy of the entries', () => {
    const nodes: Node[] = [
      { id: 'a', parentId: undefined, line: 1 },
      { id: 'b', parentId: 'a', line: 2 },
      { id: 'c', parentId: 'b', line: 3 },
    ];
    const paths = treePaths(nodes);
    expect(paths).toEqual({ active: nodes, branches: [] });
    expect(paths.active).not.toBe(nodes);
  });
});
