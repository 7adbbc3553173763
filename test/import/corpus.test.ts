/**
 * The importers on session files the harnesses wrote themselves (test/import/corpus, with their
 * sources and licenses in its README): each file imports into the one conversation its harness
 * shows, passes the log linter (a source that ends inside a turn may leave it open), and carries
 * over the messages, tool calls and tool results the source holds, counted independently of the
 * importer (the counts and how they were made are in the corpus README).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkInvariants, type SessionEvent } from '../../src/core/index.js';
import { sameImportedEvent } from '../../src/import/builder.js';
import { type Harness, readSourceFile } from '../../src/import/index.js';

const corpus = join(import.meta.dirname, 'corpus');

/** What the source holds: input messages (the user's and injected context), answers, calls, results. */
interface Counts {
  readonly inputs: number;
  /** Model responses; omitted for Codex, whose rollouts count output items, not responses. */
  readonly answers?: number;
  readonly calls: number;
  readonly results: number;
}

const FILES: readonly (readonly [Harness, string, Counts])[] = [
  [
    'claude-code',
    'agent-history--session-01.jsonl',
    { inputs: 1, answers: 1, calls: 0, results: 0 },
  ],
  // 19 results in the file; one answers a call whose entry the file does not hold (skipped).
  ['claude-code', 'codemie--5c187f31.jsonl', { inputs: 3, answers: 14, calls: 22, results: 18 }],
  [
    'claude-code',
    'codemie--tmp-private/4c2ddfdc-b619-4525-8d03-1950fb1b0257.jsonl',
    { inputs: 3, answers: 7, calls: 6, results: 6 },
  ],
  [
    'claude-code',
    'codemie--tmp-private/agent-36541525.jsonl',
    { inputs: 1, answers: 1, calls: 0, results: 0 },
  ],
  [
    'claude-code',
    'codemie--tmp-private/agent-50243ee8.jsonl',
    { inputs: 1, answers: 1, calls: 0, results: 0 },
  ],
  ['claude-code', 'codemie--turn-2.jsonl', { inputs: 1, answers: 11, calls: 14, results: 14 }],
  [
    'claude-code',
    'codemie--turn-2/subagents/agent-a485154.jsonl',
    { inputs: 1, answers: 6, calls: 20, results: 20 },
  ],
  ['claude-code', 'spotter--short.jsonl', { inputs: 2, answers: 1, calls: 2, results: 2 }],
  ['claude-code', 'spotter--tool_heavy.jsonl', { inputs: 7, answers: 4, calls: 6, results: 6 }],
  ['claude-code', 'spotter--subagent.jsonl', { inputs: 4, answers: 12, calls: 16, results: 16 }],
  [
    'claude-code',
    'spotter--8463c716-a2ea-4c14-9efa-87158ebd9f20/subagents/agent-a7be2f0.jsonl',
    { inputs: 1, answers: 13, calls: 19, results: 19 },
  ],
  [
    'claude-code',
    'spotter--8463c716-a2ea-4c14-9efa-87158ebd9f20/subagents/agent-acompact-f46190.jsonl',
    { inputs: 6, answers: 1, calls: 0, results: 0 },
  ],
  ['codex', 'agent-history--session-01.jsonl', { inputs: 3, calls: 0, results: 0 }],
  [
    'codex',
    'codemie--rollout-2026-01-02T18-39-45-019b7f94-51b4-7593-922e-ba12b5b73b52.jsonl',
    { inputs: 3, calls: 3, results: 3 },
  ],
  // 105 calls in the file: 3 are web searches the provider ran, with no output item.
  [
    'codex',
    'codemie--rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl',
    { inputs: 4, calls: 102, results: 102 },
  ],
  [
    'codex',
    'codex-session-view--rollout-2025-11-17T15-30-28-019a93b9-f380-7600-98ff-940e6b99603c.jsonl',
    { inputs: 2, calls: 39, results: 39 },
  ],
  ['codex', 'guideai--real-session-large.jsonl', { inputs: 2, calls: 18, results: 18 }],
  ['pi', 'agent-history--session-01.jsonl', { inputs: 1, answers: 1, calls: 0, results: 0 }],
  ['pi', 'agent-sessions--small.jsonl', { inputs: 2, answers: 2, calls: 0, results: 0 }],
  ['pi', 'pi-mono--large-session.jsonl', { inputs: 88, answers: 453, calls: 391, results: 373 }],
  // One line holds two entries run together; pi skips it when it reads the file, and so does
  // the import (counted): the counts are of the lines that parse.
  ['pi', 'pi-mono--session.jsonl', { inputs: 44, answers: 219, calls: 189, results: 189 }],
];

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

  it('imports as the one conversation its harness shows, and passes the linter', () => {
    expect(imported.sessions).toHaveLength(1);
    const events = imported.sessions[0]?.events ?? [];
    // A source that ends inside a turn (the harness stopped mid-turn) leaves it open.
    const findings = checkInvariants(events, { requireClosed: true });
    expect(findings.filter((finding) => finding.code !== 'OPEN_AT_END')).toEqual([]);
  });

  it('carries over the messages, calls and results the source holds', () => {
    const counts = counted(imported.sessions[0]?.events ?? []);
    const { answers, ...rest } = counts;
    expect(expected.answers === undefined ? rest : counts).toEqual(expected);
  });
});

describe('a Claude Code file read while it is written', () => {
  it('reads as a prefix of the whole file at every line, results run during an answer included', () => {
    const path = join(corpus, 'claude-code', 'spotter--tool_heavy.jsonl');
    const text = readFileSync(path, 'utf8');
    const whole = readSourceFile('claude-code', path).sessions[0]?.events ?? [];
    const lines = text.split('\n');
    const dir = mkdtempSync(join(tmpdir(), 'corpus-prefix-'));
    try {
      for (let cut = 1; cut < lines.length; cut++) {
        const file = join(dir, 'spotter--tool_heavy.jsonl');
        writeFileSync(file, `${lines.slice(0, cut).join('\n')}\n`);
        const read = readSourceFile('claude-code', file, { partialTail: 'wait' });
        const events = read.sessions[0]?.events ?? [];
        const same = events.every((event, i) => sameImportedEvent(event, whole[i] as SessionEvent));
        expect({ cut, prefix: same && events.length <= whole.length }).toEqual({
          cut,
          prefix: true,
        });
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
