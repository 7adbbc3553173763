/**
 * The store benchmark's child processes (bench/store.ts starts them): every measurement that
 * needs a process of its own (a clean heap, its own peak RSS, no GC debt from another phase)
 * runs here and prints one JSON line on stdout.
 *
 *   node --expose-gc --max-old-space-size=8192 --import tsx bench/store-child.ts <mode> ...
 *
 * Modes:
 *   append <jsonl|sqlite> <location> <turns> <interleave> <markTurn>
 *                                                     a live session, one durable batch per turn
 *   resume-ours <dir> <id>                            store.load + Session.create (parsed)
 *   resume-fast <dir> <id>                            the same, eliding finished chunks
 *   resume-open <dir> <id>                            openSession (lock, load, repair check, seed)
 *   resume-open-fast <dir> <id>                       openSession with chunks: 'elide'
 *   resume-memory <dir> <id>                          the fast path's memory, after a warm-up
 *   resume-parse <file>                               floor: read the file, JSON.parse every line
 *   resume-scan <file>                                floor: read, parse only the non-chunk lines
 */
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Session, type SessionEvent } from '../src/core/index.js';
import { type LiveSession, openSession, type SessionStore } from '../src/store/index.js';
import { JsonlStore, openJsonlStore } from '../src/store/jsonl/index.js';
import { openSqliteStore } from '../src/store/sqlite/index.js';
import { collectGarbage, consume } from './measure.js';
import { appendTurnEvent, benchClock, TurnSource } from './store-workload.js';

/** Turns of a throwaway session (in a store of its own) before the measured one. */
const WARMUP_TURNS = 100;
/** Turns of another throwaway session after the baseline's forced GC. */
const REWARM_TURNS = 30;
/** The session id every measured run uses. */
const BENCH_SESSION = 'bench';

/** What an `append` child reports. */
export interface AppendChildResult {
  /** Per-turn wall time (204 appends + `await flush()`), ns, in turn order. */
  readonly turnNs: number[];
  /** The same for the first turns of a young session, interleaved with the last turns. */
  readonly youngTurnNs: number[];
  readonly events: number;
  readonly batches: number;
  /** Size of the log file right after turn `markTurn` (JSONL; 0 for SQLite). */
  readonly markBytes: number;
  /** Σ (UTF-8 length of JSON.stringify(event) + 1) over the session's events. */
  readonly eventJsonBytes: number;
  /** Peak RSS of the process up to the end of the run (bytes). */
  readonly maxRss: number;
  /** RSS once warmed up, before the measured session opened (bytes). */
  readonly rssBaseline: number;
  /** Heap retained by the live session after the run (over the warmed-up baseline, after GC). */
  readonly sessionHeap: number;
  /** Heap retained by the surface's events alone (measured on a structured clone of them). */
  readonly surfaceHeap: number;
  readonly surfaceEntries: number;
}

/** What a `resume-*` child reports. */
export interface ResumeChildResult {
  /** The measured wall time, ns. */
  readonly ns: number;
  /** CPU time (user + system, all threads: GC helpers included) of the same span, ns. */
  readonly cpuNs?: number;
  /** Parts of `ns`, where the mode has parts (load, seed). */
  readonly parts: Record<string, number>;
  /** `deriveMessages()` after the resume (ours only; not part of `ns`). */
  readonly deriveNs: number;
  readonly events: number;
  /** Lines parsed (floors). */
  readonly parsed: number;
  readonly maxRss: number;
  /** RSS right before the measured work began (node, tsx and the modules), bytes. */
  readonly rssBefore: number;
  /** Stubs among the events (the fast path). */
  readonly elided?: number;
  /**
   * Heap the resumed session retains after a full GC, over the heap before the load, and the
   * heap a structured clone of its surface's events adds (ours only, measured after `ns`).
   */
  readonly sessionHeap?: number;
  readonly surfaceHeap?: number;
}

function maxRssBytes(): number {
  return process.resourceUsage().maxRSS * 1024;
}

/**
 * `heapUsed` after a full GC, taken in a new macrotask: objects that only the finished task's
 * promise jobs still referenced (a closed session, for one) are then collectable.
 */
