/**
 * The compaction benchmark: cut selection and tool-result pruning are O(surface). Each is timed
 * on surfaces of 10k and 100k entries, beside a floor measured in the same run: one walk of the
 * surface that looks up every event and derives its message (the least any surface-wide
 * operation does).
 *
 *   npm run bench:compaction
 *
 * Prints the tables and rewrites the compaction section of docs/benchmarks.md. Not a test.
 */
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pruneToolResults } from '../src/compaction/index.js';
import { selectRange } from '../src/compaction/range.js';
import { priceSurface } from '../src/compaction/surface-entries.js';
import { deriveEventMessage, Session } from '../src/core/index.js';
import { collectGarbage, median } from './measure.js';
import {
  formatDuration,
  formatRatio,
  machineInfo,
  type Report,
  renderMarkdown,
  renderText,
  type SummaryRow,
  writeSection,
} from './report.js';

const REPS = 7;
const startedNs = process.hrtime.bigint();

/**
 * A session whose surface has `entries` entries: turns of user message, assistant tool call,
 * tool result (every fourth one large enough to prune) and answer.
 */
function buildSession(entries: number): Session {
  const session = Session.create({ clock: () => 1_767_225_600_000 });
  const model = { kind: 'model', provider: 'bench', model: 'bench' } as const;
  const big = 'log line with a path /srv/app/src/module.ts and a number 12345\n'.repeat(40);
  for (let turn = 1; session.surface.size < entries; turn++) {
    session.append('turn/start', { turn });
    session.append(
      'user/message',
      {
        id: `u${turn}`,
        role: 'user',
        content: [{ type: 'text', text: `question ${turn}` }],
        source: { kind: 'user' },
      },
      { surfaceOp: 'append' },
    );
    session.append('step/start', { turn, step: 1 });
    session.append(
      'assistant/message',
      {
        turn,
        step: 1,
        finishReason: 'tool-calls',
        message: {
          id: `a${turn}`,
          role: 'assistant',
          content: [
            { type: 'tool-call', id: `c${turn}`, name: 'grep', arguments: '{"pattern":"x"}' },
          ],
          source: model,
        },
      },
      { surfaceOp: 'append' },
    );
    const call = session.append('tool/call', {
      turn,
      step: 1,
      callId: `c${turn}`,
      name: 'grep',
      arguments: '{"pattern":"x"}',
    });
    session.append(
      'tool/result',
      {
        turn,
        step: 1,
        message: {
          id: `t${turn}`,
          role: 'tool',
          content: [
            {
              type: 'tool-result',
              toolCallId: `c${turn}`,
              content: [{ type: 'text', text: turn % 4 === 0 ? big : 'no match' }],
            },
          ],
        },
      },
      { surfaceOp: 'append', sourceEventSeqs: [call.seq] },
    );
    session.append('step/end', { turn, step: 1 });
    session.append('step/start', { turn, step: 2 });
    session.append(
      'assistant/message',
      {
        turn,
        step: 2,
        finishReason: 'stop',
        message: {
          id: `b${turn}`,
          role: 'assistant',
          content: [{ type: 'text', text: `answer ${turn}` }],
          source: model,
        },
      },
      { surfaceOp: 'append' },
    );
    session.append('step/end', { turn, step: 2 });
    session.append('turn/end', { turn, reason: { kind: 'completed' } });
  }
  return session;
}

function time(fn: () => void): number {
  const start = process.hrtime.bigint();
  fn();
  return Number(process.hrtime.bigint() - start);
}

function floorWalk(session: Session): number {
  let derived = 0;
  for (const seq of session.surface.seqs) {
    const event = session.event(seq);
    if (event !== undefined && deriveEventMessage(event) !== null) derived++;
  }
  return derived;
}

interface Figures {
  readonly entries: number;
  readonly cut: number;
  readonly prune: number;
  readonly floor: number;
  readonly pruned: number;
}

