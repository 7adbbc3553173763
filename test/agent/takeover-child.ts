/**
 * A worker for the takeover tests: opens session ID of the store at URL and runs the prompt
 * "ship it" with request id REQUEST. `in-tool`: the model asks for `deploy`, which prints
 * `TOOL_STARTED` (its tool/call durable by then) and never returns. `answered`: the turn runs to
 * its end and is flushed; the worker prints `COMMITTED` and waits to be killed before it would
 * acknowledge, as a server killed between its commit and its reply.
 * Usage: takeover-child.ts URL ID REQUEST in-tool|answered
 */
import { Agent, defineTool } from '../../src/agent/index.js';
import { openSession, openStore } from '../../src/store/index.js';
import { scriptedModel } from '../../src/testing/index.js';

const [url, id, requestId, mode] = process.argv.slice(2) as [string, string, string, string];
const store = await openStore(url);
const session = await openSession(store, id);
const deploy = defineTool({
  name: 'deploy',
  description: 'Deploys the site (never returns in this worker).',
  parameters: { type: 'object', properties: { target: { type: 'string' } } },
  execute: () => {
    process.stdout.write('TOOL_STARTED\n');
    return new Promise<string>(() => {});
  },
});
const model = scriptedModel(
  mode === 'in-tool'
    ? [{ text: 'Deploying now.', toolCalls: [{ name: 'deploy', args: { target: 'prod' } }] }]
    : [{ text: 'Shipped.' }],
);
await new Agent({ session, model, tools: [deploy] }).run('ship it', { requestId });
await session.flush();
process.stdout.write('COMMITTED\n');
setInterval(() => {}, 1000);
