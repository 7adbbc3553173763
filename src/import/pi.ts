/**
 * pi session files (`~/.pi/agent/sessions/--<cwd>--/<timestamp>_<uuid>.jsonl`): a `session` header
 * line, then entries linked into a tree by `id`/`parentId` (version 2 and later; version 1 files
 * are linear). The active path ends at the file's last entry. A `compaction` entry's summary stands
 * for everything on the path before `firstKeptEntryId`.
 */
import { dirname, resolve } from 'node:path';
import type {
  AssistantContentBlock,
  JsonObject,
  ToolResultContentBlock,
  TurnEndReason,
  UserContentBlock,
} from '../core/index.js';
import { type At, SessionBuilder } from './builder.js';
import {
  baseName,
  jsonText,
  objectField,
  objectsField,
  pick,
  stringField,
  text,
  textAndImages,
  usageOf,
} from './fields.js';
import { malformedEntry, type SourceLine } from './lines.js';
import { assemble, baseHeader, type ForkSource, type ImportedFile, Skips } from './source.js';
import { timeOf } from './timestamps.js';
import { type TreeNode, treePaths } from './tree.js';

interface Node extends TreeNode {
  readonly line: number;
  readonly entry: JsonObject;
}

const LEFT_OUT: Readonly<Record<string, string>> = {
  model_change: 'model_change (a setting; the model is recorded on each assistant message)',
  thinking_level_change: 'thinking_level_change (a setting, not conversation)',
  custom: "custom (an extension's state; pi never sends it to the model)",
  label: 'label (a bookmark on an entry)',
  session_info: 'session_info (the display name)',
};

/** True when the first entry is a pi session header. */
export function looksLikePi(lines: readonly SourceLine[]): boolean {
  return lines[0]?.value.type === 'session';
}

/**
 * Reads one pi session file.
 *
 * @throws ImportError `MALFORMED_LINE` for an entry without a string `type`, or a `message` entry
 *   without a message that has a role.
 */
/** pi writes each message as one line, so there is no unfinished response to hold. */
export function readPi(lines: readonly SourceLine[], path: string): ImportedFile {
  const file = baseName(path);
  const skips = new Skips();
  const header = lines[0]?.value;
  const nodes: Node[] = [];
  let previous: string | undefined;
  for (const { line, value } of lines.slice(1)) {
    const type = value.type;
    if (typeof type !== 'string') throw malformedEntry(path, line, 'expected a string type');
    if (type === 'message' && typeof objectField(value, 'message')?.role !== 'string') {
      throw malformedEntry(path, line, 'expected a message entry with a message that has a role');
    }
    if (!HANDLED.has(type))
      skips.add(LEFT_OUT[type] ?? `${type} (an entry type this importer does not know)`);
    // Version 1 files have no ids: each entry follows the one before it.
    const id = stringField(value, 'id') ?? `line-${line}`;
    const parentId =
      value.id === undefined ? previous : (stringField(value, 'parentId') ?? undefined);
    nodes.push({ id, parentId, line, entry: value });
    previous = id;
  }
  const paths = treePaths(nodes);
  if (!paths.active.some((n) => HANDLED.has(n.entry.type as string))) {
    return { harness: 'pi', path, sessions: [], skipped: skips.counts };
  }
  const sourceId = stringField(header, 'id') ?? file.replace(/\.jsonl$/, '');
  const cwd = stringField(header, 'cwd');
  const parent = stringField(header, 'parentSession');
  const base = {
    id: `pi-${sourceId}`,
    createdAt: timeOf(header?.timestamp, timeOf(paths.active[0]?.entry.timestamp, 0)),
    metadata: {
      imported: {
        harness: 'pi',
        path,
        sessionId: sourceId,
        ...(typeof header?.version === 'number' ? { version: header.version } : {}),
        ...(cwd === undefined ? {} : { cwd }),
        ...(parent === undefined ? {} : { parentSessionFile: parent }),
      },
    },
  };
  const lineOf = new Map(nodes.map((n) => [n.id, n.line]));
  const build = (path_: readonly Node[]): SessionBuilder => {
    const builder = new SessionBuilder(baseHeader(base), 'pi', file);
    convert(path_, builder, skips, lineOf);
    return builder;
  };
  const active = build(paths.active);
  skips.active = false;
  const branches = paths.branches.map((branch) => ({
    leaf: branch.leaf.id,
    builder: build(branch.path),
  }));
  return {
    harness: 'pi',
    path,
    sessions: assemble(base, active, branches),
    skipped: skips.counts,
    ...(parent === undefined || parent === ''
      ? {}
      : { forkedFrom: forkSource(parent, path, timeOf(header?.timestamp, Number.NaN), nodes) }),
  };
}

