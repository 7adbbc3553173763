/**
 * Export back, on the corpus: every file the harnesses wrote (test/import/corpus), imported,
 * written in its own harness's format again and imported again, gives the same conversation:
 * the same messages the model sees, block for block, and the same counts of inputs, answers,
 * calls and results.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkInvariants, type Message, Session, type SessionEvent } from '../../src/core/index.js';
import {
  exportClaudeCode,
  exportCodex,
  exportPi,
  type Harness,
  type ImportedSession,
  readSourceFile,
} from '../../src/import/index.js';
import { FILES } from './corpus-files.js';

const corpus = join(import.meta.dirname, 'corpus');
const dir = mkdtempSync(join(tmpdir(), 'corpus-round-trip-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const writers: Record<Harness, (session: ImportedSession) => string> = {
  'claude-code': (session) => exportClaudeCode(session).text,
  codex: (session) => exportCodex(session).text,
  pi: (session) => exportPi(session).text,
};

/** The messages the model sees, without the ids each import makes. */
function seen(session: ImportedSession): { role: string; content: unknown }[] {
  const live = Session.create({ header: session.header, seed: session.events });
  return live.deriveMessages().map((message: Message) => ({
    role: message.role,
    content: message.content,
  }));
}

function counts(events: readonly SessionEvent[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const event of events) {
    if (event.surfaceOp !== undefined) out[event.type] = (out[event.type] ?? 0) + 1;
  }
  return out;
}

describe.each(FILES)(
  'the %s file %s, exported to its harness and imported again',
  (harness, file) => {
    const [first] = readSourceFile(harness, join(corpus, harness, file)).sessions;
    if (first === undefined) throw new Error(`${file} imported no session`);
    const path = join(dir, `${harness}-${file.replaceAll('/', '--')}`);
    writeFileSync(path, writers[harness](first));
    const again = readSourceFile(harness, path).sessions;

    it('is the same conversation: the same messages the model sees, and the same counts', () => {
      expect(again).toHaveLength(1);
      const [second] = again as [ImportedSession];
      expect(seen(second)).toEqual(seen(first));
      expect(counts(second.events)).toEqual(counts(first.events));
      const findings = checkInvariants(second.events, { requireClosed: true });
      expect(findings.filter((finding) => finding.code !== 'OPEN_AT_END')).toEqual([]);
    });
  },
);
