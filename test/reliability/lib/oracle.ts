/**
 * The crash oracle: runs the child writer (writer.ts, bundled) against a real store, kills it
 * with SIGKILL at a named failpoint or at a random time, then checks each session the way a
 * restarted application would see it. Also the provider-validity check of derived messages,
 * shared by every harness that repairs a session.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import {
  checkInvariants,
  foldSurface,
  type Message,
  PalimpsestError,
  type SessionEvent,
} from '../../../src/core/index.js';
import { openSession, type SessionStore } from '../../../src/store/index.js';
import { add, fail, type Tally } from './results.js';

/** What each session's writer acknowledged: session id → seq → the event's JSON. */
export type Acknowledged = Map<string, Map<number, string>>;

/** What one kill produced. */
export interface KillOutcome {
  readonly failpoint: string;
  /** The failpoint was reached (false: killed at a random time or after the timeout). */
  readonly hit: boolean;
  readonly ackedEvents: number;
  /** The child never said it had opened its sessions within the bound. */
  readonly hung: boolean;
  /** The child exited by itself (a failed open after a crash, say): its stderr. */
  readonly exited?: string;
}

/** How long a child may take to open its sessions before the kill counts as a hang. */
const OPEN_BOUND_MS = 15_000;

/**
 * Runs one child until it reaches `failpoint` (its `hit`-th time) or, for `random`, until a
 * random delay after it opened; then SIGKILLs it. A named failpoint the child does not reach
 * within `failpointWaitMs` of opening (nothing to repair, say) ends as a timed kill.
 */
export async function runAndKill(options: {
  script: string;
  backend: string;
  location: string;
  failpoint: string;
  hit: number;
  seed: number;
  sessions: number;
  randomDelayMs: number;
  acked: Acknowledged;
  failpointWaitMs?: number;
  /** Runs a deliberately broken store in the child (see writer.ts). */
  mutant?: string;
  /** With `random`: runs once the child has opened its sessions, then the kill follows. */
  whileRunning?: () => Promise<void>;
}): Promise<KillOutcome> {
  const child = spawn(
    process.execPath,
    [
      options.script,
      options.backend,
      options.location,
      options.failpoint,
      String(options.hit),
      String(options.seed),
      String(options.sessions),
    ],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
      env:
        options.mutant === undefined
          ? process.env
          : { ...process.env, PALIMPSEST_MUTANT: options.mutant },
    },
  );
  let hit = false;
  let hung = false;
  let opened = 0;
  let ackedEvents = 0;
  let stderr = '';
  let buffer = '';
  let exitedBySelf: string | undefined;
  const exited = new Promise<void>((resolve) =>
    child.on('exit', (code) => {
      if (code !== null) exitedBySelf = `code ${code}: ${stderr.slice(0, 1500)}`;
      resolve();
    }),
  );
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  await new Promise<void>((resolve) => {
    let timer = setTimeout(() => {
      hung = true;
      kill(child, resolve);
    }, OPEN_BOUND_MS);
    const armAfterOpen = (ms: number): void => {
      clearTimeout(timer);
      timer = setTimeout(() => kill(child, resolve), ms);
    };
    child.stdout?.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      let newline = buffer.indexOf('\n');
      while (newline !== -1) {
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + 1);
        newline = buffer.indexOf('\n');
        if (line.startsWith('ACK ')) {
          const space = line.indexOf(' ', 4);
          const id = line.slice(4, space);
          const json = line.slice(space + 1);
          const seq = (JSON.parse(json) as SessionEvent).seq;
          let session = options.acked.get(id);
          if (session === undefined) {
            session = new Map();
            options.acked.set(id, session);
          }
          session.set(seq, json);
          ackedEvents++;
        } else if (line.startsWith('FAILPOINT ')) {
          hit = true;
          clearTimeout(timer);
          kill(child, resolve);
        } else if (line.startsWith('OPEN ') && ++opened === options.sessions) {
          const during = options.whileRunning;
          if (during !== undefined) {
            clearTimeout(timer);
            void during().finally(() => kill(child, resolve));
          } else
            armAfterOpen(
              options.failpoint === 'random'
                ? Math.floor(options.randomDelayMs)
                : (options.failpointWaitMs ?? 200),
            );
        }
      }
    });
    exited.then(() => {
      clearTimeout(timer);
      resolve();
    });
  });
  await exited;
  return {
    failpoint: options.failpoint,
    hit,
    ackedEvents,
    hung,
    ...(exitedBySelf === undefined ? {} : { exited: exitedBySelf }),
  };
}

function kill(child: ChildProcess, done: () => void): void {
  child.kill('SIGKILL');
  done();
}

/**
 * The rules a provider enforces on a request's messages: every tool call of an assistant
 * message answered by exactly one tool result before the next user or assistant message, no
 * result without its call, no empty assistant message, and a user message first.
 */