/**
 * The parent a pi child names. pi writes a fork (`/fork`, `--fork`, `createBranchedSession`) as
 * a new file whose header names the parent's file, holding copies of the parent's entries on the
 * path forked (same ids, same timestamps) before its own; `newSession({parentSession})` copies
 * none. So the copy is the entries older than the child's header. pi names its files
 * `<timestamp>_<session id>.jsonl`, which gives the parent's id without reading its file.
 */
function forkSource(
  parentFile: string,
  path: string,
  createdAt: number,
  nodes: readonly Node[],
): ForkSource {
  const parentPath = resolve(dirname(path), parentFile);
  const name = baseName(parentPath).replace(/\.jsonl$/, '');
  const sourceId = name.slice(name.indexOf('_') + 1);
  return {
    parent: `pi-${sourceId}`,
    sourceId,
    parentPath,
    ...(Number.isNaN(createdAt)
      ? {}
      : {
          copiedLines: new Set(
            nodes
              .filter((n) => timeOf(n.entry.timestamp, createdAt) < createdAt)
              .map((n) => n.line),
          ),
        }),
  };
}

const HANDLED: ReadonlySet<string> = new Set([
  'message',
  'compaction',
  'branch_summary',
  'custom_message',
]);

function convert(
  path: readonly Node[],
  builder: SessionBuilder,
  skips: Skips,
  lineOf: ReadonlyMap<string, number>,
): void {
  let time = 0;
  let model = { provider: 'unknown', model: 'unknown' };
  for (const { line, entry } of path) {
    time = timeOf(entry.timestamp, time);
    const at: At = { line, time };
    switch (entry.type) {
      case 'model_change':
        model = {
          provider: stringField(entry, 'provider') ?? model.provider,
          model: stringField(entry, 'modelId') ?? model.model,
        };
        break;
      case 'message':
        message(objectField(entry, 'message') as JsonObject, builder, skips, at, model, entry);
        break;
      case 'compaction': {
        const first = lineOf.get(stringField(entry, 'firstKeptEntryId') ?? '');
        builder.compaction(
          [text(stringField(entry, 'summary') ?? '')],
          at,
          (shadowedLine, isSummary) => isSummary || first === undefined || shadowedLine < first,
          {
            source: 'compaction',
            ...pick(entry, ['firstKeptEntryId', 'tokensBefore', 'fromHook', 'details']),
          },
        );
        break;
      }
      case 'branch_summary':
        builder.context([text(stringField(entry, 'summary') ?? '')], at, {
          name: 'branch_summary',
          ...pick(entry, ['fromId']),
        });
        break;
      case 'custom_message':
        builder.context(userContent(entry.content, skips), at, {
          name: 'custom_message',
          ...pick(entry, ['customType']),
        });
        break;
    }
  }
}

