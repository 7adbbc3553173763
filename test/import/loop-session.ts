/**
 * A session palimpsest's own loop records (two turns, parallel tool calls), for the tests that
 * export sessions to a harness's format.
 */
import { z } from 'zod';
import { defineTool, runTurn } from '../../src/agent/index.js';
import { Session } from '../../src/core/index.js';
import { scriptedModel } from '../../src/testing/index.js';

const echo = defineTool({
  name: 'echo',
  description: 'Returns its text.',
  parameters: z.object({ text: z.string() }),
  execute: ({ text }) => `echo: ${text}`,
});

/** Two turns of the loop: two echo calls in parallel then an answer, one call then an answer. */
export async function loopSession(): Promise<Session> {
  const session = Session.create({ id: 'loop' });
  for (const [input, script] of [
    [
      'Echo twice.',
      [
        {
          toolCalls: [
            { name: 'echo', args: { text: 'a' } },
            { name: 'echo', args: { text: 'b' } },
          ],
        },
        { text: 'Echoed a and b.' },
      ],
    ],
    [
      'And once more.',
      [{ toolCalls: [{ name: 'echo', args: { text: 'c' } }] }, { text: 'Echoed c.' }],
    ],
  ] as const) {
    await runTurn({ session, model: scriptedModel([...script]), tools: [echo], input });
  }
  return session;
}
