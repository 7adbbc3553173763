/**
 * Subagents, offline: a parent agent hands two tasks to a `researcher` subagent in one step; both
 * run at once, each in a child session of the same JSONL store, linked to the call that ran it.
 * Then the links are followed both ways, the cost is rolled up over the tree, and a child is
 * continued like any session.
 *
 * Run with `npm run example:subagents`. Scripted models stand in for providers.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, costTree, runTurn, subagentTool } from 'palimpsest/agent';
import { inspectSession, openSession, openStore } from 'palimpsest/store';
import { scriptedModel } from 'palimpsest/testing';

const directory = mkdtempSync(join(tmpdir(), 'palimpsest-subagents-'));
const store = await openStore(`jsonl:${directory}`);

// The child agent: its own model, instructions and tools (none here). A scripted model answers
// each task it is given by echoing it.
const researcher = subagentTool({
  name: 'researcher',
  description: 'Researches one question and answers it in a sentence.',
  instructions: 'You research one question. Answer in one sentence.',
  model: scriptedModel(
    [
      (request) => ({
        text: `Researched: ${JSON.stringify(request.prompt.at(-1)?.content)}`,
        usage: { inputTokens: 40, outputTokens: 12 },
      }),
    ],
    { loop: true },
  ),
});

// The parent calls the subagent twice in one step: the two children run at the same time.
const parent = await openSession(store, 'trip');
const result = await runTurn({
  session: parent,
  tools: [researcher],
  input: 'Plan a weekend: weather and museums in Lisbon.',
  model: scriptedModel([
    {
      toolCalls: [
        { id: 'call_weather', name: 'researcher', args: { task: 'Weekend weather in Lisbon?' } },
        { id: 'call_museums', name: 'researcher', args: { task: 'Best museums in Lisbon?' } },
      ],
      usage: { inputTokens: 120, outputTokens: 30 },
    },
    { text: 'Sunny; see the Gulbenkian.', usage: { inputTokens: 200, outputTokens: 10 } },
  ]),
});
await parent.close();
for (const answer of result.toolResults) {
  console.log(`${answer.callId} ran in ${answer.child?.session}`);
}
// call_weather ran in trip/subagents/call_weather
// call_museums ran in trip/subagents/call_museums

// The child names its parent and the call, in its header.
const child = await inspectSession(store, 'trip/subagents/call_weather');
console.log(child.header.metadata?.subagentOf);
// { session: 'trip', toolCallId: 'call_weather' }

// Cost and usage roll up over the children (here, calls: the scripted model has no price).
const tree = await costTree(store, 'trip');
console.log(`${tree.rolledUp.calls} calls, ${tree.children.length} children`);
// 4 calls, 2 children

// A child is a session like any other: continue it with a follow-up question.
const live = await openSession(store, 'trip/subagents/call_weather');
const more = await new Agent({
  session: live,
  model: scriptedModel([{ text: 'Light rain on Sunday afternoon.' }]),
}).run('Any rain?');
console.log(more.text);
// Light rain on Sunday afternoon.
await live.close();

await store.close();
rmSync(directory, { recursive: true, force: true });
