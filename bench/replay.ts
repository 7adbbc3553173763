/**
 * The replay benchmark (issue 35): what reading requests back out of a log costs beside reading
 * the log, and what a cache-aware compaction policy saves.
 *
 * 1. The cache table (`cacheReport`) of a 5,000-turn session, loaded from a JSONL store, against
 *    loading it alone (goal: load + table ≤ 2× the load).
 * 2. Replaying a 1,000-turn session: `replayModel(session)` built, and every recorded call's
 *    request answered with its recorded stream, drained, against loading the session (goal ≤ 1.5×).
 * 3. The same long agent session run under today's automatic compaction policy and under the
 *    cache-aware one, on a simulated clock with idle gaps: input tokens sent, tokens a provider's
 *    cache would serve, and the cost under a published price table.
 *
 *   npm run bench:replay
 *
 * Prints the tables and rewrites the replay section of docs/benchmarks.md. Not a test.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { LanguageModelV3CallOptions } from '@ai-sdk/provider';
import { replayModel } from '../src/adapters/ai-sdk/index.js';
import {
  buildCallOptions,
  cacheReport,
  callDigests,
  defineTool,
  requestAt,
  runTurn,
} from '../src/agent/index.js';
import { type AutoCompactionAction, autoCompaction } from '../src/compaction/index.js';
import { Session } from '../src/core/index.js';
import { inspectSession, openSession, openStore, type SessionStore } from '../src/store/index.js';
import { type ScriptedResponse, scriptedModel } from '../src/testing/index.js';
import { progressLog, twoStepScript } from './agent-workload.js';
import { consume, type PairedFigures, pairedRounds, timeNsAsync } from './measure.js';
import {
  formatRatio,
  machineInfo,
  type Report,
  renderMarkdown,
  renderText,
  type SummaryRow,
  writeSection,
} from './report.js';

const startedNs = process.hrtime.bigint();
const log = progressLog();
const smoke = process.argv.includes('--smoke');
const TABLE_TURNS = smoke ? 200 : 5000;
const REPLAY_TURNS = smoke ? 100 : 1000;
const POLICY_TURNS = smoke ? 60 : 400;
const REPS = smoke ? 2 : 5;

const lookup = defineTool({
  name: 'lookup',
  description: 'Looks a key up.',
  parameters: { type: 'object', properties: { key: { type: 'string' } } },
  execute: async ({ key }) => `value of ${String(key)}`,
});

/** Records `turns` two-step turns of the agent workload into a JSONL store. */
async function record(store: SessionStore, id: string, turns: number): Promise<void> {
  const session = await openSession(store, id);
  const model = scriptedModel(twoStepScript(turns));
  for (let turn = 0; turn < turns; turn++) {
    await runTurn({ session, model, tools: [lookup], system: 'Be exact.', input: `Q${turn}` });
  }
  await session.close();
}

async function load(store: SessionStore, id: string): Promise<Session> {
  return inspectSession(store, id);
}

/** 1. load + cache table against load. */
async function cacheTable(
  store: SessionStore,
  id: string,
): Promise<PairedFigures & { calls: number }> {
  let calls = 0;
  const figures = await pairedRounds(
    REPS,
    () =>
      timeNsAsync(async () => {
        calls = cacheReport(await load(store, id)).calls.length;
      }),
    () =>
      timeNsAsync(async () => {
        await load(store, id);
      }),
  );
  return { ...figures, calls };
}

/** The request each recorded call received, as the client sends it. */
function requestsOf(session: Session): LanguageModelV3CallOptions[] {
  return callDigests(session).map((call) => {
    const { header, messages } = requestAt(session, call.stepStartSeq);
    return buildCallOptions(header, messages);
  });
}

