/**
 * Claude Code project transcripts (`~/.claude/projects/<project>/<session>.jsonl`): one entry per
 * line, linked into a tree by `uuid`/`parentUuid`. A compaction starts a new root (a
 * `system`/`compact_boundary` entry whose `logicalParentUuid` names the last entry before it),
 * followed by a user entry marked `isCompactSummary`. One API response is often written as several
 * `assistant` entries, one per content block, sharing `message.id`; they are one message here.
 */
import type { JsonObject } from '../core/index.js';
import { SessionBuilder } from './builder.js';
import { conversationPaths } from './claude-code-chain.js';
import { PathConverter } from './claude-code-convert.js';
import { type EntryNode, entryNode } from './claude-code-nodes.js';
import {
  isInlineSidechain,
  type Sidechain,
  sidechainChildren,
  sidechainSessionId,
  sidechains,
} from './claude-code-sidechains.js';
import { baseName, objectField, stringField } from './fields.js';
import type { SourceLine } from './lines.js';
import {
  assemble,
  baseHeader,
  type ForkSource,
  type ImportedFile,
  type ImportedSession,
  type ReadOptions,
  type SessionBase,
  Skips,
} from './source.js';
import { timeOf } from './timestamps.js';

/** True when the entries look like a Claude Code transcript (one of its entry shapes appears). */
export function looksLikeClaudeCode(lines: readonly SourceLine[]): boolean {
  return lines.some(({ value }) => {
    const type = value.type;
    if (type === 'summary' || type === 'file-history-snapshot') return true;
    return (
      (type === 'user' || type === 'assistant' || type === 'system') &&
      typeof value.uuid === 'string' &&
      !('payload' in value)
    );
  });
}

/**
 * Reads one Claude Code transcript.
 *
 * @throws ImportError `MALFORMED_LINE` for an entry without a string `type`, or a user or
 *   assistant entry without `uuid` or `message`.
 */
export function readClaudeCode(
  lines: readonly SourceLine[],
  path: string,
  options: ReadOptions = {},
): ImportedFile {
  const file = baseName(path);
  const skips = new Skips();
  const nodes: EntryNode[] = [];
  let sessionId: string | undefined;
  let cwd: string | undefined;
  let version: string | undefined;
  const copies = new Copies();
  // A subagent's own transcript (under `subagents/` in newer versions) is all sidechain: it is
  // read as a conversation; sidechain entries inside a main transcript naming their agent are
  // left to its own file, and those naming none (1.0.x kept them nowhere else) are read apart.
  const subagent = isSubagentTranscript(lines);
  const inline: EntryNode[] = [];
  for (const { line, value } of lines) {
    copies.note(value, line);
    if (!subagent && isInlineSidechain(value)) {
      const node = entryNode(value, line, path, true, skips);
      if (node !== undefined) inline.push(node);
      continue;
    }
    const node = entryNode(value, line, path, subagent, skips);
    if (node === undefined) continue;
    nodes.push(node);
    if (node.role !== 'conversation') continue;
    sessionId ??= stringField(value, 'sessionId');
    cwd ??= stringField(value, 'cwd');
    version ??= stringField(value, 'version');
  }
  const paths = conversationPaths(nodes);
  const first = paths.active.find((n) => n.role === 'conversation');
  if (first === undefined)
    return { harness: 'claude-code', path, sessions: [], skipped: skips.counts };
  const base = {
    // A subagent's transcript is named after its parent session, where Claude Code files it
    // (`<session>/subagents/agent-<id>.jsonl`) and where the Agent SDK's store keys it.
    id:
      subagent && sessionId !== undefined
        ? `claude-code-${sessionId}/subagents/${file.replace(/\.jsonl$/, '')}`
        : `claude-code-${file.replace(/\.jsonl$/, '')}`,
    createdAt: timeOf(first.entry.timestamp, 0),
    metadata: {
      imported: {
        harness: 'claude-code',
        path,
        ...(sessionId === undefined ? {} : { sessionId }),
        ...(cwd === undefined ? {} : { cwd }),
        ...(version === undefined ? {} : { version }),
        ...(copies.parentId === undefined ? {} : { forkedFromSessionId: copies.parentId }),
      },
      ...(subagent && sessionId !== undefined
        ? {
            subagentOf: subagentLink(
              lines.map(({ value }) => value),
              sessionId,
              options.subagentMeta,
            ),
          }
        : {}),
    },
  };
  const found = sidechains(inline, nodes);
  const children = sidechainChildren(base.id, found);
  const build = (path_: readonly EntryNode[], hold = false): SessionBuilder => {
    const builder = new SessionBuilder(baseHeader(base), 'claude-code', file);
    new PathConverter(builder, skips, children).convert(path_, 0, path_.length, hold);
    return builder;
  };
  const active = build(paths.active, options.holdUnfinished === true);
  const subagents = found.flatMap((sidechain) =>
    sidechainSession(base, sidechain, nodes, file, skips, options.holdUnfinished === true),
  );
  skips.active = false;
  const branches = paths.branches
    .filter((branch) => branch.path.some((n) => n.role === 'conversation'))
    .map((branch) => ({ leaf: branch.leaf.id, builder: build(branch.path) }));
  const forkedFrom = copies.source();
  return {
    harness: 'claude-code',
    path,
    sessions: [...assemble(base, active, branches), ...subagents],
    skipped: skips.counts,
    ...(forkedFrom === undefined ? {} : { forkedFrom }),
  };
}

