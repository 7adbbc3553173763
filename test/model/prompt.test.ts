/**
 * The provider prompt built per step from a session's message list: it extends the previous
 * step's prompt, and must be equal to the prompt built from scratch (from copies of the
 * messages, which no cache has seen) after appends, replaces and forks, while no prompt handed
 * over ever changes.
 */
import type { LanguageModelV3Prompt } from '@ai-sdk/provider';
import { describe, expect, it } from 'vitest';
import { defineTool, rebuildRequest, runTurn } from '../../src/agent/index.js';
import { compact, pruneToolResults } from '../../src/compaction/index.js';
import {
  forkSession,
  type MessageList,
  Session,
  type SessionEvent,
  type ToolResultData,
  type UserMessage,
} from '../../src/core/index.js';
import { buildPrompt } from '../../src/model/index.js';
import { scriptedModel } from '../../src/testing/index.js';

/** The prompt built whole from copies of the messages: no conversion cached, no earlier prompt. */
function fromScratch(system: string | undefined, list: MessageList): LanguageModelV3Prompt {
  return buildPrompt(system, structuredClone([...list]));
}

function expectFromScratch(session: Session, system?: string): LanguageModelV3Prompt {
  const list = session.deriveMessageList();
  const prompt = buildPrompt(system, list);
  expect(prompt).toEqual(fromScratch(system, list));
  return prompt;
}

function user(session: Session, id: string, text = `question ${id}`): SessionEvent {
  const data: UserMessage = {
    id,
    role: 'user',
    content: [{ type: 'text', text }],
    source: { kind: 'user' },
  };
  return session.append('user/message', data, { surfaceOp: 'append' });
}

function assistant(session: Session, id: string, calls: readonly [string, string][]): SessionEvent {
  return session.append(
    'assistant/message',
    {
      turn: 0,
      step: 0,
      message: {
        id,
        role: 'assistant',
        content: [
          { type: 'text', text: `answer ${id}` },
          ...calls.map(([callId, name]) => ({
            type: 'tool-call' as const,
            id: callId,
            name,
            arguments: `{"id":"${callId}"}`,
          })),
        ],
        source: { kind: 'model', provider: 'test', model: 'test-model' },
      },
      finishReason: calls.length === 0 ? 'stop' : 'tool-calls',
    },
    { surfaceOp: 'append' },
  );
}

function result(session: Session, id: string, callId: string): SessionEvent {
  return session.append(
    'tool/result',
    {
      turn: 0,
      step: 0,
      message: {
        id,
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId: callId,
            content: [{ type: 'text', text: `out ${id}` }],
          },
        ],
      },
    },
    { surfaceOp: 'append' },
  );
}

