/**
 * A worker for the subagent crash test: opens session `parent` of the store at URL and runs a
 * turn whose model hands a task to the `builder` subagent; the child agent calls `deploy`, which
 * prints `CHILD_TOOL_STARTED` (the parent's and the child's tool/call durable by then) and never
 * returns, so the worker is killed with both sessions inside a turn.
 * Usage: subagent-crash-child.ts URL
 */
import { defineTool, runTurn, subagentTool } from '../../src/agent/index.js';
import { openSession, openStore } from '../../src/store/index.js';
import { scriptedModel } from '../../src/testing/index.js';

const [url] = process.argv.slice(2) as [string];
const store = await openStore(url);
const session = await openSession(store, 'parent');
const deploy = defineTool({
  name: 'deploy',
  description: 'Deploys the site (never returns in this worker).',
  parameters: { type: 'object', properties: {} },
  execute: () => {
    process.stdout.write('CHILD_TOOL_STARTED\n');
    return new Promise<string>(() => {});
  },
});
const builder = subagentTool({
  name: 'builder',
  description: 'Builds and deploys the site.',
  model: scriptedModel([{ text: 'Deploying.', toolCalls: [{ name: 'deploy', args: {} }] }]),
  tools: [deploy],
});
await runTurn({
  session,
  model: scriptedModel([
    { toolCalls: [{ id: 'call_build', name: 'builder', args: { task: 'Build and deploy.' } }] },
  ]),
  tools: [builder],
  input: 'ship it',
});
