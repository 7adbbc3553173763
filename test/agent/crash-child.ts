/**
 * A child process for the agent crash test: runs one turn on a JSONL session whose tool never
 * returns, prints `TOOL_STARTED` once the tool runs (its tool/call is durable by then), and
 * waits to be killed.
 */
import { defineTool, runTurn } from '../../src/agent/index.js';
import { openSession, openStore } from '../../src/store/index.js';
import { scriptedModel } from '../../src/testing/index.js';

const [directory, id] = process.argv.slice(2);
const store = await openStore(`jsonl:${directory}`);
const session = await openSession(store, id ?? 'crash');
const deploy = defineTool({
  name: 'deploy',
  description: 'Deploys the site (never returns in this test).',
  parameters: { type: 'object', properties: { target: { type: 'string' } } },
  execute: () => {
    process.stdout.write('TOOL_STARTED\n');
    return new Promise<string>(() => {});
  },
});
const model = scriptedModel([
  { text: 'Deploying now.', toolCalls: [{ name: 'deploy', args: { target: 'prod' } }] },
]);
await runTurn({ session, model, tools: [deploy], input: 'ship it' });
