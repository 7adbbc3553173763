/**
 * Figure 4 of the core benchmark: what one derivation costs after one append, on surfaces from
 * 1k entries to past the size (16,384 elements) where V8 allocates each array as a large object
 * of its own, measured in rounds.
 */
import { type MessageCursor, Session } from '../src/core/index.js';
import { buildPrompt } from '../src/model/index.js';
import { collectGarbage, consume, median } from './measure.js';
import {
  type DetailTable,
  formatDuration,
  formatRatio,
  type SummaryRow,
  verdict,
} from './report.js';
import { assistantData, TextSource, toolResultData, userMessage } from './workload.js';

/**
 * A session whose log is `entries` surface appends cycling user/message, assistant/message,
 * tool/result (seq = surface position; position 2 is turn 0's tool/result).
 */
export function surfaceOfSize(entries: number, text: TextSource): Session {
  const session = Session.create();
  for (let seq = 0; seq < entries; seq++) {
    const turn = Math.floor(seq / 3);
    switch (seq % 3) {
      case 0:
        session.append('user/message', userMessage(`u${turn}`, text.take(120)), {
          surfaceOp: 'append',
        });
        break;
      case 1:
        session.append(
          'assistant/message',
          assistantData(turn, 0, `a${turn}`, text.take(200), `c${turn}`),
          { surfaceOp: 'append' },
        );
        break;
      default:
        session.append(
          'tool/result',
          toolResultData(turn, 0, `r${turn}`, `c${turn}`, text.take(200)),
          { surfaceOp: 'append', sourceEventSeqs: [seq - 1] },
        );
    }
  }
  session.deriveMessages();
  return session;
}

const SIZES = [1_000, 10_000, 16_000, 20_000, 50_000, 100_000];
const ROUNDS = 5;
const OPS = 41;

/**
 * What follows the append: nothing (`append`), `deriveMessages()` (`full`), `deriveMessageList()`
 * (`list`), `deriveMessagesSince(cursor)` (`since`), or the provider prompt the agent loop builds
 * from the list (`prompt`).
 */
const MODES = ['append', 'list', 'since', 'full', 'prompt'] as const;
type Mode = (typeof MODES)[number];
/**
 * The modes whose sessions are stepped together in one pass. Those whose step leaves an
 * O(surface) array behind have a pass of their own for each size, as their garbage (and the
 * scavenge it brings on) would tax whichever session steps next.
 */
const SHARED: readonly Mode[] = ['append', 'list', 'since'];

/** The median over rounds of each round's median, with the lowest and highest round. */
interface Figure {
  readonly median: number;
  readonly min: number;
  readonly max: number;
}

interface DeriveResult {
  readonly size: number;
  readonly figures: Readonly<Record<Mode, Figure>>;
}

/** One session measured in one mode: appending one message, then deriving (or not). */
class DeriveProbe {
  readonly rounds: number[][] = [];
  private readonly session: Session;
  private cursor: MessageCursor;

  constructor(
    readonly size: number,
    readonly mode: Mode,
    text: TextSource,
  ) {
    this.session = surfaceOfSize(size, text);
    this.cursor = this.session.deriveMessagesSince().cursor;
  }

  step(data: ReturnType<typeof userMessage>, round: number): void {
    const session = this.session;
    const start = process.hrtime.bigint();
    session.append('user/message', data, { surfaceOp: 'append' });
    switch (this.mode) {
      case 'full':
        consume(session.deriveMessages().length);
        break;
      case 'list':
        consume(session.deriveMessageList().length);
        break;
      case 'since': {
        const delta = session.deriveMessagesSince(this.cursor);
        this.cursor = delta.cursor;
        consume(delta.messages.length);
        break;
      }
      case 'prompt':
        consume(buildPrompt(undefined, session.deriveMessageList()).length);
        break;
      default:
        consume(session.surface.size);
    }
    const ns = Number(process.hrtime.bigint() - start);
    if (this.rounds[round] === undefined) this.rounds[round] = [];
    this.rounds[round].push(ns);
  }

  figure(): Figure {
    const medians = this.rounds.map(median);
    return { median: median(medians), min: Math.min(...medians), max: Math.max(...medians) };
  }
}

/**
 * One session per size and mode. Each round steps the sessions of each pass round robin, so
 * drift falls on every size of a mode alike. Each surface grows by
 * `rounds × ops` entries while measured.
 */
