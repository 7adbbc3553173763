/**
 * The AI SDK middleware benchmark: what `sessionMiddleware` adds to the SDK's own loop. The same
 * `streamText` tool loop runs on an in-process model twice: bare, keeping its history in the
 * SDK's `response.messages`, and through the middleware into a session, continuing each turn
 * from `toModelMessages(session)` and closing it with `finish()`. The ratio is recorded over
 * bare, on the same model, in the same run.
 *
 *   npm run bench:ai-sdk
 *
 * Prints the tables and rewrites the ai-sdk section of docs/benchmarks.md. Not a test.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { LanguageModelV3 } from '@ai-sdk/provider';
import { type ModelMessage, stepCountIs, streamText, tool, wrapLanguageModel } from 'ai';
import { z } from 'zod';
import { sessionMiddleware, toModelMessages } from '../src/adapters/ai-sdk/index.js';
import { Session } from '../src/core/index.js';
import { openSession, openStore, type SessionStore } from '../src/store/index.js';
import { scriptedModel } from '../src/testing/index.js';
import { CHUNK_CHARS, DELTAS, progressLog, twoStepScript } from './agent-workload.js';
import { collectGarbage, median, spread, timeNsAsync } from './measure.js';
import {
  type DetailTable,
  formatDuration,
  formatRatio,
  machineInfo,
  type Report,
  renderMarkdown,
  renderText,
  type SummaryRow,
  writeSection,
} from './report.js';

const TURNS = 50;
const WARMUP = 3;
const REPS = 9;
const startedNs = process.hrtime.bigint();

const progress = progressLog();

const tools = {
  lookup: tool({
    description: 'Looks a key up.',
    inputSchema: z.object({ key: z.string() }),
    execute: async ({ key }) => `value of ${key}: ${'x'.repeat(200)}`,
  }),
};

/** One turn of the SDK's loop on `model`; the messages it added. */
async function turn(model: LanguageModelV3, messages: ModelMessage[]): Promise<ModelMessage[]> {
  const result = streamText({
    model,
    system: 'You are a benchmark.',
    messages,
    tools,
    stopWhen: stepCountIs(3),
  });
  await result.consumeStream();
  return (await result.response).messages;
}

/** The bare loop: TURNS turns, history kept as the SDK's own messages. */
async function bareRun(): Promise<number> {
  const model = scriptedModel(twoStepScript(TURNS), { chunkSize: CHUNK_CHARS });
  const history: ModelMessage[] = [];
  return timeNsAsync(async () => {
    for (let index = 0; index < TURNS; index++) {
      history.push({ role: 'user', content: `turn ${index}` });
      history.push(...(await turn(model, history)));
    }
  });
}

type Target = { kind: 'memory' } | { kind: 'jsonl'; store: SessionStore };

/** The recorded loop: the same turns through the middleware, continued from the session. */
async function recordedRun(
  target: Target,
  id: string,
): Promise<{ ns: number; events: number; chunks: number }> {
  const session =
    target.kind === 'memory' ? Session.create({ id }) : await openSession(target.store, id);
  const model = scriptedModel(twoStepScript(TURNS), { chunkSize: CHUNK_CHARS });
  const middleware = sessionMiddleware(session);
  const recorded = wrapLanguageModel({ model, middleware });
  const ns = await timeNsAsync(async () => {
    for (let index = 0; index < TURNS; index++) {
      const messages = [
        ...toModelMessages(session),
        { role: 'user' as const, content: `turn ${index}` },
      ];
      await middleware.finish(await turn(recorded, messages));
    }
  });
  const events = session.events;
  const chunks = events.filter((event) => event.type === 'assistant/chunk').length;
  if ('close' in session && typeof session.close === 'function') await session.close();
  return { ns, events: events.length, chunks };
}

interface Measured {
  readonly bare: number[];
  readonly recorded: number[];
  readonly events: number;
  readonly chunks: number;
}

async function measure(target: Target, label: string): Promise<Measured> {
  const bare: number[] = [];
  const recorded: number[] = [];
  let events = 0;
  let chunks = 0;
  for (let rep = -WARMUP; rep < REPS; rep++) {
    // Which loop runs first alternates, so a machine that speeds up or slows down over the
    // run (the JIT settling, another process) weighs on both sides alike.
    const bareFirst = rep % 2 === 0;
    let bareNs = 0;
    let run = { ns: 0, events: 0, chunks: 0 };
    for (const side of bareFirst ? ['bare', 'recorded'] : ['recorded', 'bare']) {
      collectGarbage();
      if (side === 'bare') bareNs = await bareRun();
      else run = await recordedRun(target, `${label}-${rep + WARMUP}`);
    }
    ({ events, chunks } = run);
    if (rep >= 0) {
      bare.push(bareNs);
      recorded.push(run.ns);
    }
    progress(
      `${label}: ${rep < 0 ? 'warm-up' : `rep ${rep + 1}/${REPS}`} bare ${formatDuration(bareNs)} recorded ${formatDuration(run.ns)}`,
    );
  }
  return { bare, recorded, events, chunks };
}

/** The median of the rounds' recorded / bare ratios: each round's pair ran back to back. */
function pairedRatio(m: Measured): number {
  return median(m.recorded.map((ns, index) => ns / (m.bare[index] ?? ns)));
}

