/**
 * Subagents: a tool whose every call runs a child agent (its own model, tools and instructions)
 * in a child session of the parent's store. The link is the log's own (design: the harness
 * sessions' subagent link): the parent's `tool/call` names the child before it runs, the child's
 * header names the parent session and call (`metadata.subagentOf`), and the parent's
 * `tool/result` carries the child's final answer and names the child again.
 */
import { createHash } from 'node:crypto';
import type { ChildSessionLink, JsonObject } from '../core/index.js';
import {
  type ChildSessionCall,
  errorRun,
  parseToolArguments,
  TOOL_ERROR,
  type Tool,
  type ToolContext,
  type ToolRun,
} from '../model/index.js';
import { MAX_SESSION_ID_LENGTH } from '../store/contract/store-rules.js';
import { LiveSession, openSession, type SessionStore } from '../store/index.js';
import { AgentError } from './errors.js';
import { indexTools } from './tool-list.js';
import { abortedRun, checkToolBasics } from './tools.js';
import { runTurn } from './turn.js';
import type { TurnConfig } from './types.js';

/** The definition given to {@link subagentTool}. */
export interface SubagentSpec extends Omit<TurnConfig, 'system' | 'barrier'> {
  /** The tool's name, as the parent model calls it (`[a-zA-Z0-9_-]{1,64}`). */
  readonly name: string;
  /** What the parent model reads about the subagent: when to hand it a task. */
  readonly description: string;
  /** The child agent's system prompt. */
  readonly instructions?: string;
  /**
   * The store the child sessions are kept in. Default: the parent session's store, when the
   * parent is a `LiveSession` (opened with `openSession`); a parent recorded any other way needs
   * one here.
   */
  readonly store?: SessionStore;
  /**
   * Characters of the child's answer the parent model gets (default: the parent turn's
   * `maxToolOutputChars`); the whole answer stays in the parent's log and in the child session.
   */
  readonly maxOutputChars?: number;
}

/** Code of the result of a subagent call whose child did not give a final answer. */
export const SUBAGENT_FAILED = 'SUBAGENT_FAILED';

const SUBAGENT_PATH = '/subagents/';

/**
 * The id of the child session that call `callId` of session `parentId` runs in:
 * `<parent>/subagents/<call>`, as imported Claude Code subagents are named, so a retry or a
 * resume of the same call finds the same child. A call id that is not printable ASCII, or an id
 * over the store's limit, gives `subagent-` and a SHA-256 digest of both instead.
 *
 * @example
 * ```ts
 * import { subagentSessionId } from 'palimpsest/agent';
 *
 * console.log(subagentSessionId('chat-1', 'call_7')); // 'chat-1/subagents/call_7'
 * ```
 */
export function subagentSessionId(parentId: string, callId: string): string {
  const id = `${parentId}${SUBAGENT_PATH}${callId}`;
  if (/^[\x20-\x7e]+$/.test(callId) && Buffer.byteLength(id, 'utf8') <= MAX_SESSION_ID_LENGTH) {
    return id;
  }
  const digest = createHash('sha256').update(parentId).update('\0').update(callId).digest('hex');
  return `subagent-${digest}`;
}

/**
 * A tool that hands a task to a child agent. Each call opens the child session
 * {@link subagentSessionId} in the parent's store (its header's `metadata.subagentOf` names the
 * parent session and the call), runs one turn of the child agent there with the model's `task`
 * as the prompt (the call id as the turn's request id, so running the same call again answers
 * from the child's log, or resumes the child's turn a crash interrupted), and returns the child's
 * final text. The parent's `tool/call` names the child before it starts and its `tool/result`
 * names it again; several calls in one step run at the same time, each in its own child.
 *
 * A child that ends its turn unfinished (a provider error, the step limit, a cancellation) or
 * cannot be opened makes the call a `SUBAGENT_FAILED` error result that says why and where, never
 * a failure of the parent's turn. Cancelling the parent's turn cancels the children's.
 *
 * @throws AgentError `INVALID_TOOL` for a spec without a valid name, description or model, or
 *   with a tool the child could not be given.
 *
 * @example
 * ```ts
 * import { runTurn, subagentTool } from 'palimpsest/agent';
 * import { MemoryStore, openSession } from 'palimpsest/store';
 * import { scriptedModel } from 'palimpsest/testing';
 *
 * const researcher = subagentTool({
 *   name: 'researcher',
 *   description: 'Looks a question up and answers it in one paragraph.',
 *   instructions: 'Answer in one sentence.',
 *   model: scriptedModel([{ text: 'Paris is the capital of France.' }]),
 * });
 * const store = new MemoryStore();
 * const session = await openSession(store, 'chat');
 * const result = await runTurn({
 *   session,
 *   tools: [researcher],
 *   input: 'What is the capital of France?',
 *   model: scriptedModel([
 *     { toolCalls: [{ id: 'call_1', name: 'researcher', args: { task: 'Capital of France?' } }] },
 *     { text: 'Paris.' },
 *   ]),
 * });
 * await session.close();
 * console.log(result.toolResults[0]?.child?.session); // 'chat/subagents/call_1'
 * ```
 */