async function heapUsed(): Promise<number> {
  await new Promise((resolve) => setImmediate(resolve));
  collectGarbage();
  return process.memoryUsage().heapUsed;
}

function nowNs(): bigint {
  return process.hrtime.bigint();
}

function cpuSince(start: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(start);
  return (used.user + used.system) * 1000;
}

function openBackend(backend: string, location: string): Promise<SessionStore> {
  if (backend === 'jsonl') return openJsonlStore(location);
  if (backend === 'sqlite') return openSqliteStore(location, { synchronous: 'full' });
  throw new Error(`unknown backend ${backend}`);
}

/** A throwaway session, so the measured one starts with warm code. */
async function warmUp(store: SessionStore, id: string, turns: number): Promise<void> {
  const session = await openSession(store, id, { clock: benchClock() });
  const source = new TurnSource();
  for (let turn = 0; turn < turns; turn++) {
    for (const append of source.turn(turn, session.seq)) appendTurnEvent(session, append);
    await session.flush();
  }
  await session.close();
}

type MeasuredRun = Omit<AppendChildResult, 'rssBaseline'>;

/**
 * The measured session: `turns` turns, each timed from its first append until `flush()` makes
 * it durable. Before each of the last `interleave` turns, a turn of a young session (in the
 * warm-up store) is timed too, so the two ends of the comparison also run side by side.
 */
async function measuredRun(
  store: SessionStore,
  warm: SessionStore,
  options: { turns: number; interleave: number; markTurn: number; baseline: number },
): Promise<MeasuredRun> {
  const { turns, interleave, markTurn, baseline } = options;
  const logFile = store instanceof JsonlStore ? store.pathOf(BENCH_SESSION) : undefined;
  const session = await openSession(store, BENCH_SESSION, { clock: benchClock() });
  const source = new TurnSource();
  const turnNs: number[] = [];
  const youngTurnNs: number[] = [];
  const youngSource = new TurnSource();
  let young: LiveSession | undefined;
  let markBytes = 0;
  for (let turn = 0; turn < turns; turn++) {
    if (turn === turns - interleave) {
      young = await openSession(warm, 'young', { clock: benchClock() });
    }
    if (young !== undefined) {
      const appends = youngSource.turn(youngTurnNs.length, young.seq);
      const start = nowNs();
      for (const append of appends) appendTurnEvent(young, append);
      await young.flush();
      youngTurnNs.push(Number(nowNs() - start));
    }
    const appends = source.turn(turn, session.seq);
    const start = nowNs();
    for (const append of appends) appendTurnEvent(session, append);
    await session.flush();
    turnNs.push(Number(nowNs() - start));
    if (turn + 1 === markTurn && logFile !== undefined) markBytes = statSync(logFile).size;
  }
  const maxRss = maxRssBytes();
  await young?.close();
  young = undefined;
  const events = session.seq;
  let eventJsonBytes = 0;
  for (let seq = 0; seq < events; seq++) {
    eventJsonBytes += Buffer.byteLength(JSON.stringify(session.event(seq))) + 1;
  }
  const sessionHeap = (await heapUsed()) - baseline;
  // The surface's retained size: a structured clone of its events (same shapes, flat strings
  // like the originals), measured as the heap it adds while the session is still alive.
  const surface = session.surface.seqs.map((seq) => session.event(seq) as SessionEvent);
  const withoutCopy = await heapUsed();
  const copy = structuredClone(surface);
  const surfaceHeap = (await heapUsed()) - withoutCopy;
  consume(copy.length);
  const batches = session.recorderStats.batches;
  await session.close();
  return {
    turnNs,
    youngTurnNs,
    events,
    batches,
    markBytes,
    eventJsonBytes,
    maxRss,
    sessionHeap,
    surfaceHeap,
    surfaceEntries: surface.length,
  };
}

