/**
 * A durable session: record a turn to a JSONL store, crash in the middle of a tool call (a child
 * process killed with SIGKILL), reopen (the crash is repaired durably), look at what the model
 * saw, and fork the session before the crash.
 *
 * Run with `npx tsx examples/durable-session.ts [directory]`.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkInvariants, forkSession, type Session } from 'palimpsest';
import { inspectSession, openSession, openStore } from 'palimpsest/store';

const model = { kind: 'model', provider: 'example', model: 'scripted' } as const;

/** Records a turn that asks for a tool and stops once the tool has started: the "crash". */
async function crashingWriter(directory: string): Promise<void> {
  const store = await openStore(`jsonl:${directory}`);
  const session = await openSession(store, 'demo');
  session.append('turn/start', { turn: 1 });
  session.append(
    'user/message',
    {
      id: 'u1',
      role: 'user',
      content: [{ type: 'text', text: 'Delete build/ please.' }],
      source: { kind: 'user' },
    },
    { surfaceOp: 'append' },
  );
  session.append('step/start', { turn: 1, step: 1 });
  session.append(
    'assistant/message',
    {
      turn: 1,
      step: 1,
      finishReason: 'tool-calls',
      message: {
        id: 'a1',
        role: 'assistant',
        content: [
          { type: 'tool-call', id: 'call-1', name: 'shell', arguments: '{"cmd":"rm -rf build"}' },
        ],
        source: model,
      },
    },
    { surfaceOp: 'append', sourceEventSeqs: [] },
  );
  session.append('tool/call', {
    turn: 1,
    step: 1,
    callId: 'call-1',
    name: 'shell',
    arguments: '{"cmd":"rm -rf build"}',
  });
  // Durable before the tool runs, as an agent loop would do: if we die now, the log knows the
  // call had started.
  await session.flush();
  process.kill(process.pid, 'SIGKILL');
}

function show(title: string, session: Session): void {
  console.log(`\n${title}`);
  for (const message of session.deriveMessages()) {
    const text = message.content
      .map((block) =>
        block.type === 'text'
          ? block.text
          : block.type === 'tool-call'
            ? `→ ${block.name}(${block.arguments})`
            : block.type === 'tool-result'
              ? `← ${block.content.map((inner) => (inner.type === 'text' ? inner.text : '[image]')).join(' ')}`
              : `[${block.type}]`,
      )
      .join(' ');
    console.log(`  ${message.role.padEnd(9)} ${text}`);
  }
}

async function main(): Promise<void> {
  const [role, given] = process.argv.slice(2);
  if (role === '--child') return crashingWriter(given ?? '');
  const directory = given ?? mkdtempSync(join(tmpdir(), 'palimpsest-example-'));

  // 1. A writer process records half a turn and is killed while its tool runs.
  const child = spawnSync(process.execPath, [
    ...process.execArgv,
    process.argv[1] ?? '',
    '--child',
    directory,
  ]);
  console.log(
    `writer process ended by ${child.signal ?? `exit code ${child.status}`} in ${directory}`,
  );

  const store = await openStore(`jsonl:${directory}`);

  // 2. Read-only inspection repairs in memory only.
  const view = await inspectSession(store, 'demo');
  console.log(`inspect: ${view.seq} events (with in-memory repair), nothing written`);

  // 3. Opening for writing takes the lock (the dead writer's lock is stale) and repairs durably.
  const session = await openSession(store, 'demo');
  console.log(
    `open: ${session.openReport.repairedEvents} repair events appended, ${session.openReport.tornBytesDropped} torn bytes dropped`,
  );
  show('What the model sees now:', session);
  console.log(
    `invariant violations: ${checkInvariants(session.events, { requireClosed: true }).length}`,
  );

  // 4. Time travel and fork: the session as it was right after the user's message.
  const userSeq = session.events.find((event) => event.type === 'user/message')?.seq ?? 0;
  console.log(`\nmessagesAt(${userSeq}): ${session.messagesAt(userSeq).length} message(s)`);
  const turnEnd = session.events.findLast((event) => event.type === 'turn/end')?.seq ?? 0;
  const fork = forkSession(session, turnEnd, { id: 'demo-retry' });
  console.log(
    `fork '${fork.id}' of '${fork.header.parentSession}' with ${fork.header.seedLength} events`,
  );

  await session.close();
  await store.close();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
