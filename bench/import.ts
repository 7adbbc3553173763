/**
 * The import benchmark: reading a Claude Code transcript, a Codex rollout and a pi session file of
 * about 16 MB each into palimpsest sessions, in MB/s, beside a floor measured in the same run on
 * the same file: `readFileSync`, split into lines, `JSON.parse` of each (the least any importer
 * does). Also the whole import into a JSONL store (reading, validating, writing, fsync).
 *
 *   npm run bench:import
 *
 * Prints the tables and rewrites the import section of docs/benchmarks.md. Not a test.
 */
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Harness, importSessions, readSourceFile } from '../src/import/index.js';
import { openStore } from '../src/store/index.js';
import { collectGarbage, median } from './measure.js';
import {
  formatRatio,
  machineInfo,
  type Report,
  renderMarkdown,
  renderText,
  type SummaryRow,
  verdict,
  writeSection,
} from './report.js';

const REPS = 5;
/** The share of the floor's MB/s a read should keep (issue 33). */
const READ_GOAL = 0.5;
const TARGET_BYTES = 16 * 1024 * 1024;
const startedNs = process.hrtime.bigint();

/** Tool output of a realistic size: a few KB of log lines. */
function output(turn: number): string {
  return `src/module-${turn}.ts:12 compiled in 3 ms\n`.repeat(40 + (turn % 60));
}

const iso = (n: number): string => new Date(1_793_000_000_000 + n * 1000).toISOString();

/** One turn per iteration: a prompt, a tool call, its result, an answer. */
const generators: Record<Harness, (turn: number) => unknown[]> = {
  'claude-code': (t) => {
    const base = { isSidechain: false, sessionId: 'bench', cwd: '/srv/app', version: '2.0.0' };
    const u = (n: number) => `00000000-0000-4000-8000-${String(t * 4 + n).padStart(12, '0')}`;
    return [
      {
        ...base,
        type: 'user',
        uuid: u(0),
        parentUuid: t === 0 ? null : u(-1),
        timestamp: iso(t * 4),
        message: { role: 'user', content: `Question ${t}: why does module ${t} fail?` },
      },
      {
        ...base,
        type: 'assistant',
        uuid: u(1),
        parentUuid: u(0),
        timestamp: iso(t * 4 + 1),
        message: {
          id: `msg_${t}a`,
          role: 'assistant',
          model: 'claude-sonnet-4-5',
          content: [
            {
              type: 'tool_use',
              id: `toolu_${t}`,
              name: 'Bash',
              input: { command: `npm run build -- ${t}` },
            },
          ],
          stop_reason: 'tool_use',
          usage: { input_tokens: 100, output_tokens: 20 },
        },
      },
      {
        ...base,
        type: 'user',
        uuid: u(2),
        parentUuid: u(1),
        timestamp: iso(t * 4 + 2),
        message: {
          role: 'user',
          content: [{ type: 'tool_result', tool_use_id: `toolu_${t}`, content: output(t) }],
        },
      },
      {
        ...base,
        type: 'assistant',
        uuid: u(3),
        parentUuid: u(2),
        timestamp: iso(t * 4 + 3),
        message: {
          id: `msg_${t}b`,
          role: 'assistant',
          model: 'claude-sonnet-4-5',
          content: [{ type: 'text', text: `Module ${t} compiles; the failure is elsewhere.` }],
          stop_reason: 'end_turn',
          usage: { input_tokens: 300, output_tokens: 12 },
        },
      },
    ];
  },
  codex: (t) => {
    const line = (type: string, payload: unknown, n: number) => ({
      timestamp: iso(t * 6 + n),
      type,
      payload,
    });
    return [
      ...(t === 0
        ? [
            line(
              'session_meta',
              {
                id: 'bench',
                timestamp: iso(0),
                cwd: '/srv/app',
                cli_version: '0.60.0',
                model_provider: 'openai',
              },
              0,
            ),
          ]
        : []),
      line(
        'response_item',
        {
          type: 'message',
          role: 'user',
          content: [{ type: 'input_text', text: `Question ${t}: why does module ${t} fail?` }],
        },
        1,
      ),
      line(
        'response_item',
        {
          type: 'function_call',
          name: 'shell',
          arguments: JSON.stringify({ command: ['npm', 'run', 'build', String(t)] }),
          call_id: `call_${t}`,
        },
        2,
      ),
      line(
        'event_msg',
        {
          type: 'token_count',
          info: { last_token_usage: { input_tokens: 100, output_tokens: 20 } },
        },
        3,
      ),
      line(
        'response_item',
        { type: 'function_call_output', call_id: `call_${t}`, output: output(t) },
        4,
      ),
      line(
        'response_item',
        {
          type: 'message',
          role: 'assistant',
          content: [
            { type: 'output_text', text: `Module ${t} compiles; the failure is elsewhere.` },
          ],
        },
        5,
      ),
      line('event_msg', { type: 'task_complete' }, 6),
    ];
  },
  pi: (t) => {
    const id = (n: number) => (t * 4 + n).toString(16).padStart(8, '0');
    const usage = { input: 100, output: 20, cacheRead: 0, cacheWrite: 0, totalTokens: 120 };
    return [
      ...(t === 0
        ? [{ type: 'session', version: 3, id: 'bench', timestamp: iso(0), cwd: '/srv/app' }]
        : []),
      {
        type: 'message',
        id: id(0),
        parentId: t === 0 ? null : id(-1),
        timestamp: iso(t * 4),
        message: { role: 'user', content: `Question ${t}: why does module ${t} fail?` },
      },
      {
        type: 'message',
        id: id(1),
        parentId: id(0),
        timestamp: iso(t * 4 + 1),
        message: {
          role: 'assistant',
          content: [
            {
              type: 'toolCall',
              id: `call_${t}`,
              name: 'bash',
              arguments: { command: `npm run build -- ${t}` },
            },
          ],
          provider: 'anthropic',
          model: 'claude-sonnet-4-5',
          usage,
          stopReason: 'toolUse',
        },
      },
      {
        type: 'message',
        id: id(2),
        parentId: id(1),
        timestamp: iso(t * 4 + 2),
        message: {
          role: 'toolResult',
          toolCallId: `call_${t}`,
          toolName: 'bash',
          content: [{ type: 'text', text: output(t) }],
          isError: false,
        },
      },
      {
        type: 'message',
        id: id(3),
        parentId: id(2),
        timestamp: iso(t * 4 + 3),
        message: {
          role: 'assistant',
          content: [{ type: 'text', text: `Module ${t} compiles; the failure is elsewhere.` }],
          provider: 'anthropic',
          model: 'claude-sonnet-4-5',
          usage,
          stopReason: 'stop',
        },
      },
    ];
  },
};

