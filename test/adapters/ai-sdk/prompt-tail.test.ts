/**
 * How the middleware reads a prompt against the session: a prompt message it read once is not
 * converted again while it stays the same data, and that shortcut gives the answers converting
 * every message would. Each test here fails when the shortcut trusts what it must not: a message
 * changed in place since it was read, or a derived message replaced after it.
 */
import type { LanguageModelV3Message } from '@ai-sdk/provider';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { equalsPlainCopy, NO_COPY, plainCopy } from '../../../src/adapters/ai-sdk/plain-data.js';
import { readPrompt } from '../../../src/adapters/ai-sdk/prompt-tail.js';
import { defineTool, runTurn } from '../../../src/agent/index.js';
import { pruneToolResults } from '../../../src/compaction/index.js';
import { type Message, Session } from '../../../src/core/index.js';
import { buildPrompt } from '../../../src/model/index.js';
import { scriptedModel } from '../../../src/testing/index.js';

const readFile = defineTool({
  name: 'read_file',
  description: 'Reads a file.',
  parameters: z.object({ path: z.string() }),
  execute: ({ path }) => (path === 'big.ts' ? 'x'.repeat(5000) : `contents of ${path}`),
});

/** A turn: two tool calls (a short result, then a long one), then an answer. */
async function toolSession(): Promise<Session> {
  const session = Session.create();
  await runTurn({
    session,
    model: scriptedModel([
      {
        text: 'Reading both.',
        toolCalls: [
          { name: 'read_file', args: { path: 'a.ts' } },
          { name: 'read_file', args: { path: 'big.ts' } },
        ],
      },
      { text: 'Both read.' },
    ]),
    tools: [readFile],
    input: 'Read the files.',
  });
  return session;
}

/** The provider prompt of `messages`, as fresh objects a test may change. */
function promptOf(messages: readonly Message[]): LanguageModelV3Message[] {
  return structuredClone(buildPrompt(undefined, messages));
}

const next: LanguageModelV3Message = { role: 'user', content: [{ type: 'text', text: 'And?' }] };

function texts(messages: readonly Message[]): string[] {
  return messages.map((message) =>
    message.role === 'tool'
      ? `result ${message.content[0].toolCallId}`
      : message.content.map((block) => (block.type === 'text' ? block.text : block.type)).join(),
  );
}

describe('readPrompt', () => {
  it('reads a prompt again, its messages read once, as it read it the first time', async () => {
    const session = await toolSession();
    const derived = session.deriveMessages();
    const prompt = [...promptOf(derived), next];
    const first = readPrompt(session, prompt, {}, 0);
    const again = readPrompt(session, prompt, {}, 0);
    expect(texts(first.added)).toEqual(['And?']);
    expect(texts(again.added)).toEqual(['And?']);
    expect(again.sameOnWire([...derived, ...again.added])).toBe(true);
    expect(again.sameOnWire(derived)).toBe(false);
  });

  it('reads a message changed in place since it was read as the changed message', async () => {
    const session = await toolSession();
    const prompt = [...promptOf(session.deriveMessages()), next];
    readPrompt(session, prompt, {}, 0);
    const answer = prompt[prompt.length - 2];
    if (answer?.role !== 'assistant' || answer.content[0]?.type !== 'text')
      throw new Error('shape');
    answer.content[0].text = 'An answer the model never gave.';
    // The new messages follow the last one the log holds: the answer is among them now (the
    // middleware refuses it, as an assistant message the session did not record).
    const reading = readPrompt(session, prompt, {}, 0);
    expect(texts(reading.added)).toEqual(['An answer the model never gave.', 'And?']);
    expect(reading.sameOnWire([...session.deriveMessages(), ...reading.added])).toBe(false);
  });

  it('reads a prompt whose tool message goes on after the results the session holds', async () => {
    const full = await toolSession();
    const resultSeqs = full.events.filter((event) => event.type === 'tool/result');
    const firstResult = resultSeqs[0]?.seq as number;
    const partial = Session.create({ seed: full.events.slice(0, firstResult + 1) });
    const [user, ask, held, pending] = full.deriveMessages();
    expect(texts(partial.deriveMessages())).toEqual(texts([user, ask, held] as Message[]));
    const prompt = promptOf([user, ask, held, pending] as Message[]);
    // The two results travel in one tool message; the session holds the first.
    expect(prompt.map((message) => message.role)).toEqual(['user', 'assistant', 'tool']);
    for (const reading of [
      readPrompt(partial, prompt, {}, 0),
      readPrompt(partial, prompt, {}, 0),
    ]) {
      expect(texts(reading.added)).toEqual(texts([pending] as Message[]));
      expect(reading.sameOnWire([...partial.deriveMessages(), ...reading.added])).toBe(true);
    }
  });

  it('compares a message read once with what follows it in the surface now, not then', async () => {
    const session = await toolSession();
    const prompt = [...promptOf(session.deriveMessages()), next];
    // Read once: the tool message's two results are matched with the surface's.
    readPrompt(session, prompt, {}, 0);
    // The long result is replaced by an excerpt; the short one before it stays.
    expect(pruneToolResults(session, { keepRecentTurns: 0 }).prunedSeqs).toHaveLength(1);
    const reading = readPrompt(session, prompt, {}, 0);
    expect(texts(reading.added)).toEqual(['And?']);
    expect(reading.sameOnWire([...session.deriveMessages(), ...reading.added])).toBe(false);
  });
});