async function main(): Promise<void> {
  const directory = mkdtempSync(join(tmpdir(), 'palimpsest-bench-ai-sdk-'));
  const summary: SummaryRow[] = [];
  const rows: string[][] = [];
  const steps = TURNS * 2;
  let memoryRatio = Number.NaN;
  try {
    const store = await openStore(`jsonl:${directory}`);
    const targets: Array<[string, Target]> = [
      ['in memory', { kind: 'memory' }],
      ['JSONL store, group commit', { kind: 'jsonl', store }],
    ];
    for (const [index, [label, target]] of targets.entries()) {
      const m = await measure(target, target.kind);
      const bare = median(m.bare);
      const recorded = median(m.recorded);
      const ratio = pairedRatio(m);
      if (index === 0) memoryRatio = ratio;
      summary.push({
        id: String(index + 1),
        what: `streamText, ${TURNS} turns (${steps} steps, ${m.chunks.toLocaleString('en-US')} chunks), recorded ${label}, vs the bare loop`,
        ours: formatDuration(recorded),
        floor: formatDuration(bare),
        ratio: formatRatio(ratio),
        goal: index === 0 ? '≤ 1.20×' : 'info',
        verdict: index === 0 ? (ratio <= 1.2 ? 'pass' : 'miss') : 'info',
      });
      rows.push([
        label,
        formatDuration(bare / steps),
        formatDuration(recorded / steps),
        formatDuration((recorded - bare) / steps),
        formatDuration((recorded - bare) / m.chunks),
        String(Math.round(m.events / steps)),
        `${(spread(m.recorded) * 100).toFixed(0)}% / ${(spread(m.bare) * 100).toFixed(0)}%`,
      ]);
    }
    await store.close();
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
  const details: DetailTable[] = [
    {
      title: 'Per step',
      intro: `Times are medians of ${REPS} runs; a ratio is the median of the ${REPS} rounds' recorded / bare ratios.`,
      header: [
        'target',
        'bare step',
        'recorded step',
        'added per step',
        'added per chunk',
        'events per step',
        'spread recorded / bare',
      ],
      rows,
    },
  ];
  const report: Report = {
    section: 'ai-sdk',
    intro: [
      'The AI SDK’s own `streamText` tool loop on an in-process model, bare and through',
      '`sessionMiddleware` into a session, continuing each turn from `toModelMessages(session)`',
      'and closing it with `finish()`. The ratio is what recording adds to the SDK’s loop.',
    ],
    runtime: 'about 1 minute',
    reproduce: [
      'Ratios move by a few percent between runs on a shared VM; compare them, not the times.',
    ],
    machine: machineInfo(),
    summary,
    details,
    method: [
      `Workload: ${TURNS} turns of two steps on the scripted model (\`palimpsest/testing\`): the first streams ${DELTAS} text deltas of ${CHUNK_CHARS} characters and one tool call, which the SDK executes, the second ${DELTAS} text deltas.`,
      'Bare: `streamText` on the model, the history kept as the SDK’s `response.messages`. Recorded: `streamText` on `wrapLanguageModel({ model, middleware: sessionMiddleware(session) })`, messages from `toModelMessages(session)`, `finish(response.messages)` after each turn.',
      `${WARMUP} warm-up rounds, then ${REPS} rounds of a bare and a recorded run back to back, the order alternating from round to round; the ratio is the median of the rounds' ratios. A full GC runs before each run.`,
      'Source: `bench/ai-sdk.ts`.',
    ],
    notes: [
      `This run: recorded in memory, ${formatRatio(memoryRatio)} the bare loop, so the 1.20× goal is ${memoryRatio <= 1.2 ? 'met' : 'missed'}. Before the change below it measured 1.28× on a quiet machine and 1.35× on this machine while another benchmark shared its two cores; with that load still on, four runs of this change before its last step (a cheaper comparison of prompt messages) gave 1.26×, 1.22×, 1.08× and 1.26×, and on a quiet machine, with the whole change and the request digests recorded incrementally, two runs back to back gave 1.34× and 1.19×. Read it as about 1.2×, met in some runs and not in others, not to the hundredth.`,
      'What changed: the middleware no longer converts and serializes the SDK’s whole history on every step to compare it with the surface. A prompt message it read once is kept as a plain copy beside the derived messages it matched; while it stays the same data it is compared as data (no conversion, no JSON), and only new or changed messages are converted, as before. A prompt’s new messages are remembered once the surface is the prompt on the wire, so the next step does not convert them again either. The request digest takes its header part from a cache keyed by the header’s JSON text; message digests were already cached per message, so a step hashes one short line per older message.',
      'Where the rest goes (CPU profile, recorded runs against bare runs in the same process): about 40% of the middleware’s own added time is recording each stream part (the core’s append of every `assistant/chunk`, about 207 per step); the next largest part is still the prompt comparison, now one pass over plain data that is O(history) per step because the SDK builds every prompt message afresh for each call, so no identity survives to compare by; then closing each tool step (crash-repair planning over the open turn), the request digest and `toModelMessages` once per turn. Outside palimpsest’s code, the SDK validates the messages of each `streamText` call with zod, and the palimpsest stash `toModelMessages` attaches to every message makes that about a quarter dearer at 200 messages. The extra web-stream layer the middleware adds costs nothing measurable by itself: a pass-through layer on the bare loop stays within the noise.',
    ],
    durationSeconds: Number(process.hrtime.bigint() - startedNs) / 1e9,
  };
  process.stdout.write(`\n${renderText(report)}\n`);
  const target = resolve(dirname(fileURLToPath(import.meta.url)), '../docs/benchmarks.md');
  writeSection(target, 'ai-sdk', renderMarkdown(report));
  progress(`wrote the ai-sdk section of ${target}`);
}

main().catch((error: unknown) => {
  process.stderr.write(
    `${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exitCode = 1;
});
