/**
 * Quick start: record a short agent session with a tool round trip, compact its first two turns
 * with a replace, and print the raw log, the surface and the messages the model now sees.
 *
 * Run with `npm run example`.
 */
import { checkInvariants, Session, type SessionEvent } from 'palimpsest';

const model = { kind: 'model', provider: 'example', model: 'scripted' } as const;
let clock = Date.UTC(2026, 10, 30, 9, 0, 0);
const session = Session.create({ id: 'quickstart', clock: () => clock++ });

/** One turn: the user asks, the model calls a tool, reads the result and answers. */
function turn(
  number: number,
  question: string,
  file: string,
  contents: string,
  answer: string,
): void {
  session.append('turn/start', { turn: number });
  session.append(
    'user/message',
    {
      id: `user-${number}`,
      role: 'user',
      content: [{ type: 'text', text: question }],
      source: { kind: 'user' },
    },
    { surfaceOp: 'append' },
  );

  // Step 1: the model streams a tool call; every stream part is logged as a chunk.
  session.append('step/start', { turn: number, step: 1 });
  const args = JSON.stringify({ path: file });
  const chunk = session.append('assistant/chunk', {
    turn: number,
    step: 1,
    chunk: { type: 'tool-input-delta', id: `call-${number}`, delta: args },
  });
  session.append(
    'assistant/message',
    {
      turn: number,
      step: 1,
      finishReason: 'tool-calls',
      message: {
        id: `assistant-${number}.1`,
        role: 'assistant',
        content: [{ type: 'tool-call', id: `call-${number}`, name: 'read_file', arguments: args }],
        source: model,
      },
    },
    { surfaceOp: 'append', sourceEventSeqs: [chunk.seq] },
  );
  const call = session.append('tool/call', {
    turn: number,
    step: 1,
    callId: `call-${number}`,
    name: 'read_file',
    arguments: args,
  });
  session.append(
    'tool/result',
    {
      turn: number,
      step: 1,
      message: {
        id: `result-${number}`,
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId: `call-${number}`,
            content: [{ type: 'text', text: contents }],
          },
        ],
      },
    },
    { surfaceOp: 'append', sourceEventSeqs: [call.seq] },
  );
  session.append('step/end', { turn: number, step: 1 });

  // Step 2: the model answers from the tool result.
  session.append('step/start', { turn: number, step: 2 });
  const chunks = answer.split(/(?<= )/).map(
    (delta) =>
      session.append('assistant/chunk', {
        turn: number,
        step: 2,
        chunk: { type: 'text-delta', id: 't0', delta },
      }).seq,
  );
  session.append(
    'assistant/message',
    {
      turn: number,
      step: 2,
      finishReason: 'stop',
      message: {
        id: `assistant-${number}.2`,
        role: 'assistant',
        content: [{ type: 'text', text: answer }],
        source: model,
      },
    },
    { surfaceOp: 'append', sourceEventSeqs: chunks },
  );
  session.append('step/end', { turn: number, step: 2 });
  session.append('turn/end', { turn: number, reason: { kind: 'completed' } });
}

turn(
  1,
  'What does package.json say the test command is?',
  'package.json',
  '{ "scripts": { "test": "vitest run" } }',
  'The test command is `vitest run`.',
);
turn(2, 'And which Node version does it need?', '.nvmrc', '20', 'It needs Node 20.');

// Compact turns 1 and 2: one summary message replaces their whole surface range. The summary
// cites every entry it shadows; the originals stay in the log underneath.
const before = session.surface.seqs;
const start = session.append('compaction/start', { id: 'compaction-1' });
const summary = session.append(
  'user/message',
  {
    id: 'summary-1',
    role: 'user',
    content: [
      {
        type: 'text',
        text: 'Summary of turns 1-2: tests run with `vitest run`; the project needs Node 20.',
      },
    ],
    source: { kind: 'compaction', id: 'compaction-1' },
  },
  {
    surfaceOp: { op: 'replace', start: before[0] ?? 0, end: before.at(-1) ?? 0 },
    sourceEventSeqs: [start.seq, ...before],
  },
);
session.append(
  'compaction/end',
  { id: 'compaction-1', replacedEntries: before.length },
  { sourceEventSeqs: [summary.seq] },
);

turn(
  3,
  'Summarise what you know.',
  'README.md',
  '# demo',
  'Tests use vitest and the project targets Node 20.',
);

function describe(event: SessionEvent): string {
  const op =
    event.surfaceOp === undefined
      ? ''
      : typeof event.surfaceOp === 'string'
        ? 'append'
        : `replace ${event.surfaceOp.start}..${event.surfaceOp.end}`;
  const sources =
    event.sourceEventSeqs === undefined ? '' : `cites ${JSON.stringify(event.sourceEventSeqs)}`;
  return `${String(event.seq).padStart(4)}  ${event.type.padEnd(18)} ${op.padEnd(15)} ${sources}`.trimEnd();
}

console.log('Raw log (every event, never rewritten):');
console.log(' seq  type               surface         provenance');
for (const event of session.events) console.log(describe(event));

console.log('\nSurface before the compaction:', JSON.stringify(before));
console.log('Surface now (what the model sees, in order):', JSON.stringify(session.surface.seqs));
console.log(`Replace generation: ${session.surface.replaceGeneration}`);

console.log('\nDerived messages (the next request):');
for (const message of session.deriveMessages()) {
  const text = message.content
    .map((block) =>
      block.type === 'text'
        ? block.text
        : block.type === 'tool-call'
          ? `→ ${block.name}(${block.arguments})`
          : block.type === 'tool-result'
            ? `← ${JSON.stringify(block.content)}`
            : `[${block.type}]`,
    )
    .join(' ');
  console.log(`  ${message.role.padEnd(9)} ${text}`);
}

console.log(
  `\nWhat the model saw right after turn 2 (messagesAt(${before.at(-1)})): ${session.messagesAt(before.at(-1) ?? 0).length} messages`,
);
console.log(
  `Transcript for people: ${session.transcript().length} entries (nothing hidden by the compaction)`,
);
console.log(`Invariant violations: ${checkInvariants(session.events).length}`);
