/**
 * Renders docs/reliability.md from the tallies the harnesses wrote (one JSON file per category
 * and backend, see lib/results.ts). Called by the suite's global teardown; a run of only some
 * harnesses prints its table but leaves the committed report alone, so the report always
 * describes a whole run. Throws (failing the run) when any tally lost, altered, hid an untyped
 * error or hung.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { CATEGORIES, CATEGORY_BACKENDS, type Category, SCALE, type Tally } from './lib/results.js';

const root = join(import.meta.dirname, '..', '..');

/** What each category does, in one sentence, for the report. */
const WHAT: Record<Category, string> = {
  crash:
    'A child writer recording agent turns on three sessions is killed with SIGKILL at each named failpoint of the write path and at random times; a copy of the store is reopened as a restarted writer would (repair), and each session checked: acknowledged events present and unchanged, contiguous seqs, the surface folds to what the session holds, derived messages a provider accepts, invariants hold, a second open writes nothing.',
  'power-loss':
    'JSONL: the real backend on a simulated file system (CrashFs) cut at a random operation, the disk rebuilt from what fdatasync and directory fsyncs made durable plus a random, possibly torn or NUL-garbled part of the rest. SQLite: copies of the ledger, database and WAL taken while a child process writes; each copy must hold every event acknowledged before it began, or give a typed error, and is then repaired and checked like a crash.',
  corruption:
    'A pristine store is written once; each case damages one file of a fresh copy in /dev/shm (a flipped bit, a burst of random bytes, a zeroed range of up to 4 KiB, or a cut) and lists and loads every session (read-only, every fourth case also for writing). Each session must give its exact acknowledged events or a typed error. "Detected" counts sessions, "runs" damaged copies. PostgreSQL, whose files belong to its server: each case edits the rows of a pristine store with SQL (a value of one row changed, a bit of a chunk run flipped, two rows\' seqs swapped, a row moved to another session, deleted or copied, a checksum changed; no checksum recomputed) and reads every session by the listing, a full, a fast and a salvaging load, a follower and the summary; an edited session must be a typed error on every load (a "silent load" is one that returns it), every other session exact. "Detected" counts edited sessions, "runs" edits.',
  'disk-faults':
    'Real faults where the suite can mount a tmpfs (as root): a file system that fills up under a live writer, and one remounted read-only. JSONL also through its fault-injecting fs facade: EIO, ENOSPC and EROFS on write, after a short write, and on fdatasync. After each: a typed error, every acknowledged event after reopening, no partial batch left, the session writes again; after a failed fdatasync no append is accepted.',
  concurrency:
    '2, 4 and 8 writer processes on one session through the single-writer lock, 4 through optimistic appends with expectedSeq, and 4 and 8 on sessions of their own in one store: each acknowledged event present once at its seq, batches contiguous, lock windows never overlapping; and the time to take over the lock of a holder killed with SIGKILL. PostgreSQL: a writer frozen (SIGSTOP) inside the transaction of an append after 1 to 4 committed batches, taken over by a polling worker with every acknowledged event, nothing of the frozen batch and the turn repaired.',
  'ledger-copies':
    'SQLite only (the other backends keep no ledger). A store is written over 8 generations (each one open of a writer: sessions created and grown by 0 to 3 commits), and its database and ledger kept after each. Each trial puts a database beside a ledger it does not pair with: none, another store’s, an older copy of its own, or its own newer one beside an older database; then opens it read-only and for writing, lists and loads every session, and appends to each stale one. No session its ledger cannot vouch for may list or load without a typed error (silent loads count as lost), no writable open may make or change a ledger, no append may re-vouch a stale session, and no session that should load may be refused. A session one write transaction ahead of an older ledger (what a crash between a commit and its ledger record leaves), or two made back to back in one open (what a power cut can leave while the ledger’s background fsync runs), may load; three, or two in different opens, may not.',
  'hostile-input':
    'Sessions carrying terminal escapes, markup, NUL, U+2028, __proto__ keys and SQL-looking text, ids that look like paths or SQL, ids every backend must refuse, and FIFOs, device links, directories and links out of the store where a store expects its own files; every CLI command that reads a store must end within 6 s with a documented exit code, print nothing raw, and write nothing outside the store.',
};

