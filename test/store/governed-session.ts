/**
 * The session the governance tests share: three turns recorded through a live store session by
 * the agent loop, with a personal marker in a user message, a tool's output and the model's
 * streamed answer (so in stream chunks too), checkpointed after each turn.
 */
import { defineTool, runTurn } from '../../src/agent/index.js';
import type { SessionEvent } from '../../src/core/index.js';
import type { SessionStore } from '../../src/store/index.js';
import { type CheckpointSigner, openSession } from '../../src/store/index.js';
import { scriptedModel } from '../../src/testing/index.js';

/** What the tests erase and then search every stored byte for. */
export const MARKER = 'ada.lovelace.1815@example.org';
/** The same marker as a pattern that erases every occurrence. */
export const MARKER_PATTERN = /ada\.lovelace\.1815@example\.org/g;

/** Records the shared session `id` in `store`; checkpoints after each turn unless `false`. */
export async function recordGovernedSession(
  store: SessionStore,
  id: string,
  options: { readonly checkpoints?: false; readonly signer?: CheckpointSigner } = {},
): Promise<void> {
  const live = await openSession(store, id, {
    durability: { mode: 'each' },
    ...(options.checkpoints === false
      ? {}
      : {
          checkpoints: {
            every: 'turn' as const,
            ...(options.signer === undefined ? {} : { signer: options.signer }),
          },
        }),
  });
  const crm = defineTool({
    name: 'crm_lookup',
    description: 'Looks a customer up.',
    parameters: { type: 'object', properties: { id: { type: 'string' } } },
    execute: async () => `customer 42: Ada Lovelace <${MARKER}>, plan gold`,
  });
  const model = scriptedModel([
    { toolCalls: [{ name: 'crm_lookup', args: { id: '42' } }] },
    { text: `Found you: your address on file is ${MARKER}, and your plan is gold.` },
    { text: 'Your plan renews on the first of the month.' },
    { text: 'Anything else?' },
  ]);
  const turn = { session: live, model, tools: [crm], system: 'Be brief.' };
  await runTurn({ ...turn, input: `Hi, I am ${MARKER}. What plan am I on?` });
  await runTurn({ ...turn, input: 'When does it renew?' });
  await runTurn({ ...turn, input: 'Thanks.' });
  await live.close();
}

/** `events` with the first tool result's text changed: what one who tampers with a log does. */
export function withToolResultAltered(events: readonly SessionEvent[]): {
  readonly events: SessionEvent[];
  readonly seq: number;
} {
  const target = events.find((event) => event.type === 'tool/result') as SessionEvent;
  const altered = events.map((event) =>
    event.seq === target.seq
      ? ({
          ...event,
          data: JSON.parse(JSON.stringify(event.data).replace('gold', 'platinum')),
        } as SessionEvent)
      : event,
  );
  return { events: altered, seq: target.seq };
}
