/**
 * A Claude Code transcript read as it grows: entries come in batches (a session store's mirror,
 * a file being written), and each entry of the conversation is converted once. The reader
 * converts the active path up to its last settled entry, one no later entry can change: a prompt,
 * or a response with a final stop reason (with the other entries of that response). Inside a
 * turn Claude Code writes a response block by block and parallel results in the order they
 * finish, so the part after the last settled entry waits for the next batch.
 */
import type { JsonObject, SessionEvent } from '../core/index.js';
import { SessionBuilder } from './builder.js';
import { activePath, pathPast } from './claude-code-chain.js';
import { PathConverter } from './claude-code-convert.js';
import { type EntryNode, entryNode } from './claude-code-nodes.js';
import { stringField } from './fields.js';
import { baseHeader, Skips } from './source.js';

/**
 * A transcript read batch by batch; its events are those `readClaudeCode` makes of it.
 *
 * @example
 * ```ts
 * import { GrowingClaudeTranscript } from 'palimpsest/import';
 *
 * const transcript = new GrowingClaudeTranscript('session.jsonl', false);
 * const at = (s: number) => `2026-12-06T10:00:0${s}.000Z`;
 * transcript.add([
 *   { type: 'user', uuid: 'u1', parentUuid: null, timestamp: at(0), message: { role: 'user', content: 'Hi' } },
 * ]);
 * const first = transcript.events();
 * console.log(typeof first === 'string' ? first : first.length); // 2: the turn and its prompt
 * transcript.add([
 *   { type: 'assistant', uuid: 'a1', parentUuid: 'u1', timestamp: at(1),
 *     message: { id: 'm1', role: 'assistant', model: 'claude-sonnet-4-5',
 *       content: [{ type: 'text', text: 'Hello!' }], stop_reason: 'end_turn' } },
 * ]);
 * const second = transcript.events();
 * console.log(typeof second === 'string' ? second : second.at(-1)?.type); // 'turn/end'
 * ```
 */
export class GrowingClaudeTranscript {
  readonly #file: string;
  readonly #subagent: boolean;
  readonly #nodes: EntryNode[] = [];
  readonly #byId = new Map<string, EntryNode>();
  /** Each node's index in `#nodes` (file order). */
  readonly #indexOf = new Map<string, number>();
  /** Some conversation entry names its parent (older versions wrote no chain at all). */
  #chained = false;
  readonly #skips = new Skips();
  readonly #builder: SessionBuilder;
  readonly #converter: PathConverter;
  /** The part of the active path converted so far. */
  readonly #read: EntryNode[] = [];
  #lines = 0;

  /**
   * @param file The transcript's file name, for the events' `origin`.
   * @param subagent The transcript is a subagent's own (its sidechain entries are its conversation).
   */
  constructor(file: string, subagent: boolean) {
    this.#file = file;
    this.#subagent = subagent;
    const header = baseHeader({ id: `claude-code-${file}`, createdAt: 0, metadata: {} });
    this.#builder = new SessionBuilder(header, 'claude-code', file);
    this.#converter = new PathConverter(this.#builder, this.#skips);
  }

  /**
   * Takes in the next entries, numbered on from the last (line 1 is the first entry).
   *
   * @throws ImportError `MALFORMED_LINE`, as `readClaudeCode`.
   */
  add(entries: readonly JsonObject[]): void {
    for (const value of entries) {
      const node = entryNode(value, ++this.#lines, this.#file, this.#subagent, this.#skips);
      if (node === undefined) continue;
      this.#indexOf.set(node.id, this.#nodes.length);
      this.#nodes.push(node);
      this.#byId.set(node.id, node);
      if (node.role === 'conversation' && !node.nullParent) this.#chained = true;
    }
  }

  /**
   * The events of the conversation through its last settled entry (later ones may follow a
   * turn still open), or why the transcript can no longer be followed. A path that goes back to
   * a prompt and goes on with another (a rewind, a truncating resume) is followed: the new
   * prompt replaces on the surface what the old one started. A path that leaves the part
   * already read anywhere else cannot be.
   */
  events(): readonly SessionEvent[] | string {
    const past = this.#pathPastRead();
    if (typeof past === 'string') return past;
    const end = settledEnd(past);
    if (end > 0) {
      this.#converter.convert(past, 0, end);
      // One push per entry: a spread of a whole transcript read at once would overflow the stack.
      for (let i = 0; i < end; i++) this.#read.push(past[i] as EntryNode);
    }
    return this.#builder.events;
  }

  /**
   * The active path after the part read, or why it no longer goes through that part. The walk
   * stops where the part read ends, so a batch costs what it adds; the whole path is read only
   * when that walk cannot answer (nothing read yet, a file without a chain, a path that left).
   */
  #pathPastRead(): readonly EntryNode[] | string {
    const read = this.#read;
    const last = read[read.length - 1];
    if (last !== undefined && this.#chained) {
      const later = this.#nodes.slice((this.#indexOf.get(last.id) ?? -1) + 1);
      const past = pathPast(last, later, this.#byId);
      if (past !== undefined) return past;
    }
    const path = activePath(this.#nodes);
    for (let i = 0; i < read.length; i++) {
      if (path[i]?.id !== (read[i] as EntryNode).id) return this.#rewind(path, i);
    }
    return path.slice(read.length);
  }

  /**
   * The path left the part read at `at`: when it goes back to a prompt and goes on with another
   * one (a rewind, a truncating resume), the new prompt will shadow what was read from the old
   * one on; anything else is a change the log cannot follow.
   */
  #rewind(path: readonly EntryNode[], at: number): readonly EntryNode[] | string {
    // Links (attachments, notices) may come between the point gone back to and either prompt.
    const left = firstConversation(this.#read, at) ?? (this.#read[at] as EntryNode);
    const taken = firstConversation(path, at);
    if (isPrompt(left) && taken !== undefined && isPrompt(taken)) {
      const keep = this.#builder.surfaceIndexOf(left.id);
      if (keep >= 0 && this.#builder.rewind(keep)) {
        this.#read.length = at;
        return path.slice(at);
      }
    }
    return `the transcript's conversation left the path read so far at its entry ${left.line}, not at a prompt it went back to`;
  }
}

function firstConversation(path: readonly EntryNode[], from: number): EntryNode | undefined {
  for (let i = from; i < path.length; i++) {
    if ((path[i] as EntryNode).role !== 'other') return path[i];
  }
  return undefined;
}

/** A prompt the user typed (not a tool result, a harness notice or a compaction summary). */
function isPrompt(node: EntryNode): boolean {
  return (
    node.role === 'conversation' &&
    node.entry.type === 'user' &&
    !node.resultsOnly &&
    node.entry.isMeta !== true &&
    node.entry.isCompactSummary !== true
  );
}

/** The index after the last entry of `path` no later entry can change. */
function settledEnd(path: readonly EntryNode[]): number {
  let end = 0;
  let settledResponse: string | undefined;
  path.forEach((node, index) => {
    if (node.role !== 'conversation') return;
    const message = node.entry.message as JsonObject;
    if (node.entry.type === 'user') {
      if (node.resultsOnly) return;
      end = index + 1;
      settledResponse = undefined;
      return;
    }
    const stop = stringField(message, 'stop_reason');
    if (stop !== undefined && stop !== 'tool_use') {
      settledResponse = node.messageId;
      end = index + 1;
    } else if (node.messageId !== undefined && node.messageId === settledResponse) end = index + 1;
  });
  return end;
}