describe('readPrompt, once the surface is the prompt', () => {
  const user = (text: string): LanguageModelV3Message => ({
    role: 'user',
    content: [{ type: 'text', text }],
  });

  /** Reads `prompt`, appends what it adds as the middleware would, and compares the surface. */
  function absorb(session: Session, prompt: readonly LanguageModelV3Message[]) {
    const reading = readPrompt(session, prompt, {}, 0);
    for (const message of reading.added) {
      if (message.role !== 'user') throw new Error('expected user messages');
      session.append('user/message', message, { surfaceOp: 'append' });
    }
    return reading;
  }

  it('takes each new message as the surface message at its own position', async () => {
    const session = await toolSession();
    const prompt = [...promptOf(session.deriveMessages()), user('One'), user('Two')];
    expect(absorb(session, prompt).sameOnWire(session.deriveMessages())).toBe(true);
    // 'One' where the surface has 'Two': not the surface, whatever was read before.
    const swapped = [...prompt.slice(0, -1), user('One'), next];
    const reading = readPrompt(session, swapped, {}, 0);
    expect(texts(reading.added)).toEqual(['One', 'One', 'And?']);
    expect(reading.sameOnWire([...session.deriveMessages(), ...reading.added])).toBe(false);
  });

  it('keeps a new message as it was read, though it changes before the surface is compared', async () => {
    const session = await toolSession();
    const prompt = [...promptOf(session.deriveMessages()), user('One')];
    const reading = absorb(session, prompt);
    // A beforeStep hook changes the prompt's message after it was read.
    const changed = prompt[prompt.length - 1];
    if (changed?.role !== 'user' || changed.content[0]?.type !== 'text') throw new Error('shape');
    changed.content[0].text = 'Changed';
    expect(reading.sameOnWire(session.deriveMessages())).toBe(true);
    const again = readPrompt(session, [...prompt, next], {}, 0);
    expect(texts(again.added)).toEqual(['Changed', 'And?']);
  });
});

describe('plainCopy and equalsPlainCopy', () => {
  it('copies deeply: a change to the original afterwards makes them differ', () => {
    const original = {
      text: 'a',
      list: [1, { deep: true }],
      bytes: new Uint8Array([1, 2, 3]),
      url: new URL('https://example.com/a.png'),
    };
    const copy = plainCopy(original);
    expect(equalsPlainCopy(original, copy)).toBe(true);
    const changes: Array<() => void> = [
      () => {
        (original.list[1] as { deep: boolean }).deep = false;
      },
      () => {
        original.list.push(2);
      },
      () => {
        original.bytes[0] = 9;
      },
      () => {
        original.url.pathname = '/b.png';
      },
    ];
    for (const change of changes) {
      const before = plainCopy(original);
      change();
      expect(equalsPlainCopy(original, before)).toBe(false);
    }
  });

  it('tells apart what a conversion could read differently', () => {
    const pairs: Array<[unknown, unknown]> = [
      [{ a: 1 }, { a: 1, b: undefined }],
      [{ a: undefined }, {}],
      [{ a: 0 }, { a: -0 }],
      ['1', 1],
      [[1], { 0: 1 }],
      [new Uint8Array([1]), Buffer.from([1])],
      [new Uint8Array([1]), [1]],
      [{ a: 'x' }, Object.assign(Object.create(null), { a: 'x' })],
      // Keys in another order: unequal, which only costs converting the message again.
      [
        { a: 1, b: 2 },
        { b: 2, a: 1 },
      ],
    ];
    for (const [a, b] of pairs) {
      expect(equalsPlainCopy(b, plainCopy(a))).toBe(false);
      expect(equalsPlainCopy(a, plainCopy(b))).toBe(false);
    }
    expect(equalsPlainCopy({ a: Number.NaN }, plainCopy({ a: Number.NaN }))).toBe(true);
  });

  it('copies nothing but plain data', () => {
    const cycle: { self?: unknown } = {};
    cycle.self = cycle;
    for (const value of [new Date(0), new Map(), { at: new Date(0) }, [() => 1], cycle]) {
      expect(plainCopy(value)).toBe(NO_COPY);
    }
    // Shared parts are data, not a cycle.
    const shared = { a: 1 };
    expect(equalsPlainCopy({ x: shared, y: shared }, plainCopy({ x: shared, y: shared }))).toBe(
      true,
    );
  });
});
