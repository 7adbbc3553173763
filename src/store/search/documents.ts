/**
 * What a search finds: one document per message a reader of the transcript sees (user and
 * context messages, assistant messages with their tool calls' arguments, tool results, and the
 * summaries and pruned results a replace put in), keyed by the event's seq and written out by
 * `formatMessage`, the same words the CLI and the viewer show.
 */
import {
  deriveEventMessage,
  formatMessage,
  type SessionEvent,
  type SessionHeader,
} from '../../core/index.js';

/** One searchable message of a session. */
export interface SearchDocument {
  readonly seq: number;
  readonly time: number;
  readonly type: string;
  /** `user`, `assistant` or `tool`; a replace's summary has the role of its message. */
  readonly role: string;
  /** The tools the message calls or answers, space-separated; `''` for none. */
  readonly tools: string;
  /** The model in effect: the message's own source, else the last request header's. */
  readonly model: string;
  readonly text: string;
}

/**
 * Where a session sits among others, for the filters: `root` (started on its own), `fork`
 * (header `parentSession`) or `child` (a subagent's, header `metadata.subagentOf`).
 */
export type SessionKind = 'root' | 'fork' | 'child';

/** What the index keeps of a session's header for the filters. */
export interface SessionFacts {
  readonly kind: SessionKind;
  /** The working directory or project the header names; `''` when none. */
  readonly project: string;
  /** The events copied from a parent when forking: their documents are the parent's. */
  readonly seedLength: number;
}

/**
 * The facts of a header: its kind, its project (`metadata.project`, `cwd`, or an import's `cwd`).
 *
 * @example
 * ```ts
 * import { sessionFacts } from 'palimpsest/store';
 *
 * const facts = sessionFacts({ version: 1, id: 'a', createdAt: 0, metadata: { cwd: '/work/app' } });
 * console.log(facts.kind); // 'root'
 * console.log(facts.project); // '/work/app'
 * ```
 */
export function sessionFacts(header: SessionHeader): SessionFacts {
  const metadata = header.metadata ?? {};
  const imported = metadata.imported;
  const importedCwd =
    typeof imported === 'object' && imported !== null && !Array.isArray(imported)
      ? (imported as { readonly cwd?: unknown }).cwd
      : undefined;
  const project = [metadata.project, metadata.cwd, importedCwd].find(
    (value): value is string => typeof value === 'string' && value !== '',
  );
  const kind: SessionKind =
    metadata.subagentOf !== undefined
      ? 'child'
      : header.parentSession !== undefined
        ? 'fork'
        : 'root';
  return {
    kind,
    project: project ?? '',
    seedLength: header.parentSession === undefined ? 0 : (header.seedLength ?? 0),
  };
}

/**
 * The documents of `events` from seq `fromSeq` on (never below the fork's seed). The whole log
 * is walked so that the model in effect and the names of the calls results answer are known.
 *
 * @example
 * ```ts
 * import { Session } from 'palimpsest';
 * import { searchDocuments, sessionFacts } from 'palimpsest/store';
 *
 * const session = Session.create({ id: 'a' });
 * session.append('user/message', { id: 'u1', role: 'user', content: [{ type: 'text', text: 'hello' }], source: { kind: 'user' } }, { surfaceOp: 'append' });
 * const [document] = searchDocuments(session.events, 0, sessionFacts(session.header));
 * console.log(document?.seq); // 0
 * console.log(document?.text); // 'hello'
 * ```
 */
export function searchDocuments(
  events: readonly SessionEvent[],
  fromSeq: number,
  facts: SessionFacts,
): SearchDocument[] {
  const documents: SearchDocument[] = [];
  const callNames = new Map<string, string>();
  let model = '';
  const first = Math.max(fromSeq, facts.seedLength);
  for (const event of events) {
    if (event.type === 'request/header') {
      model = event.data.model;
      continue;
    }
    if (event.type === 'tool/call') {
      callNames.set(event.data.callId, event.data.name);
      continue;
    }
    const message = deriveEventMessage(event);
    if (message === null) continue;
    const tools: string[] = [];
    for (const block of message.content) {
      if (block.type === 'tool-call') {
        callNames.set(block.id, block.name);
        tools.push(block.name);
      } else if (block.type === 'tool-result') {
        const name = callNames.get(block.toolCallId);
        if (name !== undefined) tools.push(name);
      }
    }
    const own = message.role === 'assistant' ? message.source.model : undefined;
    if (event.seq < first) continue;
    const text = formatMessage(message);
    if (text.trim() === '') continue;
    documents.push({
      seq: event.seq,
      time: event.time,
      type: event.type,
      role: message.role,
      tools: [...new Set(tools)].join(' '),
      model: own ?? model,
      text,
    });
  }
  return documents;
}
