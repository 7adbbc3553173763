/**
 * The JSONL backend loads a log larger than V8's longest string (about 512 MiB): it streams the
 * file in 1 MiB chunks and never builds a whole-file string. Too slow and too big for the
 * default test suite; run by hand:
 *
 *   node --max-old-space-size=6144 --import tsx bench/jsonl-load.ts [sizeMiB=1024]
 *
 * Writes a log of the given size into a temp directory, loads it, appends one batch (which reads
 * only the last bytes), prints the figures and removes the directory. Exits non-zero on failure.
 */
import { mkdtemp, open, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SESSION_FORMAT_VERSION, type SessionEvent } from '../src/core/index.js';
import { batchText } from '../src/store/jsonl/format.js';
import { openJsonlStore } from '../src/store/jsonl/index.js';
import { encodeSessionId } from '../src/store/jsonl/paths.js';

const sizeMiB = Number(process.argv[2] ?? 1024);
const PAYLOAD = 256 * 1024;
const PER_BATCH = 8;

function event(seq: number, text: string): SessionEvent {
  return { seq, time: 1_700_000_000_000 + seq, type: 'bench/blob', data: { text } } as SessionEvent;
}

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'palimpsest-jsonl-bench-'));
  try {
    const id = 'big';
    const file = join(dir, `${encodeSessionId(id)}.jsonl`);
    const handle = await open(file, 'wx', 0o600);
    let seq = 0;
    const writeStart = performance.now();
    try {
      await handle.write(
        `${JSON.stringify({ version: SESSION_FORMAT_VERSION, id, createdAt: Date.now() })}\n`,
      );
      const text = 'x'.repeat(PAYLOAD);
      let written = 0;
      while (written < sizeMiB * 1024 * 1024) {
        const lines: string[] = [];
        for (let i = 0; i < PER_BATCH; i++) lines.push(JSON.stringify(event(seq++, text)));
        const chunk = batchText(lines, seq);
        await handle.write(chunk);
        written += chunk.length;
      }
    } finally {
      await handle.close();
    }
    const size = (await stat(file)).size;
    const writeMs = performance.now() - writeStart;

    const store = await openJsonlStore(dir);
    const rssBefore = process.memoryUsage().rss;
    const loadStart = performance.now();
    const loaded = await store.load(id);
    const loadMs = performance.now() - loadStart;
    const rssAfter = process.memoryUsage().rss;
    if (loaded.events.length !== seq || loaded.tornTail !== undefined) {
      throw new Error(`loaded ${loaded.events.length} of ${seq} events`);
    }
    const appendStart = performance.now();
    await store.append(id, [event(seq, 'tail')], { expectedSeq: seq });
    const appendMs = performance.now() - appendStart;
    await store.close();

    const mib = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(0)} MiB`;
    console.log(`log size            ${mib(size)} (${seq} events of ${PAYLOAD / 1024} KiB)`);
    console.log(`generate            ${(writeMs / 1000).toFixed(1)} s`);
    console.log(
      `load                ${(loadMs / 1000).toFixed(1)} s (${(size / 1024 / 1024 / (loadMs / 1000)).toFixed(0)} MiB/s)`,
    );
    console.log(`rss growth on load  ${mib(rssAfter - rssBefore)} (the loaded events themselves)`);
    console.log(`append after load   ${appendMs.toFixed(1)} ms (reads only the last bytes)`);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
