/**
 * `toModelMessages` and `fromModelMessages` as inverses. Properties, over generated messages:
 * 1. palimpsest → AI SDK → palimpsest gives back every message exactly (ids, sources, raw
 *    tool-call arguments, every result block and flag);
 * 2. AI SDK → palimpsest → AI SDK gives back every message in the forms both sides know;
 * 3. the prompt the AI SDK builds from `toModelMessages` is the prompt palimpsest's own request
 *    builder builds from the messages, so continuing a session sends what the loop would.
 */
import type { ModelMessage } from 'ai';
import { streamText } from 'ai';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fromModelMessages, toModelMessages } from '../../../src/adapters/ai-sdk/index.js';
import type {
  AssistantContentBlock,
  JsonObject,
  Message,
  ToolResultContentBlock,
  UserContentBlock,
} from '../../../src/core/index.js';
import { buildPrompt } from '../../../src/model/index.js';
import { scriptedModel } from '../../../src/testing/index.js';

const metadata: fc.Arbitrary<JsonObject | undefined> = fc.option(
  fc.dictionary(
    fc.constantFrom('anthropic', 'openai', 'google'),
    fc.dictionary(
      fc.constantFrom('signature', 'cacheControl', 'itemId'),
      fc.oneof(fc.string(), fc.integer(), fc.boolean()),
    ),
    { minKeys: 1, maxKeys: 2 },
  ),
  { nil: undefined },
);
const withMetadata = <T extends object>(block: T, meta: JsonObject | undefined): T =>
  meta === undefined ? block : { ...block, providerMetadata: meta };

const text = fc
  .tuple(fc.string(), metadata)
  .map(([value, meta]) => withMetadata({ type: 'text' as const, text: value }, meta));
const plainText = fc.string().map((value) => ({ type: 'text' as const, text: value }));
const image = fc.oneof(
  fc
    .base64String({ maxLength: 24 })
    .map((data) => ({ type: 'image' as const, mediaType: 'image/png', data })),
  fc.webUrl().map((url) => ({ type: 'image' as const, mediaType: 'image/jpeg', url })),
);
const reasoning = fc
  .tuple(fc.string(), metadata)
  .map(([value, meta]) => withMetadata({ type: 'reasoning' as const, text: value }, meta));
const callId = fc.stringMatching(/^call_[a-z0-9]{1,8}$/);
const toolName = fc.stringMatching(/^[a-z_]{1,12}$/);
const rawArguments = fc.oneof(
  fc
    .dictionary(fc.constantFrom('path', 'pattern', 'n'), fc.oneof(fc.string(), fc.integer()))
    .map((args) => JSON.stringify(args)),
  fc.constantFrom('{"path": "a.ts"}', '', 'not json', '[1,2]', ' {} '),
);
const toolCall = fc
  .tuple(callId, toolName, rawArguments, metadata)
  .map(([id, name, args, meta]) =>
    withMetadata({ type: 'tool-call' as const, id, name, arguments: args }, meta),
  );
const id = fc.uuid();

const userMessage = fc
  .tuple(
    id,
    fc.array(fc.oneof(text, image), { maxLength: 3 }),
    fc.constantFrom<JsonObject>({ kind: 'user' }, { kind: 'compaction', id: 'c1' }),
  )
  .map(
    ([messageId, content, source]): Message => ({
      id: messageId,
      role: 'user',
      content: content as UserContentBlock[],
      source: source as { kind: string },
    }),
  );
const assistantMessage = fc
  .tuple(id, fc.array(fc.oneof(text, reasoning, image, toolCall), { maxLength: 4 }), toolName)
  .map(
    ([messageId, content, model]): Message => ({
      id: messageId,
      role: 'assistant',
      content: content as AssistantContentBlock[],
      source: { kind: 'model', provider: 'scripted', model },
    }),
  );
const toolMessage = fc
  .tuple(id, callId, fc.array(fc.oneof(plainText, image), { maxLength: 3 }), fc.boolean())
  .map(
    ([messageId, toolCallId, content, isError]): Message => ({
      id: messageId,
      role: 'tool',
      content: [
        {
          type: 'tool-result',
          toolCallId,
          content: content as ToolResultContentBlock[],
          ...(isError ? { isError: true } : {}),
        },
      ],
    }),
  );
const messages = fc.array(fc.oneof(userMessage, assistantMessage, toolMessage), { maxLength: 8 });

// The SDK fetches an image URL in a tool output itself (it has no media type to ask the model
// about), so results here hold inline images only.
const inlineImage = fc
  .base64String({ maxLength: 24 })
  .map((data) => ({ type: 'image' as const, mediaType: 'image/png', data }));
const resultContent = fc.tuple(
  fc.array(fc.oneof(plainText, inlineImage), { maxLength: 3 }),
  fc.boolean(),
);

