/**
 * The corpus of session files the harnesses wrote (test/import/corpus, sources and licenses in
 * its README), with what each holds, counted by a script of its own (see the README).
 */
import { join } from 'node:path';
import type { Harness } from '../../src/import/index.js';

/** What the source holds: input messages (the user's and injected context), answers, calls, results. */
export interface Counts {
  readonly inputs: number;
  /** Model responses; omitted for Codex, whose rollouts count output items, not responses. */
  readonly answers?: number;
  readonly calls: number;
  readonly results: number;
}

/**
 * What a file holds: its conversation's counts, and those of each subagent conversation it keeps
 * inside it (Claude Code 1.0.x wrote a `Task` subagent's entries into the main transcript, marked
 * `isSidechain`), in file order.
 */
export interface Expected extends Counts {
  readonly sidechains?: readonly Counts[];
}

export const FILES: readonly (readonly [Harness, string, Expected])[] = [
  [
    'claude-code',
    'agent-history--session-01.jsonl',
    { inputs: 1, answers: 1, calls: 0, results: 0 },
  ],
  [
    'claude-code',
    'claude-code-2.1.337-loopback/5e0f508a-b09c-49ef-99a6-18441585aaf4.jsonl',
    { inputs: 3, answers: 3, calls: 2, results: 2 },
  ],
  // 19 results in the file; one answers a call whose entry the file does not hold (skipped).
  [
    'claude-code',
    'claude-code-viewer--1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl',
    { inputs: 2, answers: 7, calls: 12, results: 12 },
  ],
  // 1.0.108: a subagent's conversation inside the main transcript; of two parallel Task calls one
  // failed (no prompt) and ran no subagent.
  [
    'claude-code',
    'claude-code-viewer--5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl',
    {
      inputs: 2,
      answers: 10,
      calls: 13,
      results: 13,
      sidechains: [
        { inputs: 1, answers: 3, calls: 2, results: 2 },
        { inputs: 1, answers: 7, calls: 6, results: 6 },
      ],
    },
  ],
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
  [
    'claude-code',
    'sniffly--ba79134d-b6e9-4867-af0c-6941038c9e4b.jsonl',
    { inputs: 6, answers: 24, calls: 30, results: 30 },
  ],
  [
    'claude-code',
    'sniffly--fed8ce56-bc79-401f-a83e-af084253362f.jsonl',
    { inputs: 3, answers: 4, calls: 7, results: 7 },
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
    'codex-0.171-loopback--rollout-2026-12-06T17-22-38-01a24c61-0bdb-76d3-8417-2fc27dea8e6e.jsonl',
    { inputs: 4, calls: 2, results: 2 },
  ],
  [
    'codex',
    'codex-0.171-loopback--rollout-2026-12-06T17-30-24-01a24c68-28e6-7b10-a8c2-79dc818c2508.jsonl',
    { inputs: 4, calls: 3, results: 3 },
  ],
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
  // An approval notice (a developer message) between a call and its output.
  [
    'codex',
    'dazi-skill--rollout-2026-04-28T18-05-46-019dd38d-4dfb-77b0-af6a-af358709d507.jsonl',
    { inputs: 17, calls: 31, results: 31 },
  ],
  ['codex', 'guideai--real-session-large.jsonl', { inputs: 2, calls: 18, results: 18 }],
  ['pi', 'agent-history--session-01.jsonl', { inputs: 1, answers: 1, calls: 0, results: 0 }],
  ['pi', 'agent-sessions--small.jsonl', { inputs: 2, answers: 2, calls: 0, results: 0 }],
  ['pi', 'pi-mono--large-session.jsonl', { inputs: 88, answers: 453, calls: 391, results: 373 }],
  // One line holds two entries run together; pi skips it when it reads the file, and so does
  // the import (counted): the counts are of the lines that parse.
  ['pi', 'pi-mono--session.jsonl', { inputs: 44, answers: 219, calls: 189, results: 189 }],
];

/**
 * A Claude Code 1.0.x transcript with two subagents kept inside it, one `Task` call failed: the
 * file and the id `palimpsest import` gives its main session. The viewer and CLI tests use it.
 */
export const CLAUDE_CODE_SUBAGENTS = {
  path: join(
    import.meta.dirname,
    'corpus',
    'claude-code',
    'claude-code-viewer--5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl',
  ),
  id: 'claude-code-claude-code-viewer--5c0375b4-57a5-4f26-b12d-d022ee4e51b7',
} as const;
