/**
 * The PostgreSQL takeover benchmark: how long after its holder dies or freezes another worker
 * takes a session, against the bound the store promises (the lease plus one heartbeat). Each
 * trial runs a real worker process holding a session's lease, then:
 *
 * - kill: SIGKILL, with the lease row's owner moved to another host name, as a worker on
 *   another machine (whose process the taker cannot look at; on its own host a dead holder is
 *   recognised at once);
 * - freeze: the worker stops inside an append's transaction (after its fencing read, before its
 *   rows) and is SIGSTOPped, holding the session's row lock.
 *
 * A taker polls `openSession` every 50 ms, as a fleet's workers do; the time is from the kill or
 * the freeze to the taker's open. Starts a throwaway server (test/postgres/server.ts).
 *
 *   npm run bench:takeover
 *
 * Prints the tables and rewrites the takeover section of docs/benchmarks.md. Not a test.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { hostname } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { LockedError, openSession } from '../src/store/index.js';
import { openPostgresStore } from '../src/store/postgres/index.js';
import { startPostgres } from '../test/postgres/server.js';
import { untilOutput } from '../test/store/child-output.js';
import { median } from './measure.js';
import {
  formatDuration,
  machineInfo,
  progressReporter,
  type Report,
  renderMarkdown,
  renderText,
  type SummaryRow,
  writeSection,
} from './report.js';

const LEASE_MS = 1500;
const HEARTBEAT_MS = LEASE_MS / 3;
const TRIALS = 8;
const POLL_MS = 50;
const startedNs = process.hrtime.bigint();
const progress = progressReporter(startedNs);
const here = dirname(fileURLToPath(import.meta.url));
const children = join(here, '../test/store/postgres');

type Scenario = 'kill' | 'freeze';

/** Starts `script` and resolves once it prints `marker`. */
async function worker(
  script: string,
  args: readonly string[],
  marker: string,
): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(children, script), ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await untilOutput(child, marker);
  return child;
}

/** Milliseconds from the holder's death or freeze to another worker's `openSession`. */
async function trial(url: string, schema: string, scenario: Scenario, id: string): Promise<number> {
  const child =
    scenario === 'kill'
      ? await worker('lease-child.ts', [url, schema, id, String(LEASE_MS)], 'ready')
      : await worker('frozen-writer-child.ts', [url, schema, id, String(LEASE_MS)], 'frozen');
  // A random point in the heartbeat cycle, as a real failure would fall.
  await new Promise((ok) => setTimeout(ok, Math.random() * HEARTBEAT_MS));
  const start = performance.now();
  if (scenario === 'kill') {
    child.kill('SIGKILL');
    await new Promise((ok) => child.once('exit', ok));
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query(
      `UPDATE "${schema}".leases SET owner = replace(owner, $1, $2) WHERE session_id = $3`,
      [JSON.stringify(hostname()), JSON.stringify('another-host'), id],
    );
    await client.end();
  } else {
    child.kill('SIGSTOP');
  }
  const store = await openPostgresStore({ connectionString: url, schema, leaseMs: LEASE_MS });
  try {
    for (;;) {
      try {
        const session = await openSession(store, id);
        const elapsed = performance.now() - start;
        await session.close();
        return elapsed;
      } catch (error) {
        if (!(error instanceof LockedError)) throw error;
        await new Promise((ok) => setTimeout(ok, POLL_MS));
      }
    }
  } finally {
    await store.close();
    child.kill('SIGKILL');
  }
}

async function main(): Promise<void> {
  const server = await startPostgres();
  const summary: SummaryRow[] = [];
  const rows: string[][] = [];
  const bound = LEASE_MS + HEARTBEAT_MS;
  try {
    const schema = 'takeover';
    const setup = await openPostgresStore({ connectionString: server.url, schema });
    await setup.close();
    for (const [index, scenario] of (['kill', 'freeze'] as const).entries()) {
      const times: number[] = [];
      for (let n = 0; n < TRIALS; n++) {
        const ms = await trial(server.url, schema, scenario, `${scenario}-${n}`);
        times.push(ms);
        progress(`${scenario}: trial ${n + 1}/${TRIALS} took over after ${ms.toFixed(0)} ms`);
      }
      const worst = Math.max(...times);
      summary.push({
        id: String(index + 1),
        what:
          scenario === 'kill'
            ? `takeover after the holder was killed on another host, worst of ${TRIALS}, vs the lease plus one heartbeat`
            : `takeover after the holder froze inside an append, worst of ${TRIALS}, vs the lease plus one heartbeat`,
        ours: formatDuration(worst * 1e6),
        floor: formatDuration(bound * 1e6),
        ratio: `${(worst / bound).toFixed(2)}×`,
        goal: '≤ 1.00×',
        verdict: worst <= bound ? 'pass' : 'miss',
      });
      rows.push([
        scenario === 'kill' ? 'killed (another host)' : 'frozen in an append',
        formatDuration(Math.min(...times) * 1e6),
        formatDuration(median(times) * 1e6),
        formatDuration(worst * 1e6),
        times.map((ms) => ms.toFixed(0)).join(', '),
      ]);
    }
  } finally {
    server.stop();
  }
  const report: Report = {
    section: 'takeover',
    intro: [
      `How soon another worker takes a PostgreSQL session whose holder died or froze, with a ${LEASE_MS} ms lease and a ${HEARTBEAT_MS} ms heartbeat. The goal is the lease plus one heartbeat in every trial.`,
    ],
    runtime: 'about 1 minute',
    reproduce: [
      'Times depend on the lease, not on the machine: a trial waits for the lease to lapse.',
    ],
    machine: machineInfo(),
    summary,
    details: [
      {
        title: 'Trials',
        intro: 'From the kill or the freeze to the taker’s `openSession`, in milliseconds.',
        header: ['holder', 'fastest', 'median', 'slowest', 'every trial (ms)'],
        rows,
      },
    ],
    method: [
      'Kill: a worker process (`test/store/postgres/lease-child.ts`) opens a session and records a turn that stops in a tool call; at a random point of its heartbeat cycle it is SIGKILLed and its lease row’s owner is renamed to another host, so the taker must wait for the lease to lapse instead of seeing the process gone.',
      'Freeze: a worker (`test/store/postgres/frozen-writer-child.ts`) stops inside its second append’s transaction, holding the session row’s lock, and is SIGSTOPped. The server ends the idle transaction after `leaseMs` (`idle_in_transaction_session_timeout`).',
      `The taker is another store (its own pool) polling \`openSession\` every ${POLL_MS} ms until it succeeds.`,
      'Source: `bench/takeover.ts`.',
    ],
    notes: [],
    durationSeconds: Number(process.hrtime.bigint() - startedNs) / 1e9,
  };
  process.stdout.write(`\n${renderText(report)}\n`);
  const target = resolve(here, '../docs/benchmarks.md');
  writeSection(target, 'takeover', renderMarkdown(report));
  progress(`wrote the takeover section of ${target}`);
}

main().catch((error: unknown) => {
  process.stderr.write(
    `${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exitCode = 1;
});