async function appendChild(
  backend: string,
  location: string,
  turns: number,
  interleave: number,
  markTurn: number,
): Promise<AppendChildResult> {
  const warm = await openBackend(
    backend,
    backend === 'jsonl' ? `${location}-warmup` : `${location}.warmup`,
  );
  await warmUp(warm, 'warmup', WARMUP_TURNS);
  const baseline = await heapUsed();
  const rssBaseline = process.memoryUsage().rss;
  // The forced GC shrank the young generation: a few more turns let it grow back, so the
  // measured session's first turns do not pay for the measurement.
  await warmUp(warm, 'warmup-after-gc', REWARM_TURNS);

  const store = await openBackend(backend, location);
  const run = await measuredRun(store, warm, { turns, interleave, markTurn, baseline });
  await store.close();
  await warm.close();
  return { ...run, rssBaseline };
}

/**
 * Full replay as `openSession` does it, minus the lock and the repair plan; with `elide`, the
 * fast path (finished chunks as stubs).
 */
async function resumeOurs(dir: string, id: string, elide: boolean): Promise<ResumeChildResult> {
  const heapBefore = await heapUsed();
  const rssBefore = process.memoryUsage().rss;
  const cpu = process.cpuUsage();
  const start = nowNs();
  const store = await openJsonlStore(dir);
  const loaded = await store.load(id, { elideFinishedChunks: elide });
  const loadedAt = nowNs();
  const session = Session.create({
    header: loaded.header,
    seed: loaded.log ?? loaded.events,
    seedMode: 'parsed',
  });
  const end = nowNs();
  const cpuNs = cpuSince(cpu);
  const maxRss = maxRssBytes();
  const messages = session.deriveMessages();
  const deriveNs = Number(nowNs() - end);
  consume(messages.length);
  await store.close();
  const retained = await retainedHeaps(session, heapBefore);
  return {
    ns: Number(end - start),
    cpuNs,
    parts: { load: Number(loadedAt - start), seed: Number(end - loadedAt) },
    deriveNs,
    events: session.seq,
    parsed: 0,
    maxRss,
    rssBefore,
    elided: session.elidedChunkCount,
    ...retained,
  };
}

/** The heap a session retains, and the part of it its surface's events stand for. */
async function retainedHeaps(
  session: Session,
  heapBefore: number,
): Promise<{ sessionHeap: number; surfaceHeap: number }> {
  const sessionHeap = (await heapUsed()) - heapBefore;
  const surface = session.surface.seqs.map((seq) => session.event(seq) as SessionEvent);
  const withoutCopy = await heapUsed();
  const copy = structuredClone(surface);
  const surfaceHeap = (await heapUsed()) - withoutCopy;
  consume(copy.length);
  return { sessionHeap, surfaceHeap };
}

/**
 * The memory of a fast-path resume, measured as figure 7a measures a live session's: the growth
 * of peak RSS over the RSS of a process that has already resumed a small session the same way
 * (its young generation grown, its code compiled), so that what is left is the big session's.
 * A process of its own, so that the warm-up does not warm the timed runs.
 */
async function resumeMemory(dir: string, id: string): Promise<ResumeChildResult> {
  const warmDir = mkdtempSync(join(tmpdir(), 'palimpsest-resume-warmup-'));
  try {
    const warm = await openJsonlStore(warmDir);
    await warmUp(warm, 'warmup', WARMUP_TURNS);
    for (let i = 0; i < 3; i++) {
      const loaded = await warm.load('warmup', { elideFinishedChunks: true });
      consume(Session.create({ seed: loaded.log ?? loaded.events, seedMode: 'parsed' }).seq);
    }
    await warm.close();
  } finally {
    rmSync(warmDir, { recursive: true, force: true });
  }
  return resumeOurs(dir, id, true);
}

/** The public API: `openSession` (lock, load, repair plan, validation, live session). */
async function resumeOpen(dir: string, id: string, elide: boolean): Promise<ResumeChildResult> {
  const rssBefore = process.memoryUsage().rss;
  const cpu = process.cpuUsage();
  const start = nowNs();
  const store = await openJsonlStore(dir);
  const session = await openSession(store, id, { chunks: elide ? 'elide' : 'full' });
  const end = nowNs();
  const cpuNs = cpuSince(cpu);
  const maxRss = maxRssBytes();
  const messages = session.deriveMessages();
  const deriveNs = Number(nowNs() - end);
  consume(messages.length);
  const events = session.seq;
  const elided = session.elidedChunkCount;
  await session.close();
  await store.close();
  return {
    ns: Number(end - start),
    cpuNs,
    parts: {},
    deriveNs,
    events,
    parsed: 0,
    maxRss,
    rssBefore,
    elided,
  };
}

