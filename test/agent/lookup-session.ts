/**
 * The recorded session the request, eval-case and ask-again tests share: a turn that looks a key
 * up and answers, and optionally a follow-up turn answered without tools.
 */
import { defineTool, runTurn, type Tool } from '../../src/agent/index.js';
import { Session } from '../../src/core/index.js';
import { type ScriptedResponse, scriptedModel } from '../../src/testing/index.js';

/** A `lookup` tool that answers every key with `value`. */
export function lookupTool(value = 'forty-two'): Tool {
  return defineTool({
    name: 'lookup',
    description: 'Looks a key up.',
    parameters: { type: 'object', properties: { key: { type: 'string' } } },
    execute: async () => value,
  });
}

/**
 * Session `id`: 'What is the answer?' → a `lookup` call → 'It is forty-two.' (reporting `usage`
 * when given), then the `followUp` question and its answer when given. System prompt 'Be exact.'.
 */
export async function lookupSession(
  id: string,
  options: {
    readonly followUp?: readonly [input: string, answer: string];
    readonly usage?: ScriptedResponse['usage'];
  } = {},
): Promise<Session> {
  const session = Session.create({ id });
  const script: ScriptedResponse[] = [
    { toolCalls: [{ name: 'lookup', args: { key: 'answer' } }] },
    { text: 'It is forty-two.', ...(options.usage === undefined ? {} : { usage: options.usage }) },
  ];
  if (options.followUp !== undefined) script.push({ text: options.followUp[1] });
  const turn = {
    session,
    model: scriptedModel(script),
    tools: [lookupTool()],
    system: 'Be exact.',
  };
  await runTurn({ ...turn, input: 'What is the answer?' });
  if (options.followUp !== undefined) await runTurn({ ...turn, input: options.followUp[0] });
  return session;
}