describe('buildPrompt over a session’s message list', () => {
  it('equals the prompt built from scratch after each append, tool results merged per run', () => {
    const session = Session.create();
    user(session, 'u1');
    expectFromScratch(session, 'Be brief.');
    assistant(session, 'a1', [
      ['c1', 'read'],
      ['c2', 'grep'],
    ]);
    expectFromScratch(session, 'Be brief.');
    result(session, 'r1', 'c1');
    const one = expectFromScratch(session, 'Be brief.');
    result(session, 'r2', 'c2');
    const both = expectFromScratch(session, 'Be brief.');
    expect(one.at(-1)).toMatchObject({ role: 'tool', content: [{ toolName: 'read' }] });
    expect(both.at(-1)).toMatchObject({
      role: 'tool',
      content: [{ toolName: 'read' }, { toolName: 'grep' }],
    });
    expect(both).toHaveLength(one.length);
    user(session, 'u2');
    result(session, 'r3', 'c9');
    assistant(session, 'a2', [['c1', 'edit']]);
    result(session, 'r4', 'c1');
    const last = expectFromScratch(session, 'Be brief.');
    expect(last.slice(-3).map((message) => message.content)).toMatchObject([
      [{ toolName: 'unknown' }],
      expect.anything(),
      [{ toolName: 'edit' }],
    ]);
  });

  it('never changes a prompt it handed over, even when the caller changed a later one', () => {
    const session = Session.create();
    user(session, 'u1');
    assistant(session, 'a1', [
      ['c1', 'read'],
      ['c2', 'grep'],
    ]);
    result(session, 'r1', 'c1');
    const first = buildPrompt('Be brief.', session.deriveMessageList());
    const firstCopy = structuredClone(first);
    result(session, 'r2', 'c2');
    const second = buildPrompt(undefined, session.deriveMessageList());
    second.push({ role: 'user', content: [{ type: 'text', text: 'planted' }] });
    second.splice(0, 1);
    user(session, 'u2');
    expectFromScratch(session, 'Be brief.');
    expect(first).toEqual(firstCopy);
  });

  it('follows the system prompt of each call: added, changed and left out', () => {
    const session = Session.create();
    user(session, 'u1');
    expectFromScratch(session, 'First.');
    user(session, 'u2');
    expectFromScratch(session, 'Second.');
    expectFromScratch(session, undefined);
    expect(expectFromScratch(session, '')[0]).toMatchObject({ role: 'user' });
  });

  it('builds an older list of a session whole after a newer one was built', () => {
    const session = Session.create();
    user(session, 'u1');
    assistant(session, 'a1', [['c1', 'read']]);
    const older = session.deriveMessageList();
    result(session, 'r1', 'c1');
    user(session, 'u2');
    expectFromScratch(session, 'Be brief.');
    expect(buildPrompt('Be brief.', older)).toEqual(fromScratch('Be brief.', older));
    expect(buildPrompt('Be brief.', older)).toHaveLength(3);
    user(session, 'u3');
    expectFromScratch(session, 'Be brief.');
  });

  it('equals the prompt built from scratch after a summary replace and a result rewrite', () => {
    const session = Session.create();
    for (let turn = 0; turn < 4; turn++) {
      user(session, `u${turn}`);
      assistant(session, `a${turn}`, [[`c${turn}`, 'read']]);
      result(session, `r${turn}`, `c${turn}`);
      expectFromScratch(session, 'Be brief.');
    }
    const seqs = session.surface.seqs;
    session.append(
      'user/message',
      {
        id: 's1',
        role: 'user',
        content: [{ type: 'text', text: 'Summary.' }],
        source: { kind: 'summary' },
      },
      {
        surfaceOp: { op: 'replace', start: seqs[0] as number, end: seqs[5] as number },
        sourceEventSeqs: seqs.slice(0, 6),
      },
    );
    expectFromScratch(session, 'Be brief.');
    const last = seqs.at(-1) as number;
    const original = session.event(last)?.data as ToolResultData;
    const [block] = original.message.content;
    session.append(
      'tool/result',
      {
        ...original,
        message: {
          ...original.message,
          content: [{ ...block, content: [{ type: 'text', text: 'out r3 (pruned)' }] }],
        },
      },
      { surfaceOp: { op: 'replace', start: last, end: last }, sourceEventSeqs: [last] },
    );
    expect(JSON.stringify(expectFromScratch(session, 'Be brief.'))).toContain('(pruned)');
    result(session, 'r9', 'c3');
    user(session, 'u9');
    expectFromScratch(session, 'Be brief.');
  });

  it('gives a fork and its parent each the prompt built from scratch as both go on', () => {
    const parent = Session.create();
    user(parent, 'u1');
    assistant(parent, 'a1', [['c1', 'read']]);
    result(parent, 'r1', 'c1');
    expectFromScratch(parent, 'Be brief.');
    const child = forkSession(parent);
    expectFromScratch(child, 'Be brief.');
    user(child, 'child');
    user(parent, 'parent');
    expect(expectFromScratch(child, 'Be brief.').at(-1)).toMatchObject({
      content: [{ text: 'question child' }],
    });
    expect(expectFromScratch(parent, 'Be brief.').at(-1)).toMatchObject({
      content: [{ text: 'question parent' }],
    });
  });
});

const read = defineTool({
  name: 'read',
  description: 'Reads a document.',
  parameters: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
  execute: (args) => `document ${String(args.id)}: ${'text '.repeat(600)}`,
});

describe('the prompts the agent loop sends', () => {
  it('are each the request rebuilt from the log, across steps, compaction and pruning', async () => {
    const session = Session.create();
    const model = scriptedModel(
      [
        (request, call) =>
          request.prompt.at(-1)?.role === 'tool'
            ? { text: `Read (call ${call}).` }
            : {
                toolCalls: [
                  { name: 'read', args: { id: `d${call}` } },
                  { name: 'read', args: { id: `e${call}` } },
                ],
              },
      ],
      { loop: true },
    );
    const turns: number[] = [];
    const run = async (input: string) => {
      const end = await runTurn({ session, model, tools: [read], system: 'You read.', input });
      turns.push(end.turn);
    };
    await run('read one');
    await run('read two');
    await run('read three');
    pruneToolResults(session, { keepRecentTurns: 1, minChars: 100 });
    await run('read four');
    const writer = scriptedModel([{ text: 'Summary: documents were read.' }]);
    expect((await compact(session, { model: writer, keepRecentTokens: 500 })).replaced).toBe(true);
    await run('read five');
    const sent = model.calls.map((call) => call.prompt);
    const rebuilt = turns.flatMap((turn) => [
      rebuildRequest(session, turn, 1).callOptions.prompt,
      rebuildRequest(session, turn, 2).callOptions.prompt,
    ]);
    expect(sent).toHaveLength(10);
    expect(sent).toEqual(rebuilt);
    expect(JSON.stringify(sent[9])).toContain('Summary: documents were read.');
    expect(JSON.stringify(sent[7])).toContain('pruned');
  });
});
