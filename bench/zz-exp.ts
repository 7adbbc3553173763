import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { replayModel } from '../src/adapters/ai-sdk/index.js';
import { buildCallOptions, callDigests, defineTool, requestAt, runTurn } from '../src/agent/index.js';
import { inspectSession, openSession, openStore } from '../src/store/index.js';
import { scriptedModel } from '../src/testing/index.js';
import { twoStepScript } from './agent-workload.js';
const lookup = defineTool({ name: 'lookup', description: 'Looks a key up.', parameters: { type: 'object', properties: { key: { type: 'string' } } }, execute: async ({ key }) => `value of ${String(key)}` });
const dir = mkdtempSync(join(tmpdir(), 'rp-'));
const store = await openStore(`jsonl:${dir}`);
const s = await openSession(store, 'r');
const model = scriptedModel(twoStepScript(1000));
for (let t = 0; t < 1000; t++) await runTurn({ session: s, model, tools: [lookup], system: 'Be exact.', input: `Q${t}` });
await s.close();
const base = await inspectSession(store, 'r');
const requests = callDigests(base).map((c) => { const { header, messages } = requestAt(base, c.stepStartSeq); return buildCallOptions(header, messages); });
for (let round = 0; round < 5; round++) {
  globalThis.gc?.();
  let t = performance.now();
  const f = (await inspectSession(store, 'r')).events.length;
  const floor = performance.now() - t;
  globalThis.gc?.();
  t = performance.now();
  const m = replayModel(await inspectSession(store, 'r'));
  const built = performance.now() - t;
  let n = 0;
  for (const r of requests) { const { stream } = await m.doStream(r); const rd = stream.getReader(); for (let x = await rd.read(); !x.done; x = await rd.read()) n++; }
  const ours = performance.now() - t;
  console.log(JSON.stringify({ floor: floor | 0, built: built | 0, ours: ours | 0, ratio: (ours / floor).toFixed(2), n, f }));
}