/** 2. load + replay of every call against load + reading every event it serves from. */
async function replay(
  store: SessionStore,
  id: string,
): Promise<PairedFigures & { chunks: number }> {
  const requests = requestsOf(await load(store, id));
  let chunks = 0;
  const figures = await pairedRounds(
    REPS,
    () =>
      timeNsAsync(async () => {
        const model = replayModel(await load(store, id));
        chunks = 0;
        for (const request of requests) {
          const { stream } = await model.doStream(request);
          const reader = stream.getReader();
          for (let next = await reader.read(); !next.done; next = await reader.read()) chunks++;
        }
      }),
    () =>
      timeNsAsync(async () => {
        // Reading the recording: loading it and reading each of its events, chunks included.
        consume((await load(store, id)).events.length);
      }),
  );
  return { ...figures, chunks };
}

/** Anthropic's published prices for Claude Sonnet 4.5, in dollars per million tokens. */
const PRICES = { input: 3, cacheWrite: 3.75, cacheRead: 0.3, output: 15 } as const;
const PRICE_SOURCE =
  'Anthropic’s published prices for Claude Sonnet 4.5: input $3, 5-minute cache write $3.75, cache read $0.30, output $15 per million tokens';
const TTL_MS = 300_000;

interface PolicyFigures {
  readonly name: string;
  readonly calls: number;
  readonly inputTokens: number;
  readonly cachedTokens: number;
  readonly summarizerTokens: number;
  readonly breaks: number;
  readonly prunes: number;
  readonly compactions: number;
  readonly peakTokens: number;
  readonly dollars: number;
}

/** A tool result of a few KB: logs the agent reads. */
const readLog = defineTool({
  name: 'read_log',
  description: 'Reads a build log.',
  parameters: { type: 'object', properties: { id: { type: 'string' } } },
  execute: async ({ id }) =>
    `${String(id)}: compiled module in 3 ms\n`.repeat(60 + (Number(String(id).slice(1)) % 90)),
});

/** Each turn reads a log and answers; summaries are short. */
function agentScript(turns: number): ScriptedResponse[] {
  return Array.from({ length: turns }, (_, turn) => [
    { toolCalls: [{ name: 'read_log', args: { id: `b${turn}` } }] },
    { text: `Build ${turn} is fine: every module compiled.` },
  ]).flat();
}

/** 3. One long session under a policy, on a clock where turns come 20 s apart and every 12th after 10 minutes. */
async function policyRun(
  name: string,
  cache: { cacheAware?: boolean; forceThreshold?: number },
): Promise<PolicyFigures> {
  let now = 1_800_000_000_000;
  const clock = () => now;
  const session = Session.create({ id: `policy-${name}`, clock });
  const model = scriptedModel(agentScript(POLICY_TURNS));
  const writer = scriptedModel(
    [{ text: 'Summary: builds read so far were all fine; keep reading the next logs.' }],
    {
      loop: true,
    },
  );
  let summarizerTokens = 0;
  let prunes = 0;
  let compactions = 0;
  let peakTokens = 0;
  const beforeStep = autoCompaction({
    model: writer,
    contextWindow: 32_000,
    threshold: 0.8,
    keepRecentTokens: 6_000,
    prune: { keepRecentTurns: 2, minChars: 2000 },
    ...cache,
    cacheTtlMs: TTL_MS,
    clock,
    onAction: (action: AutoCompactionAction) => {
      if (action.kind === 'prune') prunes++;
      else {
        compactions++;
        summarizerTokens += action.result.usage?.inputTokens ?? 0;
      }
    },
  });
  for (let turn = 0; turn < POLICY_TURNS; turn++) {
    now += turn % 12 === 11 ? 600_000 : 20_000;
    await runTurn({
      session,
      model,
      tools: [readLog],
      system: 'You check build logs.',
      input: `Check build ${turn}.`,
      hooks: {
        beforeStep,
        afterStep: () => {
          now += 2_000;
        },
      },
    });
  }
  const report = cacheReport(session);
  let inputTokens = 0;
  let cachedTokens = 0;
  let outputTokens = 0;
  let previousEnd: number | undefined;
  for (const call of report.calls) {
    const start = session.event(call.stepStartSeq)?.time ?? 0;
    const warm = previousEnd !== undefined && start - previousEnd < TTL_MS;
    const cached = warm ? call.sharedTokens : 0;
    inputTokens += call.requestTokens;
    cachedTokens += cached;
    peakTokens = Math.max(peakTokens, call.requestTokens);
    const answer = session.event(call.seq);
    if (answer?.type === 'assistant/message') outputTokens += answer.data.usage?.outputTokens ?? 0;
    previousEnd = answer?.time;
  }
  const written = inputTokens - cachedTokens;
  const dollars =
    (cachedTokens * PRICES.cacheRead +
      written * PRICES.cacheWrite +
      summarizerTokens * PRICES.input +
      outputTokens * PRICES.output) /
    1e6;
  return {
    name,
    calls: report.calls.length,
    inputTokens,
    cachedTokens,
    summarizerTokens,
    breaks: report.breaks,
    prunes,
    compactions,
    peakTokens,
    dollars,
  };
}

