/**
 * What a provider checks in a request's history before it accepts it, applied to the bodies
 * `palimpsest export --format openai|anthropic` writes, and `palimpsest verify` on the same
 * session: the CLI's view of a log the adapter wrote.
 */
import { expect } from 'vitest';
import { cli } from '../../cli/helpers.js';

interface OpenAIMessage {
  readonly role: string;
  readonly tool_calls?: readonly { readonly id: string }[];
  readonly tool_call_id?: string;
}

interface AnthropicMessage {
  readonly role: 'user' | 'assistant';
  readonly content: readonly { readonly type: string; id?: string; tool_use_id?: string }[];
}

/**
 * Chat Completions: an assistant message's `tool_calls` are answered by `tool` messages that
 * follow it at once, one per call; a `tool` message answers a call of the assistant before it.
 */
export function expectOpenAIToolPairing(messages: readonly OpenAIMessage[]): void {
  messages.forEach((message, index) => {
    if (message.role === 'assistant' && message.tool_calls !== undefined) {
      const ids = message.tool_calls.map((call) => call.id);
      const answers = messages.slice(index + 1, index + 1 + ids.length);
      expect(answers.map((answer) => answer.role)).toEqual(ids.map(() => 'tool'));
      expect(answers.map((answer) => answer.tool_call_id).sort()).toEqual([...ids].sort());
    }
    if (message.role === 'tool') {
      let at = index - 1;
      while (messages[at]?.role === 'tool') at--;
      const ids = messages[at]?.tool_calls?.map((call) => call.id) ?? [];
      expect(ids).toContain(message.tool_call_id);
    }
  });
}

/**
 * Messages API: roles alternate from a user message, and the tool_use blocks of an assistant
 * message are answered by tool_result blocks at the start of the next (user) message.
 */
export function expectAnthropicToolPairing(messages: readonly AnthropicMessage[]): void {
  expect(messages[0]?.role).toBe('user');
  messages.forEach((message, index) => {
    if (index > 0) expect(message.role).not.toBe(messages[index - 1]?.role);
    const uses = message.content.flatMap((block) =>
      block.type === 'tool_use' ? [block.id as string] : [],
    );
    const next = messages[index + 1]?.content ?? [];
    const leading: string[] = [];
    for (const block of next) {
      if (block.type !== 'tool_result') break;
      leading.push(block.tool_use_id as string);
    }
    if (message.role === 'assistant') expect(leading.sort()).toEqual([...uses].sort());
    const results = message.content.filter((block) => block.type === 'tool_result');
    if (results.length > 0) {
      const asked = messages[index - 1]?.content.flatMap((block) =>
        block.type === 'tool_use' ? [block.id] : [],
      );
      for (const result of results) expect(asked).toContain(result.tool_use_id);
    }
  });
}

/**
 * Runs `verify` and both provider exports of session `id` in the JSONL store at `directory`,
 * and checks them; returns the two bodies' messages for more checks.
 */
export function expectCliAccepts(
  directory: string,
  id: string,
): { openai: OpenAIMessage[]; anthropic: AnthropicMessage[] } {
  const store = ['--store', `jsonl:${directory}`];
  const verify = cli(['verify', id, ...store]);
  expect(verify.stdout + verify.stderr).toMatch(new RegExp(`${id}\\s+\\d+\\s+ok`));
  expect(verify.code).toBe(0);
  const exported = (format: string): unknown => {
    const run = cli(['export', id, '--format', format, ...store]);
    expect(run.code).toBe(0);
    return JSON.parse(run.stdout);
  };
  const openai = (exported('openai') as { messages: OpenAIMessage[] }).messages;
  const anthropic = (exported('anthropic') as { messages: AnthropicMessage[] }).messages;
  expectOpenAIToolPairing(openai);
  expectAnthropicToolPairing(anthropic);
  return { openai, anthropic };
}
