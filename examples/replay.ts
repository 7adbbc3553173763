/**
 * Replay, offline: an agent run is recorded into a JSONL store, then served back as a model so
 * the same agent re-runs without a provider (strictly: every request must be one the log holds);
 * a tool that now returns something else is reported instead of failing the run (`tools-live`);
 * a new question asked in a fork of the recording is answered by a live model (`fork-on-miss`);
 * and the cache table says what each call could read from a provider's prompt cache.
 *
 * Run with `npm run example:replay`. The scripted model stands in for a provider.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { forkSession, Session } from 'palimpsest';
import {
  cacheReport,
  checkRequestDigests,
  defineTool,
  runTurn,
  toEvalCase,
} from 'palimpsest/agent';
import { replayModel } from 'palimpsest/ai-sdk';
import { inspectSession, openSession, openStore } from 'palimpsest/store';
import { scriptedModel } from 'palimpsest/testing';

const readFile = (contents: string) =>
  defineTool({
    name: 'read_file',
    description: 'Reads a file of the project.',
    parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
    execute: () => contents,
  });
const agent = {
  system: 'You are a careful coding agent.',
  tools: [readFile('export const retries = 3;')],
};
const retriesQuestion = 'How many retries does the build make?';
const questions = [retriesQuestion, 'Where is that set?'];

const dir = mkdtempSync(join(tmpdir(), 'palimpsest-replay-'));
try {
  // 1. Record: the agent on a model (here scripted), into a store.
  const store = await openStore(`jsonl:${dir}`);
  const recording = await openSession(store, 'recorded');
  const model = scriptedModel([
    { toolCalls: [{ name: 'read_file', args: { path: 'src/config.ts' } }] },
    { text: 'Three.' },
    { text: 'In src/config.ts.' },
  ]);
  for (const input of questions) await runTurn({ session: recording, model, ...agent, input });
  await recording.close();

  // 2. Replay strictly: the same agent, offline, answered from the log.
  const recorded = await inspectSession(store, 'recorded');
  const rerun = Session.create({ id: 'rerun' });
  const strict = replayModel(recorded);
  const answers: string[] = [];
  for (const input of questions) {
    answers.push((await runTurn({ session: rerun, model: strict, ...agent, input })).text);
  }
  console.log('replayed:', answers); // [ 'Three.', 'In src/config.ts.' ]
  check(answers.join(' ') === 'Three. In src/config.ts.', 'the strict replay answers as recorded');
  check(checkRequestDigests(rerun).length === 0, 'every replayed request has its recorded digest');

  // 3. tools-live: the tool now returns something else; the run goes on and says so.
  const changed = { ...agent, tools: [readFile('export const retries = 5;')] };
  const toolsLive = replayModel(recorded, { mode: 'tools-live' });
  await runTurn({
    session: Session.create(),
    model: toolsLive,
    ...changed,
    input: retriesQuestion,
  });
  const [difference] = toolsLive.report().toolDifferences;
  console.log(
    'tool result changed:',
    difference?.toolName,
    difference?.recorded,
    '->',
    difference?.found,
  );
  check(difference?.found.includes('retries = 5') === true, 'tools-live reports the new result');

  // 4. fork-on-miss: a new question in a fork of the recording, answered live.
  const fork = forkSession(recorded, undefined, { id: 'what-if' });
  const live = scriptedModel([{ text: 'Raise it in src/config.ts.' }]);
  const forkOnMiss = replayModel(recorded, { mode: 'fork-on-miss', live });
  const whatIf = await runTurn({
    session: fork,
    model: forkOnMiss,
    ...agent,
    input: 'Can I raise it?',
  });
  console.log('answered live in the fork:', whatIf.text, forkOnMiss.report().live, 'call(s)');
  check(fork.header.parentSession === 'recorded', 'the fork names the recording as its parent');

  // 5. The cache table and an eval case, from the same log.
  const cache = cacheReport(recorded);
  for (const call of cache.calls) {
    console.log(
      `#${call.seq}: ${call.requestTokens} tokens, ${call.sharedTokens} shared with the call before`,
    );
  }
  check(cache.breaks === 0, 'a growing history never breaks the prefix');
  const lastAnswer = cache.calls.at(-1)?.seq ?? -1;
  console.log('eval case:', JSON.stringify(toEvalCase(recorded, lastAnswer).messages.at(-1)));
  await store.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}

function check(condition: boolean, what: string): void {
  if (!condition) throw new Error(`expected ${what}`);
}
