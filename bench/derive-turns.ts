/**
 * A narrow benchmark for the per-turn derive of the side-by-side benchmark's conversation at
 * sizes its full plan does not reach: a JSONL session records `turns` turns (204 events, 3
 * messages each), and after each of the last 21 turns both `deriveMessages()` (a frozen array,
 * copied after every change) and `deriveMessageList()` (the list the agent loop reads) run, in
 * alternating order so that neither always pays for the turn's new messages.
 *
 *   node --expose-gc --max-old-space-size=8192 --import tsx bench/derive-turns.ts 5000 10000 20000
 *
 * One process per size, so one size's heap does not tax the next. Prints one line per size:
 * median (min–max) over the last 20 turns (the first of the 21 left out); writes no docs.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openSession } from '../src/store/index.js';
import { openJsonlStore } from '../src/store/jsonl/index.js';
import { consume, median } from './measure.js';
import { Conversation } from './peers/conversation.js';
import { formatDuration } from './report.js';
import { appendTurnEvent, benchClock } from './store-workload.js';

const MEASURED_TURNS = 21;
type Mode = 'array' | 'list';

async function measure(turns: number): Promise<Record<Mode, number[]>> {
  const dir = mkdtempSync(join(tmpdir(), 'palimpsest-derive-turns-'));
  const samples: Record<Mode, number[]> = { array: [], list: [] };
  try {
    const store = await openJsonlStore(dir, { fsync: false });
    const session = await openSession(store, 'bench', { clock: benchClock() });
    const conversation = new Conversation();
    for (let turn = 0; turn < turns; turn++) {
      for (const append of conversation.appends(session.seq)) appendTurnEvent(session, append);
      await session.flush();
      if (turn < turns - MEASURED_TURNS) continue;
      const order: readonly Mode[] = turn % 2 === 0 ? ['array', 'list'] : ['list', 'array'];
      for (const mode of order) {
        const start = process.hrtime.bigint();
        const messages = mode === 'array' ? session.deriveMessages() : session.deriveMessageList();
        samples[mode].push(Number(process.hrtime.bigint() - start));
        consume(messages.length);
      }
    }
    await session.close();
    await store.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return samples;
}

function figure(samples: readonly number[]): string {
  const kept = samples.slice(1);
  return `${formatDuration(median(kept))} (${formatDuration(Math.min(...kept))}–${formatDuration(Math.max(...kept))})`;
}

async function main(): Promise<void> {
  const [first, ...rest] = process.argv.slice(2);
  if (first === '--child') {
    process.stdout.write(`${JSON.stringify(await measure(Number(rest[0])))}\n`);
    return;
  }
  const sizes = [first, ...rest].filter((arg) => arg !== undefined).map(Number);
  for (const turns of sizes.length === 0 ? [5_000, 10_000, 20_000] : sizes) {
    const child = spawnSync(
      process.execPath,
      [...process.execArgv, fileURLToPath(import.meta.url), '--child', String(turns)],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 2 ** 20 },
    );
    if (child.status !== 0) throw new Error(`the ${turns}-turn child failed`);
    const samples = JSON.parse(child.stdout.trim()) as Record<Mode, number[]>;
    process.stdout.write(
      `${turns.toLocaleString('en-US')} turns (${(turns * 3).toLocaleString('en-US')} messages): deriveMessages() ${figure(samples.array)}, deriveMessageList() ${figure(samples.list)}\n`,
    );
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
