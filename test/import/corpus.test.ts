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