function measure(entries: number): Figures {
  const cut: number[] = [];
  const prune: number[] = [];
  const floor: number[] = [];
  let pruned = 0;
  for (let rep = -1; rep < REPS; rep++) {
    const session = buildSession(entries);
    collectGarbage();
    const floorNs = time(() => floorWalk(session));
    collectGarbage();
    // Cut selection as compact() runs it: price the surface, then choose the range.
    const cutNs = time(() => selectRange(session, priceSurface(session), 2000));
    collectGarbage();
    const pruneNs = time(() => {
      pruned = pruneToolResults(session, { keepRecentTurns: 2, minChars: 1000 }).prunedSeqs.length;
    });
    if (rep >= 0) {
      cut.push(cutNs);
      prune.push(pruneNs);
      floor.push(floorNs);
    }
  }
  process.stderr.write(
    `${entries} entries: cut ${formatDuration(median(cut))}, prune ${formatDuration(median(prune))} (${pruned} results), floor ${formatDuration(median(floor))}\n`,
  );
  return { entries, cut: median(cut), prune: median(prune), floor: median(floor), pruned };
}

function main(): void {
  const small = measure(10_000);
  const large = measure(100_000);
  const summary: SummaryRow[] = [
    {
      id: '1',
      what: 'cut selection (price the surface, choose the range) on a 100k-entry surface, vs one deriving walk of it',
      ours: formatDuration(large.cut),
      floor: formatDuration(large.floor),
      ratio: formatRatio(large.cut / large.floor),
      goal: 'info',
      verdict: 'info',
    },
    {
      id: '2',
      what: 'cut selection, per entry, at 100k vs 10k entries',
      ours: formatDuration(large.cut / large.entries),
      floor: formatDuration(small.cut / small.entries),
      ratio: formatRatio(large.cut / large.entries / (small.cut / small.entries)),
      goal: '≤ 1.5× (linear)',
      verdict: large.cut / large.entries / (small.cut / small.entries) <= 1.5 ? 'pass' : 'miss',
    },
    {
      id: '3',
      what: `pruning ${large.pruned.toLocaleString('en-US')} results on a 100k-entry surface, vs one deriving walk of it`,
      ours: formatDuration(large.prune),
      floor: formatDuration(large.floor),
      ratio: formatRatio(large.prune / large.floor),
      goal: 'info',
      verdict: 'info',
    },
    {
      id: '4',
      what: 'pruning, per entry, at 100k vs 10k entries',
      ours: formatDuration(large.prune / large.entries),
      floor: formatDuration(small.prune / small.entries),
      ratio: formatRatio(large.prune / large.entries / (small.prune / small.entries)),
      goal: '≤ 1.5× (linear)',
      verdict: large.prune / large.entries / (small.prune / small.entries) <= 1.5 ? 'pass' : 'miss',
    },
  ];
  const report: Report = {
    section: 'compaction',
    intro: [
      'Cut selection and tool-result pruning walk the whole surface once (O(surface)). They are',
      'timed on surfaces of 10k and 100k entries beside a floor: one walk of the same surface that',
      'looks every event up and derives its message.',
    ],
    runtime: 'about 1 minute',
    reproduce: ['Ratios move by some percent between runs on a shared VM.'],
    machine: machineInfo(),
    summary,
    details: [],
    method: [
      'The surface is built by direct appends: turns of a user message, an assistant tool call, its result (every fourth result ~2.6 KB, the rest tiny) and an answer; 4 surface entries per turn.',
      'Cut selection is what `compact()` does before asking the model: `priceSurface` (derive and estimate every entry, with the tool-pairing balance of every cut) then `selectRange` (keep 2,000 tokens). Token estimates are cached per message, so the first pricing of a surface pays for every estimate.',
      `Pruning is \`pruneToolResults({keepRecentTurns: 2, minChars: 1000})\` on a fresh session, including its replace appends. One warm-up round, then the median of ${REPS} rounds, each on a freshly built session.`,
      'Source: `bench/compaction.ts`.',
    ],
    notes: [
      'Most of both figures is the token estimate of every message (about 65 MB of tool output at 100k entries), paid once per message: the estimates are cached, so a later pricing of the same surface (the automatic policy measures before every step) walks it without re-estimating.',
    ],
    durationSeconds: Number(process.hrtime.bigint() - startedNs) / 1e9,
  };
  process.stdout.write(`\n${renderText(report)}\n`);
  writeSection(
    resolve(dirname(fileURLToPath(import.meta.url)), '../docs/benchmarks.md'),
    'compaction',
    renderMarkdown(report),
  );
}

main();