/**
 * Where a subagent's transcript came from, as its header records it (`metadata.subagentOf`): the
 * parent session's palimpsest id, the call that spawned it (named by an `agent_metadata` entry in
 * what the Agent SDK mirrors, and by `toolUseId` in the `agent-<id>.meta.json` Claude Code writes
 * beside the transcript) and the agent's id, as far as `entries` and `meta` name them.
 *
 * @example
 * ```ts
 * import { subagentLink } from 'palimpsest/import';
 *
 * const link = subagentLink(
 *   [{ type: 'agent_metadata', toolUseId: 'toolu_1' }, { type: 'user', agentId: 'a7' }],
 *   '7d0c9a52',
 * );
 * console.log(link.session); // 'claude-code-7d0c9a52'
 * ```
 */
export function subagentLink(
  entries: readonly JsonObject[],
  sessionId: string,
  meta?: JsonObject,
): JsonObject {
  let agentId: string | undefined;
  let toolCallId = stringField(meta, 'toolUseId');
  for (const value of entries) {
    agentId ??= stringField(value, 'agentId');
    if (value.type === 'agent_metadata') toolCallId ??= stringField(value, 'toolUseId');
  }
  return {
    session: `claude-code-${sessionId}`,
    ...(toolCallId === undefined ? {} : { toolCallId }),
    ...(agentId === undefined ? {} : { agentId }),
  };
}

/**
 * The session of a subagent whose conversation the main transcript holds (`sidechain`), named
 * and linked as the transcript of a newer version's subagent is: its header names the parent
 * session and the call that spawned it, whose result names this session back. Once that result
 * is in `main` (the main transcript's entries), the subagent's turn has ended there: 1.0.x often
 * wrote no `stop_reason` on a last answer, so that result is what says so.
 */
function sidechainSession(
  parent: SessionBase,
  sidechain: Sidechain,
  main: readonly EntryNode[],
  file: string,
  skips: Skips,
  holdUnfinished: boolean,
): ImportedSession[] {
  const path = conversationPaths(sidechain.nodes).active;
  const first = path.find((node) => node.role === 'conversation');
  if (first === undefined) return [];
  const base: SessionBase = {
    id: sidechainSessionId(parent.id, sidechain),
    createdAt: timeOf(first.entry.timestamp, parent.createdAt),
    metadata: {
      imported: { ...(parent.metadata.imported as JsonObject), sidechain: sidechain.root.id },
      subagentOf: {
        session: parent.id,
        ...(sidechain.toolCallId === undefined ? {} : { toolCallId: sidechain.toolCallId }),
      },
    },
  };
  const callId = sidechain.toolCallId;
  const returned = callId === undefined ? undefined : main.find((n) => n.answers.includes(callId));
  const builder = new SessionBuilder(baseHeader(base), 'claude-code', file);
  new PathConverter(builder, skips).convert(
    path,
    0,
    path.length,
    holdUnfinished && returned === undefined,
  );
  if (returned !== undefined) {
    builder.endTurn(
      { kind: 'completed' },
      { line: returned.line, time: timeOf(returned.entry.timestamp, 0) },
    );
  }
  return builder.events.length === 0 ? [] : assemble(base, builder, []);
}

function isSubagentTranscript(lines: readonly SourceLine[]): boolean {
  const conversation = lines.filter(
    ({ value }) => value.type === 'user' || value.type === 'assistant',
  );
  return conversation.length > 0 && conversation.every(({ value }) => value.isSidechain === true);
}

/**
 * The entries a `/branch` (or the Agent SDK's `forkSession`) copied: Claude Code writes the
 * branch as a new transcript, `<new session id>.jsonl`, whose copied entries each carry
 * `forkedFrom: {sessionId, messageUuid}` naming the parent session. `--fork-session` copies
 * without the mark, so such a transcript reads as a session of its own.
 */
class Copies {
  private parent: string | undefined;
  private readonly lines = new Set<number>();

  note(entry: JsonObject, line: number): void {
    const from = stringField(objectField(entry, 'forkedFrom'), 'sessionId');
    if (from === undefined || from === '') return;
    this.parent ??= from;
    if (from === this.parent) this.lines.add(line);
  }

  /** The parent's session id, once an entry named it. */
  get parentId(): string | undefined {
    return this.parent;
  }

  source(): ForkSource | undefined {
    if (this.parent === undefined) return undefined;
    return { parent: `claude-code-${this.parent}`, sourceId: this.parent, copiedLines: this.lines };
  }
}
