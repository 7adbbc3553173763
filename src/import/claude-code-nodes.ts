/**
 * The entries of a Claude Code transcript as links of its chain: which carry conversation, which
 * start a compaction, which are only links, and what is left out (counted by reason).
 */
import type { JsonObject } from '../core/index.js';
import type { ChainNode } from './claude-code-chain.js';
import { objectField, objectsField, stringField } from './fields.js';
import { malformedEntry } from './lines.js';
import type { Skips } from './source.js';

/** One entry of a transcript as a link of its chain. */
export interface EntryNode extends ChainNode {
  readonly entry: JsonObject;
}

const LEFT_OUT: Readonly<Record<string, string>> = {
  summary: 'summary (a title for the session picker, not conversation)',
  'file-history-snapshot': 'file-history-snapshot (file backups for undo, not conversation)',
  'queue-operation': 'queue-operation (input queued in the UI; it enters as a user entry)',
  progress: 'progress (tool and hook progress shown in the UI)',
  agent_metadata: "agent_metadata (a subagent's type and the call that spawned it, in the header)",
};

/**
 * The link `value` (line `line` of `path`) is, or `undefined` for an entry that is no link
 * (it has no `uuid`, or is a sidechain entry of a main transcript); what is not carried over is
 * counted in `skips`.
 *
 * @param subagent The transcript is a subagent's own: its sidechain entries are its conversation.
 * @throws ImportError `MALFORMED_LINE` for an entry without a string `type`, or a user or
 *   assistant entry without `uuid` or `message`.
 */
export function entryNode(
  value: JsonObject,
  line: number,
  path: string,
  subagent: boolean,
  skips: Skips,
): EntryNode | undefined {
  const type = value.type;
  if (typeof type !== 'string') throw malformedEntry(path, line, 'expected a string type');
  if (type === 'user' || type === 'assistant') {
    if (typeof value.uuid !== 'string' || objectField(value, 'message') === undefined) {
      throw malformedEntry(path, line, `expected a ${type} entry with a uuid and a message`);
    }
    if (value.isSidechain === true && !subagent) {
      skips.add("sidechain (a subagent's conversation, in its own transcript)");
      return undefined;
    }
    return node(value, line, 'conversation');
  }
  const boundary = type === 'system' && value.subtype === 'compact_boundary';
  if (!boundary) {
    const subtype = stringField(value, 'subtype');
    skips.add(
      LEFT_OUT[type] ??
        (type === 'system'
          ? `system/${subtype ?? '?'} (a notice shown in the UI, not sent to the model)`
          : `${type} (not part of the model's conversation)`),
    );
  }
  // Every entry with a uuid is a link of the chain, carried over or not.
  return typeof value.uuid === 'string'
    ? node(value, line, boundary ? 'boundary' : 'other')
    : undefined;
}

function node(entry: JsonObject, line: number, role: EntryNode['role']): EntryNode {
  const parent =
    stringField(entry, 'parentUuid') ??
    (role === 'boundary' ? stringField(entry, 'logicalParentUuid') : undefined);
  const message = role === 'conversation' ? objectField(entry, 'message') : undefined;
  const blocks = objectsField(message, 'content') ?? NONE;
  const answers = entry.type === 'user' ? ids(blocks, 'tool_result', 'tool_use_id') : NONE;
  return {
    id: entry.uuid as string,
    parentId: parent,
    line,
    entry,
    role,
    nullParent: entry.parentUuid === null,
    messageId: entry.type === 'assistant' ? stringField(message, 'id') : undefined,
    calls: entry.type === 'assistant' ? ids(blocks, 'tool_use', 'id') : NONE,
    answers,
    resultsOnly: answers.length > 0 && blocks.every((block) => block.type === 'tool_result'),
  };
}

const NONE: readonly never[] = Object.freeze([]);

/** The string `field` of each block of type `type`. */
function ids(blocks: readonly JsonObject[], type: string, field: string): readonly string[] {
  let out: string[] | undefined;
  for (const block of blocks) {
    const id = block.type === type ? stringField(block, field) : undefined;
    if (id === undefined) continue;
    if (out === undefined) out = [id];
    else out.push(id);
  }
  return out ?? NONE;
}
