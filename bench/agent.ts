/**
 * The agent loop benchmark: what `runTurn` adds to recording. The loop drives the scripted model
 * through real turns (text streamed in small deltas, a tool call, a second step) into a session;
 * the floor appends the very same events to a session with the same store, flushing where the
 * loop flushes. The scripted model's own cost (building and streaming its parts) is measured
 * alone and taken out, so the ratio is the loop's bookkeeping against recording.
 *
 *   npm run bench:agent
 *
 * Prints the tables and rewrites the agent section of docs/benchmarks.md. Not a test.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineTool, runTurn } from '../src/agent/index.js';
import { Session, type SessionEvent } from '../src/core/index.js';
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

const TURNS = 100;
const REPS = 5;
const startedNs = process.hrtime.bigint();

const progress = progressLog();

const lookup = defineTool({
  name: 'lookup',
  description: 'Looks a key up.',
  parameters: { type: 'object', properties: { key: { type: 'string' } }, required: ['key'] },
  execute: (args) => `value of ${String(args.key)}: ${'x'.repeat(200)}`,
});

type Target = { kind: 'memory' } | { kind: 'jsonl'; store: SessionStore };

async function sessionFor(target: Target, id: string): Promise<Session> {
  return target.kind === 'memory' ? Session.create({ id }) : openSession(target.store, id);
}

async function closeSession(session: Session): Promise<void> {
  const close = (session as { close?: () => Promise<void> }).close;
  if (close !== undefined) await close.call(session);
}

/** The loop: TURNS turns of two steps each on the scripted model. */
async function loopRun(
  target: Target,
  id: string,
): Promise<{ ns: number; events: SessionEvent[] }> {
  const session = await sessionFor(target, id);
  const model = scriptedModel(twoStepScript(TURNS), { chunkSize: CHUNK_CHARS });
  const ns = await timeNsAsync(async () => {
    for (let turn = 0; turn < TURNS; turn++) {
      await runTurn({
        session,
        model,
        tools: [lookup],
        system: 'You are a benchmark.',
        input: `turn ${turn}`,
      });
    }
  });
  const events = [...session.events];
  await closeSession(session);
  return { ns, events };
}

/** The floor: the same events appended directly, flushed where the loop flushes. */
async function rawRun(
  target: Target,
  id: string,
  events: readonly SessionEvent[],
): Promise<number> {
  const session = await sessionFor(target, id);
  const append = session.append as (type: string, data: unknown, intent?: object) => SessionEvent;
  const flush = (session as { flush?: () => Promise<void> }).flush;
  const ns = await timeNsAsync(async () => {
    let lastType = '';
    for (const event of events) {
      // The loop flushes once the step's tool calls are appended and at the end of each turn.
      if (lastType === 'tool/call' && event.type !== 'tool/call' && flush !== undefined) {
        await flush.call(session);
      }
      append.call(
        session,
        event.type,
        event.data,
        event.surfaceOp === undefined
          ? event.sourceEventSeqs === undefined
            ? undefined
            : { sourceEventSeqs: event.sourceEventSeqs }
          : {
              surfaceOp: event.surfaceOp,
              ...(event.sourceEventSeqs === undefined
                ? {}
                : { sourceEventSeqs: event.sourceEventSeqs }),
            },
      );
      if (event.type === 'turn/end' && flush !== undefined) await flush.call(session);
      lastType = event.type;
    }
  });
  await closeSession(session);
  return ns;
}

/** The model alone: every scripted call streamed and read, nothing recorded. */
async function modelRun(): Promise<number> {
  const model = scriptedModel(twoStepScript(TURNS), { chunkSize: CHUNK_CHARS });
  return timeNsAsync(async () => {
    for (let call = 0; call < TURNS * 2; call++) {
      const { stream } = await model.doStream({ prompt: [] });
      const reader = stream.getReader();
      let parts = 0;
      for (;;) {
        const next = await reader.read();
        if (next.done) break;
        parts += 1;
      }
      if (parts === 0) throw new Error('empty scripted stream');
    }
  });
}

interface Measured {
  readonly loop: number[];
  readonly raw: number[];
  readonly model: number[];
  readonly events: number;
  readonly chunks: number;
  readonly steps: number;
}

async function measure(target: Target, label: string): Promise<Measured> {
  const loop: number[] = [];
  const raw: number[] = [];
  const model: number[] = [];
  let events: SessionEvent[] = [];
  for (let rep = -1; rep < REPS; rep++) {
    collectGarbage();
    const run = await loopRun(target, `${label}-loop-${rep + 1}`);
    events = run.events;
    collectGarbage();
    const rawNs = await rawRun(target, `${label}-raw-${rep + 1}`, events);
    collectGarbage();
    const modelNs = await modelRun();
    if (rep >= 0) {
      loop.push(run.ns);
      raw.push(rawNs);
      model.push(modelNs);
    }
    progress(
      `${label}: rep ${rep + 1}/${REPS} loop ${formatDuration(run.ns)} raw ${formatDuration(rawNs)} model ${formatDuration(modelNs)}`,
    );
  }
  return {
    loop,
    raw,
    model,
    events: events.length,
    chunks: events.filter((event) => event.type === 'assistant/chunk').length,
    steps: events.filter((event) => event.type === 'step/start').length,
  };
}

