/**
 * The Claude Agent SDK session store: the cost of mirroring one turn of a Claude Code transcript
 * (a prompt, three attachments, an answer: five entries, about 8 KB) into a palimpsest store, at
 * growing session sizes, beside a floor measured in the same run on the same store: the same
 * entries appended as raw events with no conversation layer (what any mirror must write).
 *
 *   npm run bench:claude-mirror
 *
 * Prints a table. Not a test.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClaudeTranscriptStore } from '../src/adapters/claude-agent-sdk/index.js';
import type { SessionEvent } from '../src/core/index.js';
import { openStore } from '../src/store/index.js';
import { median } from './measure.js';
import { formatRatio, machineInfo } from './report.js';

const TURNS = 1000;
const CHECKPOINTS = [10, 100, 500, 1000];
const WINDOW = 10;
const pad = 'x'.repeat(1500);

type Entry = { type: string; uuid: string; [key: string]: unknown };

/** One turn as Claude Code writes it: a prompt, attachments, the final answer. */
function turn(t: number, parent: string | null): Entry[] {
  const timestamp = new Date(1_800_000_000_000 + t * 1000).toISOString();
  const common = { timestamp, sessionId: 'bench', version: '2.1.337' };
  const attachments = [0, 1, 2].map((i) => ({
    type: 'attachment',
    uuid: `x${t}-${i}`,
    parentUuid: i === 0 ? `u${t}` : `x${t}-${i - 1}`,
    attachment: { type: 'note', text: pad },
    ...common,
  }));
  return [
    {
      type: 'user',
      uuid: `u${t}`,
      parentUuid: parent,
      message: { role: 'user', content: `question ${t}` },
      ...common,
    },
    ...attachments,
    {
      type: 'assistant',
      uuid: `a${t}`,
      parentUuid: `x${t}-2`,
      message: {
        id: `msg_${t}`,
        role: 'assistant',
        model: 'claude-sonnet-4-5',
        content: [{ type: 'text', text: `answer ${t} ${pad}` }],
        stop_reason: 'end_turn',
        usage: { input_tokens: 100, output_tokens: 20 },
      },
      ...common,
    },
  ];
}

/** Milliseconds per turn, appending `TURNS` turns one batch each through `append`. */
async function perTurn(append: (batch: Entry[], t: number) => Promise<void>): Promise<number[]> {
  const times: number[] = [];
  for (let t = 0; t < TURNS; t++) {
    const batch = turn(t, t === 0 ? null : `a${t - 1}`);
    const started = performance.now();
    await append(batch, t);
    times.push(performance.now() - started);
  }
  return times;
}

const key = { projectKey: '-bench', sessionId: 'bench' };
console.log(`Claude Agent SDK mirror, ms per turn (median of ${WINDOW} turns up to each size)`);
console.log(machineInfo());
for (const scheme of ['jsonl', 'sqlite'] as const) {
  const dir = mkdtempSync(join(tmpdir(), 'bench-claude-'));
  const url =
    scheme === 'jsonl' ? `jsonl:${join(dir, 'store')}` : `sqlite:${join(dir, 'store.db')}`;
  const store = await openStore(url);
  const mirror = new ClaudeTranscriptStore(store);
  const mirrored = await perTurn((batch) => mirror.append(key, batch));
  // The floor: the same entries as raw events, appended to a session of their own.
  await store.create({ version: 1, id: 'floor', createdAt: 0 });
  let seq = 0;
  const floor = await perTurn((batch) => {
    const events = batch.map(
      (entry) =>
        ({ seq: seq++, time: 0, type: 'claude-code/entry', data: { entry } }) as SessionEvent,
    );
    return store.append('floor', events, { expectedSeq: seq - batch.length });
  });
  await store.close();
  rmSync(dir, { recursive: true, force: true });
  for (const at of CHECKPOINTS) {
    const ours = median(mirrored.slice(at - WINDOW, at));
    const bare = median(floor.slice(at - WINDOW, at));
    console.log(
      `${scheme.padEnd(6)} turn ${String(at).padStart(4)}: mirror ${ours.toFixed(2)} ms, raw append ${bare.toFixed(2)} ms, ${formatRatio(ours / bare)}`,
    );
  }
}