function message(
  m: JsonObject,
  builder: SessionBuilder,
  skips: Skips,
  at: At,
  model: { provider: string; model: string },
  entry: JsonObject,
): void {
  const id = stringField(entry, 'id');
  switch (m.role) {
    case 'user':
      builder.prompt(userContent(m.content, skips), at, id);
      return;
    case 'assistant':
      assistant(m, builder, skips, at, model, id);
      return;
    case 'toolResult': {
      const answered = builder.toolResult(
        stringField(m, 'toolCallId') ?? '',
        userContent(m.content, skips) as ToolResultContentBlock[],
        m.isError === true,
        at,
        id,
      );
      if (!answered) skips.add('toolResult without a matching toolCall in its step');
      return;
    }
    case 'bashExecution': {
      if (m.excludeFromContext === true) {
        skips.add('bashExecution excluded from context (a !! command)');
        return;
      }
      const command = stringField(m, 'command') ?? '';
      const output = stringField(m, 'output') ?? '';
      builder.context(
        [text(`Ran \`${command}\`\n${output}`)],
        at,
        {
          name: 'bashExecution',
          ...pick(m, ['exitCode', 'cancelled', 'truncated']),
        },
        id,
      );
      return;
    }
    // Version 2 files call an extension's message `hookMessage`; version 3 renamed it `custom`.
    case 'hookMessage':
    case 'custom':
      builder.context(
        userContent(m.content, skips),
        at,
        { name: 'custom', ...pick(m, ['customType']) },
        id,
      );
      return;
    case 'branchSummary':
    case 'compactionSummary':
      builder.context([text(stringField(m, 'summary') ?? '')], at, { name: m.role }, id);
      return;
    default:
      skips.add(`message role '${String(m.role)}' (a role this importer does not know)`);
  }
}

function assistant(
  m: JsonObject,
  builder: SessionBuilder,
  skips: Skips,
  at: At,
  fallback: { provider: string; model: string },
  id: string | undefined,
): void {
  const content: AssistantContentBlock[] = [];
  for (const block of objectsField(m, 'content') ?? []) {
    if (block.type === 'text' && typeof block.text === 'string') content.push(text(block.text));
    else if (block.type === 'thinking') {
      const signature = stringField(block, 'thinkingSignature');
      content.push({
        type: 'reasoning',
        text: stringField(block, 'thinking') ?? '',
        ...(signature === undefined
          ? {}
          : { providerMetadata: { pi: { thinkingSignature: signature } } }),
      });
    } else if (block.type === 'toolCall' && typeof block.id === 'string' && block.id !== '') {
      content.push({
        type: 'tool-call',
        id: block.id,
        name: stringField(block, 'name') || 'unknown',
        arguments: jsonText(block.arguments),
      });
    } else
      skips.add(`assistant content block '${String(block.type)}' (no palimpsest block holds it)`);
  }
  const stopReason = stringField(m, 'stopReason');
  const usage = objectField(m, 'usage');
  const calls = content.some((block) => block.type === 'tool-call');
  const end = turnEnd(stopReason, stringField(m, 'errorMessage'), calls);
  builder.assistant(
    content,
    {
      provider: stringField(m, 'provider') || fallback.provider,
      model: stringField(m, 'model') || fallback.model,
      finishReason:
        stopReason === 'toolUse'
          ? 'tool-calls'
          : stopReason === 'length'
            ? 'length'
            : stopReason === 'error'
              ? 'error'
              : stopReason === 'aborted'
                ? 'aborted'
                : stopReason === 'stop'
                  ? 'stop'
                  : 'unknown',
      ...(stopReason === undefined ? {} : { rawFinishReason: stopReason }),
      ...(usage === undefined ? {} : { usage: usageOf(usage, PI_USAGE) }),
      ...(end === undefined ? {} : { endsTurn: end }),
    },
    at,
    id,
  );
}

function turnEnd(
  stopReason: string | undefined,
  errorMessage: string | undefined,
  calls: boolean,
): TurnEndReason | undefined {
  switch (stopReason) {
    case 'stop':
      return calls ? undefined : { kind: 'completed' };
    case 'length':
      return { kind: 'max-tokens' };
    case 'error':
      return { kind: 'error', error: { message: errorMessage ?? '' } };
    case 'aborted':
      return { kind: 'aborted' };
    default:
      return undefined;
  }
}

function userContent(content: unknown, skips: Skips): UserContentBlock[] {
  return textAndImages(
    content,
    (block) =>
      typeof block.data === 'string'
        ? {
            type: 'image',
            mediaType: stringField(block, 'mimeType') ?? 'image/png',
            data: block.data,
          }
        : undefined,
    (type) => skips.add(`content block '${type}' (no palimpsest block holds it)`),
  );
}

/** The usage fields of the source, by their palimpsest names. */
const PI_USAGE = {
  inputTokens: 'input',
  outputTokens: 'output',
  cachedInputTokens: 'cacheRead',
  cacheWriteTokens: 'cacheWrite',
  totalTokens: 'totalTokens',
} as const;
