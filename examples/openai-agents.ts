/**
 * The OpenAI Agents SDK's own loop, persisting into palimpsest: `run(agent, input, { session })`
 * with a `PalimpsestSession`, two turns with a function tool, then a `popItem` that the log
 * keeps underneath, and a reopen that reads the history back.
 *
 * Offline: the model is a small local server speaking the Responses API with scripted answers
 * (the SDK talks to it through `OpenAIProvider({ baseURL })`, exactly as it talks to OpenAI).
 *
 * Run with `npm run example:openai-agents` (or `npx tsx examples/openai-agents.ts [directory]`).
 */
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, OpenAIProvider, Runner, setTracingDisabled, tool } from '@openai/agents';
import { PalimpsestSession } from 'palimpsest/openai-agents';
import { openStore } from 'palimpsest/store';
import { z } from 'zod';

/** What the scripted model answers, request after request, as Responses API output items. */
const answers = [
  [
    {
      type: 'function_call',
      id: 'fc_1',
      call_id: 'call_1',
      name: 'weather',
      arguments: '{"city":"Lisbon"}',
      status: 'completed',
    },
  ],
  [message('msg_1', 'It is 21 °C and sunny in Lisbon.')],
  [message('msg_2', 'You are welcome!')],
];

function message(id: string, text: string) {
  return {
    type: 'message',
    id,
    role: 'assistant',
    status: 'completed',
    content: [{ type: 'output_text', text, annotations: [] }],
  };
}

/** A Responses API endpoint that answers with the script, one JSON response per request. */
async function scriptedModel(): Promise<{ baseURL: string; close: () => void }> {
  let next = 0;
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      const output = answers[next++] ?? [message('msg_end', 'No more answers.')];
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(
        JSON.stringify({
          id: `resp_${next}`,
          object: 'response',
          created_at: 1767225600,
          status: 'completed',
          model: 'gpt-4.1-mini',
          output,
          usage: { input_tokens: 30, output_tokens: 8, total_tokens: 38 },
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { baseURL: `http://127.0.0.1:${port}/v1`, close: () => server.close() };
}

setTracingDisabled(true); // no traces are sent anywhere: this example stays on the machine
const model = await scriptedModel();
const runner = new Runner({
  modelProvider: new OpenAIProvider({ apiKey: 'offline', baseURL: model.baseURL }),
});
const weather = tool({
  name: 'weather',
  description: 'Current weather for a city.',
  parameters: z.object({ city: z.string() }),
  execute: async ({ city }) => `${city}: 21 °C, sunny`,
});
const agent = new Agent({ name: 'assistant', instructions: 'Be brief.', tools: [weather] });

const directory = process.argv[2] ?? mkdtempSync(join(tmpdir(), 'palimpsest-openai-agents-'));
const store = await openStore(`jsonl:${directory}`);
const session = await PalimpsestSession.open(store, 'weather-chat');

for (const input of ['Is it warm in Lisbon?', 'Thanks!']) {
  const result = await runner.run(agent, input, { session });
  console.log(`> ${input}\n${result.finalOutput}`);
}

const items = await session.getItems();
console.log(`\nhistory: ${items.length} items (${items.map((item) => item.type).join(', ')})`);

// The SDK's popItem (used to "undo" the last exchange): the item leaves the history the model
// gets, and stays in the log under a replace that cites it.
const popped = await session.popItem();
console.log(`popped: ${popped?.type}; history now ${(await session.getItems()).length} items`);
const log = session.session;
console.log(`log: ${log.seq} events, surface: ${log.surface.size} entries`);
await session.close();

// A later process opens the same store and continues from the same history.
const reopened = await PalimpsestSession.open(store, 'weather-chat');
console.log(`reopened: ${(await reopened.getItems()).length} items`);
console.log(`inspect it: npx palimpsest show weather-chat --store jsonl:${directory}`);
await reopened.close();
await store.close();
model.close();
