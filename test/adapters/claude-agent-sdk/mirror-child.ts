/**
 * A child process for the mirror's kill test: appends the recorded batches of a Claude Code run,
 * in order, through a `ClaudeTranscriptStore` over a JSONL store, printing `APPENDED <n>` after
 * each, and waits to be killed.
 */
import { readFileSync } from 'node:fs';
import { ClaudeTranscriptStore } from '../../../src/adapters/claude-agent-sdk/index.js';
import { openStore } from '../../../src/store/index.js';
import type { MirrorBatch } from './claude-code-rig.js';

const [batchesFile, directory] = process.argv.slice(2);
const batches = JSON.parse(readFileSync(batchesFile ?? '', 'utf8')) as MirrorBatch[];
const mirror = new ClaudeTranscriptStore(await openStore(`jsonl:${directory}`));
for (const [index, { key, entries }] of batches.entries()) {
  await mirror.append(key, entries);
  process.stdout.write(`APPENDED ${index + 1}\n`);
}
await new Promise(() => {});