/** Turns of a user message, the model's answer and a result for each of its tool calls. */
const conversation: fc.Arbitrary<Message[]> = fc
  .array(
    fc.tuple(
      userMessage,
      assistantMessage,
      fc.array(resultContent, { minLength: 4, maxLength: 4 }),
    ),
    {
      maxLength: 3,
    },
  )
  .map((turns) => {
    let next = 0;
    return turns.flatMap(([user, assistant, results]) => {
      // Call ids are unique across the conversation and each call gets a result, as providers require.
      const content = (assistant.content as AssistantContentBlock[]).map((block) =>
        block.type === 'tool-call' ? { ...block, id: `call_${next++}` } : block,
      );
      const calls = content.filter((block) => block.type === 'tool-call');
      const tools = calls.map((call, index): Message => {
        const [blocks, isError] = results[index] ?? [[], false];
        return {
          id: `${assistant.id}-${index}`,
          role: 'tool',
          content: [
            {
              type: 'tool-result',
              toolCallId: call.id,
              content: blocks as ToolResultContentBlock[],
              ...(isError ? { isError: true } : {}),
            },
          ],
        };
      });
      return [user, { ...assistant, content } as Message, ...tools];
    });
  });

/** An AI SDK conversation in the forms both sides know: results follow the calls they answer. */
const modelConversation: fc.Arbitrary<ModelMessage[]> = fc
  .array(
    fc.tuple(
      fc.string(),
      fc.array(fc.tuple(callId, toolName, fc.dictionary(fc.constantFrom('a', 'b'), fc.integer())), {
        maxLength: 2,
      }),
      fc.string(),
      fc.boolean(),
    ),
    { minLength: 1, maxLength: 3 },
  )
  .map((turns) =>
    turns.flatMap(([question, calls, answer, failed]): ModelMessage[] => {
      const unique = calls.filter(
        (call, index) => calls.findIndex((other) => other[0] === call[0]) === index,
      );
      const out: ModelMessage[] = [{ role: 'user', content: [{ type: 'text', text: question }] }];
      if (unique.length > 0) {
        out.push({
          role: 'assistant',
          content: unique.map(([toolCallId, name, input]) => ({
            type: 'tool-call' as const,
            toolCallId,
            toolName: name,
            input,
          })),
        });
        out.push({
          role: 'tool',
          content: unique.map(([toolCallId, name]) => ({
            type: 'tool-result' as const,
            toolCallId,
            toolName: name,
            output: failed
              ? { type: 'error-text' as const, value: `failed ${name}` }
              : { type: 'text' as const, value: `ran ${name}` },
          })),
        });
      }
      out.push({ role: 'assistant', content: [{ type: 'text', text: answer }] });
      return out;
    }),
  );

/** Model messages without palimpsest's stash, which only the palimpsest side reads. */
function unstashed(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(unstashed);
  if (typeof value !== 'object' || value === null || value instanceof URL) return value;
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) {
    if (key === 'providerOptions') {
      const { palimpsest: _stash, ...rest } = (inner ?? {}) as Record<string, unknown>;
      if (Object.keys(rest).length > 0) out[key] = rest;
    } else if (inner !== undefined) out[key] = unstashed(inner);
  }
  return out;
}

/**
 * The SDK drops an empty text part from a message before any provider sees it; the loop never
 * records one (its input is non-empty, and the stream reader skips empty text), so the
 * comparison gives them a character.
 */
function withoutEmptyText(message: Message): Message {
  if (message.role === 'tool') return message;
  const content = message.content.map((block) =>
    block.type === 'text' && block.text === '' ? { ...block, text: '.' } : block,
  );
  return { ...message, content } as Message;
}

describe('toModelMessages and fromModelMessages', () => {
  it('give back every palimpsest message exactly', () => {
    fc.assert(
      fc.property(messages, (original) => {
        expect(fromModelMessages(toModelMessages(original))).toEqual(original);
      }),
      { numRuns: 300 },
    );
  });

  it('give back every AI SDK message in the forms both sides know', () => {
    fc.assert(
      fc.property(modelConversation, (original) => {
        expect(unstashed(toModelMessages(fromModelMessages(original)))).toEqual(original);
      }),
      { numRuns: 200 },
    );
  });

  it('let the AI SDK build the prompt palimpsest’s request builder builds', async () => {
    await fc.assert(
      fc.asyncProperty(conversation, async (original) => {
        // A prompt needs something to send; the SDK refuses an empty one.
        const list: Message[] = [
          {
            id: 'u0',
            role: 'user',
            content: [{ type: 'text', text: 'start' }],
            source: { kind: 'user' },
          },
          ...original.map(withoutEmptyText),
        ];
        // A model that takes image URLs as they are, so the SDK downloads nothing.
        const model = Object.assign(scriptedModel([{ text: 'ok' }]), {
          supportedUrls: { '*': [/^https?:/], 'image/*': [/^https?:/] },
        });
        await streamText({ model, messages: toModelMessages(list) }).consumeStream();
        const sent = model.calls[0]?.prompt;
        // The SDK notes where it took an image URL from (`originalUrl`); no provider sends that.
        const sentJson = JSON.stringify(unstashed(sent), (key, value) =>
          key === 'originalUrl' ? undefined : value,
        );
        expect(JSON.parse(sentJson)).toEqual(
          JSON.parse(JSON.stringify(buildPrompt(undefined, list))),
        );
      }),
      { numRuns: 60 },
    );
  });
});