/** What each backend detects and what it cannot (consistent with docs/durability.md). */
const DETECTION = `| damage or fault | JSONL | SQLite | PostgreSQL |
|---|---|---|---|
| process killed (\`kill -9\`) at any point | acknowledged events kept; a torn final batch dropped and the open turn closed by repair | acknowledged events kept (transactions are atomic); the open turn closed by repair | acknowledged events kept (transactions); a killed worker's lease taken over at once on its host, within \`leaseMs\` elsewhere; the open turn closed by repair |
| the database server killed (\`pg_ctl restart -m immediate\`) | n/a | n/a | acknowledged events kept; clients retry within \`retryMs\`; a batch committed before its client heard is applied once |
| power loss / OS crash, storage honouring fsync | acknowledged events kept (simulated file system) | acknowledged events kept (\`synchronous=FULL\`); measured here only through copies of live files, not a simulated power cut | the server's own guarantees (\`fsync\`, \`synchronous_commit\`); not measured here |
| a flipped byte or garbage in an event, outside the last batch | \`CorruptLogError\` (batch CRC-32) | \`CorruptLogError\` (row CRC-32, or SQLite's own structure check) | \`CorruptLogError\` (row CRC-32, schema 4), measured as values edited with SQL (next row); damage to the server's own files is the server's to report (its data checksums, if enabled) |
| a row edited with SQL (a value, a seq, a session; no checksum recomputed) | n/a | \`CorruptLogError\` (row CRC-32); tested with single edits (an event's time, a run's columns), no random campaign | \`CorruptLogError\` naming the session on every load (full, fast, salvaging, a follower); the listing names an edited session row as damaged; the summary checks only the rows it reads |
| damage inside the **last** batch of a log | **read as a torn tail**: dropped with \`tornTail\` reported, even if it was acknowledged | n/a (no batches) | n/a |
| a log cut short, or destroyed up to its end (its last commit line gone) | **read as the prefix before the damage**: \`tornTail\` reported, or nothing at all when the cut falls on a batch boundary — JSONL keeps no length outside the log | n/a | rows missing below the recorded length: \`CorruptLogError\` |
| a damaged, truncated or zeroed WAL | n/a | \`CorruptLogError\` for every session shorter than the ledger records; vanished sessions listed as damaged | the server's recovery |
| a database without its ledger (\`<db>-lengths\`), or beside another database's | n/a | \`LedgerError\` (\`LEDGER_MISSING\`, \`LEDGER_MISMATCH\`, exit 4) on every open, read-only or not; no ledger is made; \`palimpsest repair --adopt-ledger\` adopts the database as it is | n/a |
| a ledger older than its database (behind a session by more than a crash or a power cut leaves: one write transaction, two back to back), or a database older than its ledger | n/a | \`LedgerError\` \`LEDGER_STALE\` for each session the ledger cannot vouch for (appends to it refused); \`CorruptLogError\` for each session the database lost events of, vanished sessions listed as damaged | n/a |
| damage to the ledger's own lines | n/a | **a weaker bound**: a line failing its checksum is skipped, so a loss in the database at the same time could read as a shorter session; \`LEDGER_STALE\` where the ledger lost what a session row relies on, \`LEDGER_MISMATCH\` where it lost every line naming it | n/a |
| a whole log file deleted | **not detected** (no index of sessions) | n/a (detected through the ledger) | n/a |
| damage to bytes no read touches (free pages, unused space) | nothing to detect | nothing to detect | nothing to detect |
| disk full, read-only file system, EIO on write or fsync | typed \`StorageError\` / \`WriterFailedError\`; nothing partial left; nothing acknowledged lost; no append after a failed fsync | typed \`StorageError\` / \`WriterFailedError\`; nothing acknowledged lost; **EIO not injected** (no VFS seam from JavaScript) | the server's errors, typed as \`StorageError\`; not injected here |
| a FIFO, device, directory or link where a store file belongs | \`UnsafeFileError\` (exit 4) for logs and lock files, found without reading them | \`UnsafeFileError\` (exit 4) for the ledger | n/a (no files) |`;

function sh(command: string, args: string[]): string {
  try {
    return execFileSync(command, args, { cwd: root, encoding: 'utf8' }).trim();
  } catch {
    return 'unknown';
  }
}

function read(dir: string): Tally[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((name) => name.endsWith('.json'))
    .map((name) => JSON.parse(readFileSync(join(dir, name), 'utf8')) as Tally);
}

const n = (value: number) => value.toLocaleString('en-US');

function figureText(value: number | string): string {
  return typeof value === 'number' ? n(value) : value;
}

