/**
 * A worker killed while a subagent runs (a real process, SIGKILLed inside the child agent's
 * tool), on every store: the parent is repaired when it is opened, the child when the parent's
 * turn is resumed, and the link between them still resolves both ways.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Agent, subagentTool } from '../../src/agent/index.js';
import {
  checkInvariants,
  isEventOfType,
  planRepair,
  type SessionEvent,
} from '../../src/core/index.js';
import { inspectSession, openSession, openStore } from '../../src/store/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { untilOutput } from '../store/child-output.js';
import { everyBackend } from '../store/store-urls.js';

const stores = everyBackend('subagent-crash');
const CHILD = 'parent/subagents/call_build';

async function killWorkerInChild(url: string): Promise<void> {
  const worker = spawn(
    process.execPath,
    ['--import', 'tsx', join(import.meta.dirname, 'subagent-crash-child.ts'), url],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  await untilOutput(worker, 'CHILD_TOOL_STARTED');
  worker.kill('SIGKILL');
  await new Promise((resolve) => worker.once('exit', resolve));
}

function turnEnds(events: readonly SessionEvent[]): string[] {
  return events.flatMap((event) =>
    isEventOfType(event, 'turn/end') ? [event.data.reason.kind] : [],
  );
}

describe.each(stores)('a worker killed inside a subagent, on %s', (_, makeUrl) => {
  it('repairs the parent on open and the child on resume, and keeps the link both ways', async () => {
    const url = makeUrl();
    await killWorkerInChild(url);
    const store = await openStore(url);
    try {
      const stranded = await inspectSession(store, CHILD, { repair: false });
      expect(planRepair(stranded.events).length).toBeGreaterThan(0);

      const parent = await openSession(store, 'parent');
      expect(parent.openReport.repairedEvents).toBeGreaterThan(0);
      const closer = parent.events.findLast((event) => isEventOfType(event, 'tool/result'));
      expect(closer?.data).toMatchObject({
        error: { code: 'TOOL_OUTCOME_UNKNOWN' },
        child: { session: CHILD },
      });

      const model = scriptedModel([
        { text: 'The build was cut off; I checked and it did not deploy.' },
      ]);
      const builder = subagentTool({
        name: 'builder',
        description: 'Builds and deploys the site.',
        model: scriptedModel([]),
      });
      const result = await new Agent({ session: parent, model, tools: [builder] }).resume();
      await parent.close();
      expect(result.reason).toEqual({ kind: 'completed' });
      const prompt = JSON.stringify(model.calls[0]?.prompt);
      expect(prompt).toContain('TOOL_OUTCOME_UNKNOWN');
      expect(prompt).toContain(`in child session '${CHILD}'`);

      const child = await inspectSession(store, CHILD, { repair: false });
      expect(turnEnds(child.events)).toEqual(['interrupted']);
      expect(checkInvariants(child.events)).toEqual([]);
      const stored = await inspectSession(store, 'parent', { repair: false });
      expect(turnEnds(stored.events)).toEqual(['interrupted', 'completed']);
      expect(checkInvariants(stored.events)).toEqual([]);

      // The interrupted child can be taken up by hand, as any session.
      const taken = await openSession(store, CHILD);
      const resumed = await new Agent({
        session: taken,
        model: scriptedModel([{ text: 'Checked: the deploy never started.' }]),
      }).resume();
      await taken.close();
      expect(resumed).toMatchObject({ turn: 2, reason: { kind: 'completed' } });

      // Parent to child, and child back to the parent's very call.
      const call = stored.events.find((event) => isEventOfType(event, 'tool/call'));
      expect(call?.data).toMatchObject({ callId: 'call_build', child: { session: CHILD } });
      expect(child.header.metadata?.subagentOf).toEqual({
        session: 'parent',
        toolCallId: 'call_build',
      });
    } finally {
      await store.close();
    }
  }, 60_000);
});