async function main(): Promise<void> {
  const directory = mkdtempSync(join(tmpdir(), 'palimpsest-bench-agent-'));
  const summary: SummaryRow[] = [];
  const details: DetailTable[] = [];
  const rows: string[][] = [];
  try {
    const store = await openStore(`jsonl:${directory}`);
    const targets: Array<[string, Target]> = [
      ['JSONL store, group commit', { kind: 'jsonl', store }],
      ['in memory', { kind: 'memory' }],
    ];
    for (const [index, [label, target]] of targets.entries()) {
      const m = await measure(target, target.kind);
      const loop = median(m.loop);
      const raw = median(m.raw);
      const model = median(m.model);
      const added = loop - model - raw;
      const ratio = (loop - model) / raw;
      summary.push({
        id: String(index + 1),
        what: `loop recording ${TURNS} turns (${m.steps} steps, ${m.chunks.toLocaleString('en-US')} chunks), ${label}, model cost removed, vs appending the same events`,
        ours: formatDuration(loop - model),
        floor: formatDuration(raw),
        ratio: formatRatio(ratio),
        goal: index === 0 ? '≤ 1.20×' : 'info',
        verdict: index === 0 ? (ratio <= 1.2 ? 'pass' : 'miss') : 'info',
      });
      rows.push([
        label,
        formatDuration(loop),
        formatDuration(model),
        formatDuration(raw),
        formatDuration(added / m.steps),
        formatDuration(added / m.chunks),
        `${(spread(m.loop) * 100).toFixed(0)}% / ${(spread(m.raw) * 100).toFixed(0)}%`,
      ]);
    }
    await store.close();
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
  details.push({
    title: 'Where the time goes',
    intro: `Medians of ${REPS} runs. "Added" is loop − model − floor, spread over steps and chunks.`,
    header: [
      'target',
      'loop (with model)',
      'model alone',
      'floor: same appends',
      'added per step',
      'added per chunk',
      'spread loop / floor',
    ],
    rows,
  });
  const report: Report = {
    section: 'agent',
    intro: [
      '`runTurn` driving the scripted model (`palimpsest/testing`) through real turns, beside the',
      'cheapest way to record the same thing: appending the identical events to a session on the',
      'same store, flushing at the same points. The scripted model’s own cost is measured alone',
      'and removed, so the ratio is what the loop adds to recording.',
    ],
    runtime: 'about 1 minute',
    reproduce: [
      'Ratios move by a few percent between runs on a shared VM; compare them, not the times.',
    ],
    machine: machineInfo(),
    summary,
    details,
    method: [
      `Workload: ${TURNS} turns; each turn is two steps: the first streams ${DELTAS} text deltas of ${CHUNK_CHARS} characters and one tool call (executed), the second streams ${DELTAS} text deltas. Every stream part is one \`assistant/chunk\` event.`,
      'The loop does per chunk: read the part, convert it to JSON, append it, fold it into the step’s message; per step: derive the messages, build the provider request, compare the request header, append the message, run the tools, flush before tools run and at turn end.',
      'The floor appends the events the loop produced (same types, data and provenance) with `session.append`, and awaits `flush()` after each step’s tool calls and at each turn end, as the loop does.',
      `One warm-up round, then ${REPS} rounds alternating loop, floor and model-alone; medians. A full GC runs before each measured run.`,
      'Source: `bench/agent.ts`.',
    ],
    notes: [
      'Where the added time goes (CPU profile of the in-memory run): about a third of a turn is the core append that the floor pays too, an eighth is the web-streams machinery of reading each part (the model-alone run pays it as well, so it is taken out), and what remains is the loop’s own per-part work — turning the part into a JSON chunk object, folding it into the step’s message, the event hook — plus the per-step request build. Per chunk that is about 1.5 µs: small against a durable store’s append, but about as much as an in-memory append itself, hence the 20% goal is not met with either target.',
      'The per-step cost includes building the whole request from the surface (the prompt is O(history), as every provider request is): it grows with the session, while the per-chunk cost does not.',
    ],
    durationSeconds: Number(process.hrtime.bigint() - startedNs) / 1e9,
  };
  process.stdout.write(`\n${renderText(report)}\n`);
  const target = resolve(dirname(fileURLToPath(import.meta.url)), '../docs/benchmarks.md');
  writeSection(target, 'agent', renderMarkdown(report));
  progress(`wrote the agent section of ${target}`);
}

main().catch((error: unknown) => {
  process.stderr.write(
    `${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exitCode = 1;
});
