/**
 * The importers on session files the harnesses wrote themselves (test/import/corpus, with their
 * sources and licenses in its README): each file imports into the one conversation its harness
 * shows (and a session for each subagent conversation it keeps inside it, linked both ways),
 * passes the log linter (a source that ends inside a turn may leave it open), and carries over
 * the messages, tool calls and tool results the source holds, counted independently of the
 * importer (the counts and how they were made are in the corpus README).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkInvariants, type Message, type SessionEvent } from '../../src/core/index.js';
import { sameImportedEvent } from '../../src/import/builder.js';
import { readSourceFile } from '../../src/import/index.js';
import { type Counts, FILES } from './corpus-files.js';

const corpus = join(import.meta.dirname, 'corpus');

function counted(events: readonly SessionEvent[]): Counts & { readonly answers: number } {
  let inputs = 0;
  let answers = 0;
  let calls = 0;
  let results = 0;
  for (const event of events) {
    if (event.surfaceOp === undefined) continue;
    if ((event.data as { origin?: { made?: string } }).origin?.made !== undefined) continue;
    if (event.type === 'user/message' && event.data.source.kind !== 'compaction') inputs++;
    if (event.type === 'context/message') inputs++;
    if (event.type === 'tool/result') results++;
    if (event.type === 'assistant/message') {
      answers++;
      calls += event.data.message.content.filter((block) => block.type === 'tool-call').length;
    }
  }
  return { inputs, answers, calls, results };
}

describe.each(FILES)('the %s file %s', (harness, file, expected) => {
  const imported = readSourceFile(harness, join(corpus, harness, file));
  const { sidechains = [], ...own } = expected;

  it('imports as the one conversation its harness shows, and passes the linter', () => {
    expect(imported.sessions).toHaveLength(1 + sidechains.length);
    for (const session of imported.sessions) {
      // A source that ends inside a turn (the harness stopped mid-turn) leaves it open.
      const findings = checkInvariants(session.events, { requireClosed: true });
      expect(findings.filter((finding) => finding.code !== 'OPEN_AT_END')).toEqual([]);
    }
  });

  it('carries over the messages, calls and results the source holds', () => {
    const [main, ...subagents] = imported.sessions.map((session) => counted(session.events));
    const drop = ({ answers, ...rest }: Counts) =>
      expected.answers === undefined ? rest : { answers, ...rest };
    expect(main === undefined ? undefined : drop(main)).toEqual(own);
    expect(subagents.map(drop)).toEqual(sidechains);
  });
});

describe.each(FILES.filter(([, , expected]) => (expected.sidechains ?? []).length > 0))(
  'the %s file %s, with subagents kept inside it,',
  (harness, file) => {
    const imported = readSourceFile(harness, join(corpus, harness, file));

    it('links each subagent conversation to the call that spawned it, both ways', () => {
      const [main, ...subagents] = imported.sessions;
      const children = new Map(
        (main?.events ?? [])
          .filter((event) => event.type === 'tool/result')
          .flatMap((event) => {
            const data = event.data as { child?: { session: string }; message: Message };
            const block = data.message.content[0];
            return data.child === undefined || block?.type !== 'tool-result'
              ? []
              : [[data.child.session, block.toolCallId] as const];
          }),
      );
      for (const subagent of subagents) {
        // Its conversation ended where its result reached the parent.
        expect(checkInvariants(subagent.events, { requireClosed: true })).toEqual([]);
        const link = subagent.header.metadata?.subagentOf as {
          session: string;
          toolCallId: string;
        };
        expect(link.session).toBe(main?.header.id);
        expect(children.get(subagent.header.id)).toBe(link.toolCallId);
      }
      expect(children.size).toBe(subagents.length);
    });
  },
);

describe('a Claude Code file read while it is written', () => {
  it.each([
    ['results run during an answer', 'spotter--tool_heavy.jsonl'],
    [
      'subagents inside it (1.0.x)',
      'claude-code-viewer--5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl',
    ],
  ])('reads as a prefix of the whole file at every line, %s included', (_, name) => {
    const path = join(corpus, 'claude-code', name);
    const text = readFileSync(path, 'utf8');
    const whole = new Map(
      readSourceFile('claude-code', path).sessions.map((s) => [s.header.id, s.events]),
    );
    const lines = text.split('\n');
    const dir = mkdtempSync(join(tmpdir(), 'corpus-prefix-'));
    try {
      for (let cut = 1; cut < lines.length; cut++) {
        const file = join(dir, name);
        writeFileSync(file, `${lines.slice(0, cut).join('\n')}\n`);
        const read = readSourceFile('claude-code', file, { partialTail: 'wait' });
        // Every session read so far (the conversation, each subagent's) is a prefix of its whole.
        for (const { header, events } of read.sessions) {
          const all = whole.get(header.id) ?? [];
          const same = events.every((event, i) => sameImportedEvent(event, all[i] as SessionEvent));
          expect({ cut, id: header.id, prefix: same && events.length <= all.length }).toEqual({
            cut,
            id: header.id,
            prefix: true,
          });
        }
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('a Codex 0.171 rollout', () => {
  it('gives every response its usage, from the token_usage_record written before its calls’ outputs', () => {
    const path = join(
      corpus,
      'codex',
      'codex-0.171-loopback--rollout-2026-12-06T17-22-38-01a24c61-0bdb-76d3-8417-2fc27dea8e6e.jsonl',
    );
    const events = readSourceFile('codex', path).sessions[0]?.events ?? [];
    const answers = events.filter((event) => event.type === 'assistant/message');
    expect(answers).toHaveLength(3);
    for (const answer of answers) {
      expect(answer.type === 'assistant/message' && answer.data.usage?.totalTokens).toBe(25);
    }
  });
});

describe('a Codex 0.125 rollout with an approval notice between a call and its output', () => {
  it('keeps each result right after its call on the surface and the notice after the results', () => {
    const path = join(
      corpus,
      'codex',
      'dazi-skill--rollout-2026-04-28T18-05-46-019dd38d-4dfb-77b0-af6a-af358709d507.jsonl',
    );
    const events = readSourceFile('codex', path).sessions[0]?.events ?? [];
    const surface = events.filter((event) => event.surfaceOp !== undefined);
    const at = surface.findIndex(
      (event) => (event.data as { origin?: { moved?: string } }).origin?.moved !== undefined,
    );
    const notice = surface[at] as SessionEvent;
    expect(notice.type).toBe('context/message');
    // Codex wrote it on line 129, while the exec_command of line 127 waited for its output (131).
    expect(notice.data).toMatchObject({
      origin: { line: 129, moved: 'after-tool-results' },
      source: { kind: 'context', name: 'developer' },
      content: [{ type: 'text', text: expect.stringMatching(/^Approved command prefix saved:/) }],
    });
    expect(surface.slice(at - 2, at).map((event) => event.type)).toEqual([
      'assistant/message',
      'tool/result',
    ]);
    expect(checkInvariants(events, { requireClosed: true })).toEqual([]);
  });
});