function writeSource(
  dir: string,
  harness: Harness,
): { path: string; bytes: number; turns: number } {
  const lines: string[] = [];
  let bytes = 0;
  let turns = 0;
  while (bytes < TARGET_BYTES) {
    for (const entry of generators[harness](turns)) {
      const line = JSON.stringify(entry);
      lines.push(line);
      bytes += line.length + 1;
    }
    turns++;
  }
  const path = join(dir, `${harness}.jsonl`);
  writeFileSync(path, `${lines.join('\n')}\n`);
  return { path, bytes: statSync(path).size, turns };
}

function floor(path: string): number {
  let objects = 0;
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    if (line !== '' && JSON.parse(line) !== null) objects++;
  }
  return objects;
}

function time(fn: () => unknown): number {
  const start = process.hrtime.bigint();
  fn();
  return Number(process.hrtime.bigint() - start);
}

async function timeAsync(fn: () => Promise<unknown>): Promise<number> {
  const start = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - start);
}

interface Figures {
  readonly harness: Harness;
  readonly bytes: number;
  readonly turns: number;
  readonly events: number;
  readonly floor: number;
  readonly read: number;
  readonly import: number;
}

async function measure(dir: string, harness: Harness): Promise<Figures> {
  const { path, bytes, turns } = writeSource(dir, harness);
  const floors: number[] = [];
  const reads: number[] = [];
  const imports: number[] = [];
  let events = 0;
  for (let rep = -1; rep < REPS; rep++) {
    collectGarbage();
    const floorNs = time(() => floor(path));
    collectGarbage();
    const readNs = time(() => {
      events = readSourceFile(harness, path).sessions[0]?.events.length ?? 0;
    });
    collectGarbage();
    const store = await openStore(`jsonl:${join(dir, `store-${harness}-${rep + 1}`)}`);
    const importNs = await timeAsync(() => importSessions({ from: harness, path, store }));
    await store.close();
    if (rep >= 0) {
      floors.push(floorNs);
      reads.push(readNs);
      imports.push(importNs);
    }
  }
  const figures = {
    harness,
    bytes,
    turns,
    events,
    floor: median(floors),
    read: median(reads),
    import: median(imports),
  };
  process.stderr.write(
    `${harness}: ${mbps(bytes, figures.floor)} floor, ${mbps(bytes, figures.read)} read, ${mbps(bytes, figures.import)} import\n`,
  );
  return figures;
}