export function subagentTool(spec: SubagentSpec): Tool {
  if (typeof spec !== 'object' || spec === null) {
    throw new AgentError(
      'INVALID_TOOL',
      `expected a subagent definition object, found ${String(spec)}`,
    );
  }
  const name = checkToolBasics(spec.name, { ...spec, execute: () => undefined });
  if (typeof spec.description !== 'string' || spec.description.trim() === '') {
    throw new AgentError(
      'INVALID_TOOL',
      `subagent '${name}': expected a description saying when to call it, found ${typeof spec.description === 'string' ? 'an empty string' : typeof spec.description}`,
    );
  }
  if (typeof spec.model !== 'object' || spec.model === null) {
    throw new AgentError(
      'INVALID_TOOL',
      `subagent '${name}': expected a language model, found ${String(spec.model)}`,
    );
  }
  // The child's tools are checked now, so a bad one fails the definition, not every call.
  indexTools(spec.tools ?? []);
  return Object.freeze({
    name,
    description: spec.description,
    ...(spec.maxOutputChars === undefined ? {} : { maxOutputChars: spec.maxOutputChars }),
    parameters: TASK_PARAMETERS,
    childSession: ({ session, callId }: ChildSessionCall) => ({
      session: subagentSessionId(session.header.id, callId),
    }),
    run: (argumentsText: string, context: ToolContext) =>
      runSubagent(spec, name, argumentsText, context),
  });
}

const TASK_PARAMETERS: JsonObject = {
  type: 'object',
  properties: {
    task: {
      type: 'string',
      description: 'The task, complete: the subagent sees nothing of this conversation but this.',
    },
  },
  required: ['task'],
  additionalProperties: false,
};

async function runSubagent(
  spec: SubagentSpec,
  name: string,
  argumentsText: string,
  context: ToolContext,
): Promise<ToolRun> {
  const parsed = parseToolArguments(name, argumentsText);
  if ('refused' in parsed) return parsed.refused;
  const { task } = parsed.args;
  if (typeof task !== 'string' || task.trim() === '') {
    return errorRun(
      TOOL_ERROR.invalidArguments,
      `The arguments for '${name}' need 'task', the task as non-empty text; found ${task === undefined ? 'no task' : JSON.stringify(task)}.`,
    );
  }
  const parent = context.session;
  const child: ChildSessionLink = { session: subagentSessionId(parent.header.id, context.callId) };
  const failed = (why: string): ToolRun => ({
    ...errorRun(SUBAGENT_FAILED, `Subagent '${name}' (session ${child.session}) ${why}`),
    child,
  });
  const store = spec.store ?? (parent instanceof LiveSession ? parent.store : undefined);
  if (store === undefined) {
    return failed(
      'has no store to run in: the parent session is not a LiveSession, and the subagent was defined without a store.',
    );
  }
  const { instructions } = spec;
  let session: LiveSession;
  try {
    session = await openSession(store, child.session, {
      header: {
        metadata: { subagentOf: { session: parent.header.id, toolCallId: context.callId } },
      },
    });
  } catch (error) {
    return failed(`could not be opened: ${messageOf(error)}`);
  }
  let run: ToolRun;
  try {
    const result = await runTurn({
      ...turnConfig(spec),
      session,
      input: task,
      requestId: context.callId,
      signal: context.signal,
      ...(instructions === undefined ? {} : { system: instructions }),
    });
    if (context.signal.aborted) run = { ...abortedRun(), child };
    else if (result.reason.kind === 'completed') {
      run = { content: [{ type: 'text', text: result.text }], child };
    } else {
      const partial = result.text === '' ? '' : ` Its last text: ${result.text}`;
      run = failed(`did not finish: its turn ended '${result.reason.kind}'.${partial}`);
    }
  } catch (error) {
    run = context.signal.aborted
      ? { ...abortedRun(), child }
      : failed(`failed: ${messageOf(error)}`);
  }
  try {
    await session.close();
  } catch (error) {
    // The answer is only as good as the child's log: one that did not reach the store is lost.
    return failed(`could not be saved: ${messageOf(error)}`);
  }
  return run;
}

/** The child's turn configuration: the spec without what belongs to the tool. */
function turnConfig(spec: SubagentSpec): Omit<TurnConfig, 'system' | 'barrier'> {
  const {
    name: _name,
    description: _description,
    instructions: _instructions,
    store: _store,
    maxOutputChars: _maxOutputChars,
    ...config
  } = spec;
  return config;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
