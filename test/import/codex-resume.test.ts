/**
 * Export to Codex, resumed by the real Codex CLI: a rollout palimpsest writes is continued by
 * `codex exec resume` with the conversation it holds, and for each Codex file of the corpus the
 * export of its import gives Codex the same conversation as the file Codex wrote.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { exportCodex, readSourceFile } from '../../src/import/index.js';
import { conversation, resumeInCodex } from './codex-rig.js';
import { FILES } from './corpus-files.js';
import { loopSession } from './loop-session.js';

const corpus = join(import.meta.dirname, 'corpus', 'codex');

describe('a session palimpsest’s loop recorded, exported to Codex', () => {
  it('is resumed by Codex with its conversation, then the new prompt', async () => {
    const session = await loopSession();
    const file = exportCodex(session, { cwd: '/work' });
    const input = await resumeInCodex(file.text, file.path, file.sessionId, 'Next, please.');
    expect(conversation(input)).toEqual([
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Echo twice.' }] },
      {
        type: 'function_call',
        name: 'echo',
        arguments: '{"text":"a"}',
        call_id: expect.any(String),
      },
      {
        type: 'function_call',
        name: 'echo',
        arguments: '{"text":"b"}',
        call_id: expect.any(String),
      },
      { type: 'function_call_output', call_id: expect.any(String), output: 'echo: a' },
      { type: 'function_call_output', call_id: expect.any(String), output: 'echo: b' },
      {
        type: 'message',
        role: 'assistant',
        content: [{ type: 'output_text', text: 'Echoed a and b.' }],
      },
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'And once more.' }] },
      {
        type: 'function_call',
        name: 'echo',
        arguments: '{"text":"c"}',
        call_id: expect.any(String),
      },
      { type: 'function_call_output', call_id: expect.any(String), output: 'echo: c' },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Echoed c.' }] },
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Next, please.' }] },
    ]);
  });
});

describe.each(FILES.filter(([harness]) => harness === 'codex'))(
  'the %s file %s, imported and exported',
  (harness, name) => {
    it('gives Codex the conversation Codex resumes from the file it wrote', async () => {
      const path = join(corpus, name);
      const [imported] = readSourceFile(harness, path).sessions;
      if (imported === undefined) throw new Error(`${name} imported no session`);
      const file = exportCodex(imported);
      // Codex refuses to resume a session on another provider than its own (named in
      // session_meta and, from 0.17x, in its thread settings): the original is pointed at the
      // test's server, its one change.
      const original = readFileSync(path, 'utf8').replace(
        /"(model_provider|model_provider_id)":"[^"]*"/g,
        '"$1":"loopback"',
      );
      const [fromOriginal, fromExport] = await Promise.all([
        resumeInCodex(original, file.path, file.sessionId, 'Go on.'),
        resumeInCodex(file.text, file.path, file.sessionId, 'Go on.'),
      ]);
      // A search the provider ran leaves no result in the rollout; the import skips it (named).
      const searches = (item: { type: string }) => item.type !== 'web_search_call';
      expect(conversation(fromExport)).toEqual(conversation(fromOriginal).filter(searches));
    });
  },
);