function mbps(bytes: number, ns: number): string {
  return `${(bytes / 1024 / 1024 / (ns / 1e9)).toFixed(1)} MB/s`;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'palimpsest-bench-import-'));
  const figures: Figures[] = [];
  try {
    for (const harness of ['claude-code', 'codex', 'pi'] as const)
      figures.push(await measure(dir, harness));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const summary: SummaryRow[] = figures.flatMap((f, i) => [
    {
      id: `${i * 2 + 1}`,
      what: `read a ${(f.bytes / 1024 / 1024).toFixed(1)} MB ${f.harness} file into a validated session (${f.events.toLocaleString('en-US')} events), vs JSON.parse of its lines`,
      ours: mbps(f.bytes, f.read),
      floor: mbps(f.bytes, f.floor),
      ratio: formatRatio(f.floor / f.read),
      goal: `≥ ${formatRatio(READ_GOAL)}`,
      verdict: verdict(f.floor / f.read >= READ_GOAL),
    },
    {
      id: `${i * 2 + 2}`,
      what: 'import the same file into a JSONL store (read, validate again, write, fsync)',
      ours: mbps(f.bytes, f.import),
      floor: mbps(f.bytes, f.floor),
      ratio: formatRatio(f.floor / f.import),
      goal: 'info',
      verdict: 'info' as const,
    },
  ]);
  const report: Report = {
    section: 'import',
    intro: [
      'Reading another harness’s session file is parsing plus conversion plus validation. Each',
      'format is timed on a generated file of about 16 MB beside a floor: `readFileSync` of the',
      'same file, split into lines, `JSON.parse` of each. The ratio is our MB/s over the floor’s: the',
      'share of `JSON.parse` speed an import keeps.',
    ],
    runtime: 'about 1 minute',
    reproduce: [
      'Ratios move by some percent between runs on a shared VM, absolute MB/s by much more (the floor and ours are measured in turn, so both see the same load).',
    ],
    machine: machineInfo(),
    summary,
    details: [
      {
        title: 'Sources',
        header: ['format', 'bytes', 'turns', 'events'],
        rows: figures.map((f) => [
          f.harness,
          f.bytes.toLocaleString('en-US'),
          f.turns.toLocaleString('en-US'),
          f.events.toLocaleString('en-US'),
        ]),
      },
    ],
    method: [
      'Each generated turn is a prompt, a tool call, a tool result of 2 to 4 KB of log lines and an answer, in the shapes of docs/import.md; Codex adds its `token_count` and `task_complete` lines. Every turn becomes 11 palimpsest events (turn and step brackets, the prompt, two responses, the call and its result).',
      '“read” is `readSourceFile`: read the file, parse every line, convert, and admit every event as a session admits its seed (every check of an append and every surface rule, each value walked and frozen). “import” is `importSessions` into a fresh JSONL store: the read, a second validation of the whole session before the first write, the store’s load (not found), the header and one append batch, fsynced.',
      `One warm-up round, then the median of ${REPS} rounds.`,
      'Source: `bench/import.ts`.',
    ],
    notes: [
      'The floor allocates the same parsed objects the importer does but drops each at once; a read keeps them (the events hold their strings), and keeping them alone (the parsed lines held in an array) costs about 1.2× the floor, in the scavenges that copy what survives. What the importer adds is conversion (new event objects) and validation of every event, which walks and freezes each value once.',
      'Since the previous measurement (read 0.15× claude-code, 0.31× codex, 0.21× pi): timestamps in the shape `toISOString` writes are read digit by digit instead of by `Date.parse` (which took 3 to 5% of a read), and a Claude Code or pi file whose entries form one chain, as these generated files and pi sessions without branches do, is one path without walks or sets of ids; walks among distinct ids keep no set of ids seen, and a parent that is the entry before needs no look-up. In CPU profiles Claude Code’s chain work fell from about 75 to 29 ms a read and pi’s tree from about 37 to 11 ms. Both shortcuts are held to the general path by property tests (test/import/timestamps.test.ts, test/import/tree.test.ts). A transcript with parallel tool calls or progress entries is no chain and takes the general walk.',
      'The goal of 0.5× is missed for all three formats (rows 1, 3 and 5). These figures were taken on a VM shared with other benchmarks (load 4 to 6 on 2 cores), where the floor itself moved by 4× between runs minutes apart, so a before/after of a few percent shows only in CPU profiles, not here. ' +
        '0.5× leaves conversion, validation and the extra garbage collection 1× the floor together, of which keeping the parsed values takes about 0.2×. A CPU profile of a read puts parsing (the floor’s own work) at 110 to 150 ms, garbage collection at 80 to 120 ms (scavenges copying everything kept: parsed strings, events), walking and freezing every event’s data at 40 to 55 ms, and conversion plus the builder’s and admission’s per-event work (new data, message, content and origin objects, shape checks) at 150 to 250 ms: no single cost left is large enough that removing it reaches the goal, and the checks may not be skipped.',
    ],
    durationSeconds: Number(process.hrtime.bigint() - startedNs) / 1e9,
  };
  process.stdout.write(`\n${renderText(report)}\n`);
  writeSection(
    resolve(dirname(fileURLToPath(import.meta.url)), '../docs/benchmarks.md'),
    'import',
    renderMarkdown(report),
  );
}

await main();
