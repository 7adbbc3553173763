/**
 * The Claude Agent SDK session store over PostgreSQL: the same contract as the other backends
 * (transcript-store.test.ts), on a real Claude Code run, against a real server.
 */
import type { SessionKey } from '@anthropic-ai/claude-agent-sdk';
import { afterAll, beforeAll, describe } from 'vitest';
import { openPostgresStore } from '../../../src/store/postgres/index.js';
import { describePg, dropSchema, freshSchema, pgUrl } from '../../postgres/helpers.js';
import {
  type ClaudeCodeRun,
  describeClaudeCode,
  RecordingStore,
  runClaudeCode,
} from './claude-code-rig.js';
import { replayContract } from './replay-contract.js';

describePg('ClaudeTranscriptStore over PostgreSQL', () => {
  describeClaudeCode('on a real Claude Code run', () => {
    const reference = new RecordingStore();
    const schema = freshSchema('claude');
    let run: ClaudeCodeRun;
    beforeAll(async () => {
      run = await runClaudeCode(
        ['PARALLEL: read a.txt and b.txt', 'SUBAGENT: say hello'],
        reference,
      );
      run.close();
    }, 120_000);
    afterAll(() => dropSchema(schema));

    describe('replayed into a postgres store', () => {
      replayContract(
        () => {
          const keys = [
            ...new Map(reference.batches.map(({ key }) => [JSON.stringify(key), key])).values(),
          ];
          return {
            reference,
            run,
            mainKey: keys[0] as SessionKey,
            agentKey: keys[1] as SessionKey,
          };
        },
        () => openPostgresStore({ connectionString: pgUrl, schema, maxConnections: 4 }),
      );
    });
  });
});
