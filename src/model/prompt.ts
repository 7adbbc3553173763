/**
 * The provider prompt a step sends: the system prompt, then the derived messages in provider
 * form. The agent loop and the AI SDK middleware build one per step from the session's
 * {@link MessageList}, which only grows until a replace starts a new one; so the provider
 * messages built for a list are kept for its lineage and extended for the next list, and a step
 * converts only its new messages and copies the n provider messages once into the array it
 * hands over.
 */
import type { LanguageModelV3Message, LanguageModelV3Prompt } from '@ai-sdk/provider';
import type { Message, MessageList, ToolMessage } from '../core/index.js';
import { messageListLineage } from '../core/message-list.js';
import { providerMessage, toolRunMessage } from './prompt-parts.js';

/**
 * The provider messages of the first `covered` messages of a list, grown as the list's lineage
 * grows. Its array is never handed over, so it may grow in place and its trailing run of tool
 * results may be merged again with the results that continue it.
 */
class PromptBody {
  /** Tool names by call id, from every assistant message covered (a result names its tool). */
  private readonly toolNames = new Map<string, string>();
  private covered = 0;
  /** Where the trailing run of tool results starts among the messages; -1 when none ends it. */
  private runStart = -1;

  constructor(readonly parts: LanguageModelV3Message[]) {}

  /** How many messages the parts hold. */
  get length(): number {
    return this.covered;
  }

  /** Converts `messages[length..end)`, which must extend the messages covered so far. */
  extend(messages: readonly Message[] | MessageList, end: number): void {
    let index = this.covered;
    if (index >= end) return;
    if (this.runStart >= 0 && messages.at(index)?.role === 'tool') {
      // The new results continue the trailing run: providers expect one message for the run.
      this.parts.pop();
      index = this.runStart;
    }
    for (; index < end; index++) {
      const message = messages.at(index) as Message;
      if (message.role === 'tool') {
        let runEnd = index + 1;
        while (runEnd < end && messages.at(runEnd)?.role === 'tool') runEnd++;
        const results = messages.slice(index, runEnd) as readonly ToolMessage[];
        this.parts.push(toolRunMessage(results, this.toolNames));
        this.runStart = index;
        index = runEnd - 1;
        continue;
      }
      if (message.role === 'assistant') {
        for (const block of message.content) {
          if (block.type === 'tool-call') this.toolNames.set(block.id, block.name);
        }
      }
      this.parts.push(providerMessage(message));
      this.runStart = -1;
    }
    this.covered = end;
  }
}

/** The body kept for each lineage of session lists, weakly: it goes with the lists. */
const bodies = new WeakMap<object, PromptBody>();

/**
 * The provider prompt for a system prompt and derived messages. A session's
 * {@link MessageList} costs O(new messages) after the first prompt built from its lineage (the
 * previous prompt's provider messages are reused) plus one copy of the n provider messages into
 * the returned array, which is the caller's: no later prompt changes it. After a replace the
 * session's list starts a new lineage, and its first prompt looks every message up again
 * (converted messages are cached per message, so none is converted twice).
 *
 * @example
 * ```ts
 * import { Session } from 'palimpsest';
 * import { buildPrompt } from 'palimpsest/agent';
 *
 * const session = Session.create({ id: 'build-prompt-example' });
 * session.append(
 *   'user/message',
 *   { id: 'u1', role: 'user', content: [{ type: 'text', text: 'Hi.' }], source: { kind: 'user' } },
 *   { surfaceOp: 'append' },
 * );
 * const prompt = buildPrompt('Be brief.', session.deriveMessageList());
 * console.log(prompt.map((message) => message.role).join(',')); // 'system,user'
 * ```
 */
export function buildPrompt(
  system: string | undefined,
  messages: readonly Message[] | MessageList,
): LanguageModelV3Prompt {
  const head: LanguageModelV3Message[] =
    system === undefined || system === '' ? [] : [{ role: 'system', content: system }];
  const lineage = messageListLineage(messages);
  const kept = lineage === undefined ? undefined : bodies.get(lineage);
  if (lineage === undefined || (kept !== undefined && kept.length > messages.length)) {
    // An array, or a list older than the one last built from its lineage: built whole.
    const body = new PromptBody(head);
    body.extend(messages, messages.length);
    return body.parts;
  }
  let body = kept;
  if (body === undefined) {
    body = new PromptBody([]);
    bodies.set(lineage, body);
  }
  body.extend(messages, messages.length);
  return head.length === 0 ? body.parts.slice() : head.concat(body.parts);
}