function measureDerive(
  sizes: readonly number[],
  rounds: number,
  ops: number,
  text: TextSource,
): DeriveResult[] {
  const probes = sizes.flatMap((size) => MODES.map((mode) => new DeriveProbe(size, mode, text)));
  const passes = [
    probes.filter((probe) => SHARED.includes(probe.mode)),
    ...probes.filter((probe) => !SHARED.includes(probe.mode)).map((probe) => [probe]),
  ];
  for (let round = 0; round < rounds; round++) {
    for (const pass of passes) {
      collectGarbage();
      for (let i = 0; i < ops; i++) {
        for (const probe of pass) probe.step(userMessage(`n${round}.${i}`, text.take(400)), round);
      }
    }
  }
  return sizes.map((size) => {
    const figureOf = (mode: Mode): Figure => {
      const probe = probes.find((p) => p.size === size && p.mode === mode) as DeriveProbe;
      return probe.figure();
    };
    const figures = Object.fromEntries(MODES.map((mode) => [mode, figureOf(mode)]));
    return { size, figures: figures as Record<Mode, Figure> };
  });
}

/** What figure 4 adds to the core report. */
export interface DeriveReport {
  readonly summary: readonly SummaryRow[];
  readonly detail: DetailTable;
  readonly note: string;
}

function formatFigure(figure: Figure): string {
  return `${formatDuration(figure.median)} (${formatDuration(figure.min)}–${formatDuration(figure.max)})`;
}

/** Measures figure 4 and words its rows, detail table and note. */
export function benchDerive(progress: (message: string) => void): DeriveReport {
  progress(`4. append one + derive on surfaces of ${SIZES.map(String).join(', ')} entries`);
  const text = new TextSource(4);
  measureDerive([1_000], 1, OPS, text); // warm-up
  const results = measureDerive(SIZES, ROUNDS, OPS, text);
  const small = results[0] as DeriveResult;
  const large = results.at(-1) as DeriveResult;
  const ratioOf = (mode: Mode): number => large.figures[mode].median / small.figures[mode].median;
  const row = (id: string, mode: Mode, what: string): SummaryRow => ({
    id,
    what: `append one + ${what}, surface 100k vs 1k`,
    ours: formatDuration(large.figures[mode].median),
    floor: `${formatDuration(small.figures[mode].median)} (at 1k)`,
    ratio: formatRatio(ratioOf(mode)),
    goal: '≤ 2× (100k vs 1k)',
    verdict: verdict(ratioOf(mode) <= 2),
  });
  const under = results.find((r) => r.size === 16_000) as DeriveResult;
  const past = results.find((r) => r.size === 20_000) as DeriveResult;
  const cliff = (mode: Mode): string =>
    formatRatio(past.figures[mode].median / under.figures[mode].median);
  return {
    summary: [
      row('4a', 'full', '`deriveMessages()`'),
      row('4b', 'since', '`deriveMessagesSince(cursor)`'),
      row('4c', 'list', '`deriveMessageList()`'),
      {
        ...row('4d', 'prompt', 'prompt from the list (`buildPrompt`)'),
        goal: 'report (one copy of n pointers)',
        verdict: 'info',
      },
    ],
    detail: {
      title: 'Derivation after one new entry (figure 4)',
      intro: `Per operation, each appending one \`user/message\` (~460 B) and deriving: the median of ${OPS} operations per round, median (min–max) over ${ROUNDS} rounds. One session per cell; each round steps the sessions round robin, except those of \`deriveMessages()\` and of the prompt, each stepped in a pass of its own, as their O(surface) garbage would tax the session stepped next. "append only" appends and reads \`surface.size\`, for scale; "prompt from the list" is what the agent loop does per step: \`buildPrompt\` over \`deriveMessageList()\`.`,
      header: [
        'surface entries',
        'append only',
        'append + deriveMessageList()',
        'append + deriveMessagesSince(cursor)',
        'append + deriveMessages()',
        'append + prompt from the list',
      ],
      rows: results.map((r) => [
        r.size.toLocaleString('en-US'),
        ...(['append', 'list', 'since', 'full', 'prompt'] as const).map((mode) =>
          formatFigure(r.figures[mode]),
        ),
      ]),
    },
    note: `Figure 4: \`deriveMessages()\` returns a frozen array, which after any change must be a new copy of the n message pointers: O(surface), and V8 allocates every array of 16,384 or more elements as a large object of its own (an mmap and a munmap per array), so the copy costs ${cliff('full')} as much at 20k as at 16k and ${formatRatio(ratioOf('full'))} at 100k vs 1k. \`deriveMessageList()\` returns the same messages as a list that shares the session's growing array (a replace starts a new one, so no list ever changes): ${formatRatio(ratioOf('list'))} at 100k vs 1k, ${cliff('list')} at 20k vs 16k. \`deriveMessagesSince(cursor)\` is the O(new) path for consumers that keep their own list: ${formatRatio(ratioOf('since'))}. What stays O(surface) is the request itself: the provider prompt the agent loop and the AI SDK middleware build from the list is an array of n messages. Since 2026-12-07 the provider messages built for a list are kept for the session's array it reads and extended for the next list, so a step converts only its new messages (a tool result that continues the last run of results merges into it) and copies the n provider messages once into the array it hands over, a large-object allocation past 16,384: ${cliff('prompt')} at 20k vs 16k, ${formatRatio(ratioOf('prompt'))} at 100k vs 1k.`,
  };
}
