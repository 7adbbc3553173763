/**
 * A child process for the steering crash test: a turn runs a tool that never returns; inside
 * it, the user steers the turn and queues a follow-up (both awaited, so durable), the child
 * prints `QUEUED` and waits to be killed.
 */
import { Agent, defineTool } from '../../src/agent/index.js';
import { openSession, openStore } from '../../src/store/index.js';
import { scriptedModel } from '../../src/testing/index.js';

const [directory, id] = process.argv.slice(2);
const store = await openStore(`jsonl:${directory}`);
const session = await openSession(store, id ?? 'steer-crash');
let agent: Agent | undefined;
const deploy = defineTool({
  name: 'deploy',
  description: 'Deploys the site (never returns in this test).',
  parameters: { type: 'object', properties: { target: { type: 'string' } } },
  execute: async () => {
    await agent?.steer('use the staging target, not prod');
    await agent?.followUp('then tell me the URL');
    process.stdout.write('QUEUED\n');
    return new Promise<string>(() => {});
  },
});
agent = new Agent({
  session,
  model: scriptedModel([
    { text: 'Deploying now.', toolCalls: [{ name: 'deploy', args: { target: 'prod' } }] },
  ]),
  tools: [deploy],
});
await agent.run('ship it');