/** Renders the report; writes it when every category ran on every backend. */
export function renderReport(dir: string, run: { seconds: number }): void {
  const tallies = read(dir);
  const backends = [...new Set(tallies.map((t) => t.backend))].sort();
  const missing = CATEGORIES.flatMap((category) =>
    (CATEGORY_BACKENDS[category] ?? ['jsonl', 'sqlite'])
      .filter((backend) => !tallies.some((t) => t.category === category && t.backend === backend))
      .map((backend) => `${category}/${backend}`),
  );
  const broken = tallies.filter((t) => t.lost + t.altered + t.untyped + t.hangs > 0);
  const rows = CATEGORIES.flatMap((category) =>
    backends.flatMap((backend) => {
      const t = tallies.find((entry) => entry.category === category && entry.backend === backend);
      if (t === undefined) return [];
      return [
        `| ${category} | ${backend} | ${n(t.runs)} | ${n(t.faults)} | ${n(t.acked)} | ${t.lost} | ${t.altered} | ${t.untyped} | ${t.hangs} | ${n(t.detected)} | ${t.mutantsKilled}/${t.mutantsRun} |`,
      ];
    }),
  );
  const known = tallies.flatMap((t) =>
    Object.entries(t.figures)
      .filter(([name]) => name.startsWith('known defect') || name.includes('(known defect)'))
      .map(
        ([name, value]) =>
          `- **${t.backend}, ${t.category}**: ${name.replace(/^known defect: /, '')} — ${figureText(value)} case(s).`,
      ),
  );
  const details = CATEGORIES.map((category) => {
    const lines = backends.flatMap((backend) => {
      const t = tallies.find((entry) => entry.category === category && entry.backend === backend);
      if (t === undefined) return [];
      const figures = Object.entries(t.figures)
        .filter(([name]) => !name.startsWith('known defect'))
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([name, value]) => `  - ${name}: ${figureText(value)}`);
      return [`- **${backend}**`, ...figures];
    });
    return `### ${category}\n\n${WHAT[category]}\n\n${lines.join('\n')}`;
  });
  const cpu = cpus();
  const markdown = `# Reliability report

*Generated by the standing reliability suite (\`npm run test:reliability\`, harnesses in
\`test/reliability/\`); do not edit by hand. Each harness records its counts, and this page is
rendered from them at the end of the run. The run fails if any count of lost, altered, untyped
or hung is not zero, and every harness is also run against deliberately broken components
(mutants) that it must catch.*

- command: \`${SCALE === 1 ? 'npm run test:reliability' : `PALIMPSEST_SOAK_SCALE=${SCALE} npm run test:soak`}\` (count scale ${SCALE})
- date: ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC; commit ${sh('git', ['rev-parse', '--short', 'HEAD'])}
- machine: node ${process.version}, ${cpu.length} cores (${cpu[0]?.model.trim() ?? 'unknown'}), ${Math.round(totalmem() / 1024 ** 3)} GB, ${process.platform} ${sh('uname', ['-r'])}; shared with other work while it ran
- duration: ${Math.round(run.seconds)} s
- verdict: **${broken.length === 0 && missing.length === 0 ? 'PASS' : broken.length === 0 ? 'PASS (partial run)' : 'FAIL'}**

## Results

"Acknowledged events checked" counts every comparison of an acknowledged event with what the
store gave back (an event checked after each of ten kills counts ten times). "Detected" counts
typed refusals of damaged data (\`CorruptLogError\`, \`FormatVersionError\`, or another typed
error where a fault was injected). Lost, altered, untyped and hangs must be 0.

| category | backend | runs | faults injected | acknowledged events checked | lost | altered | untyped errors | hangs | detected (typed) | mutants killed |
|---|---|---|---|---|---|---|---|---|---|---|
${rows.join('\n')}

## Known defects

Found by the suite and kept out of the counts above, each as a test that fails until the
defect is fixed (\`KNOWN DEFECT\` in the test names); they are routed as issues.

${known.length > 0 ? known.join('\n') : '- none'}

## What each backend detects and what it cannot

Stated plainly, as \`docs/durability.md\` promises it; the corruption figures below count the
documented JSONL exceptions apart.

${DETECTION}

## Per category

${details.join('\n\n')}
`;
  for (const t of broken)
    console.error(`reliability: ${t.category}/${t.backend}: ${t.failures.join('; ')}`);
  if (missing.length > 0) {
    console.log(
      `reliability: partial run (missing ${missing.join(', ')}); docs/reliability.md left as it is`,
    );
  } else {
    const target =
      process.env.PALIMPSEST_RELIABILITY_REPORT ?? join(root, 'docs', 'reliability.md');
    writeFileSync(target, markdown);
    console.log(`reliability: report written to ${target}`);
  }
  if (broken.length > 0) throw new Error(`reliability: ${broken.length} tallies broke a promise`);
}