function seconds(ns: number): string {
  return `${(ns / 1e9).toFixed(2)} s`;
}

function count(value: number): string {
  return value.toLocaleString('en-US');
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'palimpsest-bench-replay-'));
  try {
    const store = await openStore(`jsonl:${dir}`);
    log(`recording ${TABLE_TURNS} turns`);
    await record(store, 'table', TABLE_TURNS);
    log(`recording ${REPLAY_TURNS} turns`);
    await record(store, 'replay', REPLAY_TURNS);
    log('cache table vs load');
    const table = await cacheTable(store, 'table');
    log(`  ${seconds(table.ours)} vs ${seconds(table.floor)}: ${table.ratio.toFixed(2)}×`);
    log('replay vs load');
    const replayed = await replay(store, 'replay');
    log(`  ${seconds(replayed.ours)} vs ${seconds(replayed.floor)}: ${replayed.ratio.toFixed(2)}×`);
    await store.close();
    log('policies');
    const today = await policyRun('today', {});
    const aware = await policyRun('cache-aware', { cacheAware: true });
    const deferred = await policyRun('cache-aware, forceThreshold 0.95', {
      cacheAware: true,
      forceThreshold: 0.95,
    });
    log(`  $${today.dollars.toFixed(2)} vs $${aware.dollars.toFixed(2)}`);
    const summary: SummaryRow[] = [
      {
        id: '1',
        what: `cache table of a ${count(TABLE_TURNS)}-turn session (${count(table.calls)} calls), loaded from JSONL, vs loading it`,
        ours: seconds(table.ours),
        floor: seconds(table.floor),
        ratio: formatRatio(table.ratio),
        goal: '≤ 2.00×',
        verdict: table.ratio <= 2 ? 'pass' : 'miss',
      },
      {
        id: '2',
        what: `replay of a ${count(REPLAY_TURNS)}-turn session (every call's request answered, ${count(replayed.chunks)} chunks served), vs loading it and reading every event`,
        ours: seconds(replayed.ours),
        floor: seconds(replayed.floor),
        ratio: formatRatio(replayed.ratio),
        goal: '≤ 1.50×',
        verdict: replayed.ratio <= 1.5 ? 'pass' : 'miss',
      },
      {
        id: '3',
        what: `cost of a ${POLICY_TURNS}-turn agent session under the cache-aware policy vs today's (same session, simulated cache)`,
        ours: `$${aware.dollars.toFixed(2)}`,
        floor: `$${today.dollars.toFixed(2)}`,
        ratio: formatRatio(aware.dollars / today.dollars),
        goal: 'info',
        verdict: 'info',
      },
    ];
    const report: Report = {
      section: 'replay',
      intro: [
        'Reading requests back out of the log: the cache table and a replay of every call, each',
        'beside loading the same session from its store in the same run; and what the',
        'cache-aware compaction policy saves on a long session, on a simulated provider cache.',
      ],
      runtime: 'about 3 minutes',
      reproduce: ['Ratios move by some percent between runs on a shared VM.'],
      machine: machineInfo(),
      summary,
      details: [
        {
          title: 'Compaction policies on one long session',
          intro: `${POLICY_TURNS} turns, each a tool call reading a 2–6 KB log and an answer; a 32,000-token window, threshold 0.8, 6,000 tokens kept by a compaction, results of the last 2 turns never pruned. Turns come 20 s apart, every 12th after 10 minutes away (the cache gone cold).`,
          header: [
            'policy',
            'calls',
            'input tokens',
            'served from cache',
            'summarizer input',
            'prefix breaks',
            'prunes',
            'compactions',
            'largest request (estimated)',
            'cost',
          ],
          rows: [today, aware, deferred].map((f) => [
            f.name,
            count(f.calls),
            count(f.inputTokens),
            `${count(f.cachedTokens)} (${Math.round((100 * f.cachedTokens) / f.inputTokens)}%)`,
            count(f.summarizerTokens),
            count(f.breaks),
            count(f.prunes),
            count(f.compactions),
            count(f.peakTokens),
            `$${f.dollars.toFixed(2)}`,
          ]),
        },
      ],
      method: [
        `Sessions 1 and 2 are recorded by palimpsest's loop on the scripted model into a JSONL store: each turn a step that streams 200 deltas and calls a tool, then a 200-delta answer (the agent benchmark's workload). “Loading” is \`inspectSession\` (what \`palimpsest cache\` and \`request\` read with). One warm-up round, then ${REPS} rounds alternating which runs first, each after a forced GC; the ratio is the median of the rounds' ratios.`,
        "Replay: the session is loaded, `replayModel(session)` is built (one pass over the log: every call's request digest) and every recorded call's request, built beforehand as the loop sends it, is answered and its stream read to its end. Building the requests is the client's work and is not timed. The floor reads the recording: the same load, then every event of the log (a load holds finished chunks unbuilt; a replay serves them all).",
        `Policies: the session's clock and the policy's are one simulated clock. A call's input is served from the cache when the call before it ended less than 5 minutes earlier: then the tokens its request shares with that call's (\`cacheReport\`, estimated) are cache reads and the rest cache writes; otherwise all of it is written. Summarizer calls are priced as uncached input. Prices: ${PRICE_SOURCE}.`,
        'Source: `bench/replay.ts`.',
      ],
      notes: [
        `The replay serves every recorded part as a stream part and the reader takes each with its own \`read()\` (${count(replayed.chunks)} of them here): in a profile of this row the streams and their reads are about half of what the replay adds to reading the log, building each call's chunk events for the stream another quarter, matching each request (its header and the digest of what it added) the rest. The 1.5× goal would leave about half a second per million parts for all of that; it is missed.`,
        'The cache-aware policy compacts more often (the table’s compactions) but at the points where the cache has gone cold, when the next request is written whole anyway: its requests are smaller afterwards and fewer of them rewrite a warm cache. With turns this regular, every compaction fell on a cold cache before the window forced one, so `forceThreshold` 0.95 changed nothing here.',
        'Token counts in the policy table are estimates (`estimateTokens`, which over-counts); the policy itself measures with the usage the model reported (the scripted model reports 4 characters a token), which is why the largest request can exceed the window in this table and not in the policy’s view.',
      ],
      durationSeconds: Number(process.hrtime.bigint() - startedNs) / 1e9,
    };
    process.stdout.write(`\n${renderText(report)}\n`);
    if (!smoke) {
      writeSection(
        resolve(dirname(fileURLToPath(import.meta.url)), '../docs/benchmarks.md'),
        'replay',
        renderMarkdown(report),
      );
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