export function providerProblems(messages: readonly Message[]): string[] {
  const problems: string[] = [];
  let pending = new Set<string>();
  if (messages.length > 0 && messages[0]?.role !== 'user')
    problems.push(`the first message is a ${messages[0]?.role} message`);
  messages.forEach((message, index) => {
    if (message.role === 'tool') {
      for (const block of message.content) {
        if (block.type === 'tool-result' && !pending.delete(block.toolCallId))
          problems.push(`message ${index}: a result for ${block.toolCallId}, which no call awaits`);
      }
      return;
    }
    if (pending.size > 0)
      problems.push(`message ${index}: tool calls ${[...pending].join(', ')} left unanswered`);
    pending = new Set();
    if (message.role === 'assistant') {
      if (message.content.length === 0)
        problems.push(`message ${index}: an empty assistant message`);
      for (const block of message.content) if (block.type === 'tool-call') pending.add(block.id);
    }
  });
  if (pending.size > 0) problems.push(`tool calls ${[...pending].join(', ')} left unanswered`);
  return problems;
}

/** SHA-256 of a file (undefined when there is no file to compare). */
export function fingerprint(file: string | undefined): string | undefined {
  if (file === undefined) return undefined;
  try {
    return createHash('sha256').update(readFileSync(file)).digest('hex');
  } catch {
    return 'absent';
  }
}

/**
 * Reopens session `id` as a restarted writer would and checks it, adding to `t`: every
 * acknowledged event present and unchanged (lost, altered), seqs contiguous, the surface folds
 * from the log alone to what the session holds, the derived messages are valid for a provider,
 * the repaired log passes the invariant checker, and a second open writes nothing (repair
 * written once). A typed error from the open is a loss (a crash must never make a session
 * unreadable); any other error is untyped.
 */
export async function checkAfterCrash(
  t: Tally,
  store: SessionStore,
  id: string,
  acked: ReadonlyMap<number, string>,
  artifact: string | undefined,
): Promise<void> {
  t.acked += acked.size;
  let events: readonly SessionEvent[];
  try {
    const live = await openSession(store, id);
    events = live.events;
    const report = live.openReport;
    const surface = live.surface.seqs;
    const messages = live.deriveMessages();
    await live.close();
    if (report.repairedEvents > 0) {
      add(t, 'repairs');
      for (const event of events.slice(events.length - report.repairedEvents)) {
        const text = JSON.stringify(event.data);
        if (text.includes('TOOL_OUTCOME_UNKNOWN')) add(t, 'closers: outcome unknown');
        if (text.includes('TOOL_NOT_STARTED')) add(t, 'closers: not started');
      }
    }
    if (report.tornBytesDropped > 0) add(t, 'torn tails dropped');
    for (const [seq, json] of acked) {
      const stored = events[seq];
      if (stored === undefined) fail(t, 'lost', `${id}: acknowledged event ${seq} is missing`);
      else if (JSON.stringify(stored) !== json)
        fail(t, 'altered', `${id}: acknowledged event ${seq} is different`);
    }
    events.forEach((event, index) => {
      if (event.seq !== index) fail(t, 'altered', `${id}: seq ${event.seq} at index ${index}`);
    });
    const folded = foldSurface(events).seqs;
    if (JSON.stringify(folded) !== JSON.stringify(surface))
      fail(t, 'altered', `${id}: the surface folded from the log differs from the session's`);
    const problems = providerProblems(messages);
    if (problems.length > 0)
      fail(t, 'altered', `${id}: derived messages a provider refuses: ${problems[0]}`);
    const violations = checkInvariants(events, { requireClosed: true });
    if (violations.length > 0)
      fail(t, 'altered', `${id}: invariants: ${JSON.stringify(violations.slice(0, 2))}`);
  } catch (error) {
    if (PalimpsestError.isInstance(error))
      fail(t, 'lost', `${id}: the open after a crash failed: ${(error as Error).message}`, 1);
    else fail(t, 'untyped', `${id}: ${String(error)}`);
    return;
  }
  try {
    const before = fingerprint(artifact);
    const again = await openSession(store, id);
    const second = again.openReport;
    const reopened = again.events;
    await again.close();
    if (second.repairedEvents !== 0 || second.tornBytesDropped !== 0)
      fail(t, 'altered', `${id}: the second open wrote: ${JSON.stringify(second)}`);
    if (fingerprint(artifact) !== before)
      fail(t, 'altered', `${id}: the second open changed the log file`);
    if (JSON.stringify(reopened) !== JSON.stringify(events))
      fail(t, 'altered', `${id}: the second open gave other events`);
  } catch (error) {
    if (PalimpsestError.isInstance(error))
      fail(t, 'lost', `${id}: the second open failed: ${(error as Error).message}`);
    else fail(t, 'untyped', `${id}: second open: ${String(error)}`);
  }
}