const NEWLINE = 0x0a;

/** Floor: the whole file into one Buffer, then `JSON.parse` of every line (all kept). */
function resumeParse(file: string): ResumeChildResult {
  const rssBefore = process.memoryUsage().rss;
  const cpu = process.cpuUsage();
  const start = nowNs();
  const buffer = readFileSync(file);
  const values: unknown[] = [];
  let from = 0;
  for (;;) {
    const end = buffer.indexOf(NEWLINE, from);
    if (end === -1) break;
    values.push(JSON.parse(buffer.toString('utf8', from, end)));
    from = end + 1;
  }
  const ns = Number(nowNs() - start);
  const cpuNs = cpuSince(cpu);
  const maxRss = maxRssBytes();
  consume(values.length);
  return { ns, cpuNs, parts: {}, deriveNs: 0, events: 0, parsed: values.length, maxRss, rssBefore };
}

const TYPE_KEY = Buffer.from('"type":"');
const CHUNK_TYPE = Buffer.from('assistant/chunk"');
const COMMIT_START = Buffer.from('{"commit":');

/**
 * Floor of a fast path: the file into one Buffer, a scan for line ends, a byte comparison of
 * each line's type, and `JSON.parse` only of the lines that are not `assistant/chunk` (commit
 * markers are skipped too). What a resume that skips the chunk bodies could not beat.
 */
function resumeScan(file: string): ResumeChildResult {
  const rssBefore = process.memoryUsage().rss;
  const cpu = process.cpuUsage();
  const start = nowNs();
  const buffer = readFileSync(file);
  const values: unknown[] = [];
  let chunks = 0;
  let from = 0;
  for (;;) {
    const end = buffer.indexOf(NEWLINE, from);
    if (end === -1) break;
    if (buffer.compare(COMMIT_START, 0, COMMIT_START.length, from, from + COMMIT_START.length)) {
      const key = buffer.indexOf(TYPE_KEY, from);
      const at = key + TYPE_KEY.length;
      if (
        key !== -1 &&
        key < end &&
        buffer.compare(CHUNK_TYPE, 0, CHUNK_TYPE.length, at, at + CHUNK_TYPE.length) === 0
      ) {
        chunks++;
      } else {
        values.push(JSON.parse(buffer.toString('utf8', from, end)));
      }
    }
    from = end + 1;
  }
  const ns = Number(nowNs() - start);
  const cpuNs = cpuSince(cpu);
  const maxRss = maxRssBytes();
  consume(values.length + chunks);
  return {
    ns,
    cpuNs,
    parts: { skipped: chunks },
    deriveNs: 0,
    events: 0,
    parsed: values.length,
    maxRss,
    rssBefore,
  };
}

async function main(): Promise<void> {
  const [mode, ...args] = process.argv.slice(2);
  const arg = (i: number): string => {
    const value = args[i];
    if (value === undefined) throw new Error(`mode ${mode} needs argument ${i + 1}`);
    return value;
  };
  let result: AppendChildResult | ResumeChildResult;
  switch (mode) {
    case 'append':
      result = await appendChild(arg(0), arg(1), Number(arg(2)), Number(arg(3)), Number(arg(4)));
      break;
    case 'resume-ours':
      result = await resumeOurs(arg(0), arg(1), false);
      break;
    case 'resume-fast':
      result = await resumeOurs(arg(0), arg(1), true);
      break;
    case 'resume-open':
      result = await resumeOpen(arg(0), arg(1), false);
      break;
    case 'resume-open-fast':
      result = await resumeOpen(arg(0), arg(1), true);
      break;
    case 'resume-memory':
      result = await resumeMemory(arg(0), arg(1));
      break;
    case 'resume-parse':
      result = resumeParse(arg(0));
      break;
    case 'resume-scan':
      result = resumeScan(arg(0));
      break;
    default:
      throw new Error(`unknown mode ${String(mode)}`);
  }
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
