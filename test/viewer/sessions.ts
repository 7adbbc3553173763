/**
 * Sessions the viewer tests open: the demo (recorded by the built CLI into a temporary store),
 * one the AI SDK middleware recorded from the SDK's own Anthropic recordings, and a hostile one
 * whose every string tries to become markup, script or a deception.
 */
import { createAnthropic } from '@ai-sdk/anthropic';
import { stepCountIs, streamText, tool, wrapLanguageModel } from 'ai';
import { z } from 'zod';
import { sessionMiddleware } from '../../src/adapters/ai-sdk/index.js';
import { Session } from '../../src/core/index.js';
import { openStore } from '../../src/store/index.js';
import { sdkRecording } from '../agent/ai-sdk-recordings.js';
import { startWireServer } from '../agent/wire-server.js';
import { cli } from '../cli/helpers.js';
import { assistant, toolResult, user } from '../core/builders.js';

/** Records the demo into `storeUrl` and returns its session id. */
export function recordDemo(storeUrl: string, cwd: string): string {
  const run = cli(['demo', '--store', storeUrl], { cwd });
  const id = /session (demo-[0-9a-f]+)/.exec(run.stdout)?.[1];
  if (run.code !== 0 || id === undefined) {
    throw new Error(`the demo failed (exit ${run.code}):\n${run.stdout}\n${run.stderr}`);
  }
  return id;
}

/**
 * Records session `id` into `storeUrl`: a run of the AI SDK's `streamText` through the session
 * middleware, its Anthropic provider answered by a loopback replay of the SDK's own recorded
 * streams (a call of the `updateIssueList` tool without arguments, then an answer after
 * thinking). Two model calls, both reporting usage.
 */
export async function recordAiSdk(storeUrl: string, id: string): Promise<void> {
  const server = await startWireServer(
    [
      ...sdkRecording('anthropic/anthropic-tool-no-args.chunks.txt'),
      ...sdkRecording('anthropic/anthropic-clear-thinking.1.chunks.txt'),
    ].map((fixture) => ({ fixture })),
  );
  try {
    const session = Session.create({ id });
    const model = createAnthropic({ baseURL: server.baseURL, apiKey: 'test-key' })(
      'claude-sonnet-4-5',
    );
    const result = streamText({
      model: wrapLanguageModel({ model, middleware: sessionMiddleware(session) }),
      prompt: 'Refresh the issue list, then tell me what you think.',
      tools: {
        updateIssueList: tool({
          description: 'Refreshes the list of open issues.',
          inputSchema: z.object({}),
          execute: async () => 'The list holds 3 open issues.',
        }),
      },
      stopWhen: stepCountIs(3),
    });
    await result.consumeStream();
    if (server.problems.length > 0) throw new Error(server.problems.join('\n'));
    await saveSession(storeUrl, session);
  } finally {
    await server.close();
  }
}

/** Every string a page must show as text and never run. */
export const HOSTILE = {
  script: '<script>alert("script tag")</script>',
  onerror: '<img src=x onerror=alert("onerror")>',
  javascriptLink: '[click me](javascript:alert("javascript link"))',
  htmlLink: '<a href="javascript:alert(1)">html link</a>',
  svg: '<svg onload=alert("svg")><script>alert("svg script")</script></svg>',
  closeData: '</script><script>alert("closed the data element")</script>',
  image: '![x](https://example.invalid/x.png" onerror="alert(1))',
  bidi: 'invoice\u202eexe.txt\u202c and \u2066isolate\u2069',
  control: 'bell\u0007 escape\u001b[31m red\u001b[0m nul-ish\u0001 c1\u009b',
  https: '[a real link](https://example.com/docs)',
} as const;

/** The id of the hostile session: markup too. */
export const HOSTILE_ID = '<img src=x onerror=alert("id")>';

/** Writes the hostile session into `storeUrl`. */
export async function recordHostile(storeUrl: string): Promise<string> {
  const all = Object.values(HOSTILE).join('\n\n');
  const session = Session.create({ id: HOSTILE_ID });
  session.append('turn/start', { turn: 1 });
  session.append('user/message', user('u1', all), { surfaceOp: 'append' });
  session.append(
    'context/message',
    { ...user('c1', HOSTILE.svg), source: { kind: 'context' } },
    { surfaceOp: 'append' },
  );
  session.append('step/start', { turn: 1, step: 1 });
  // A header the trace shows: its model a script, its system prompt every trick.
  session.append('request/header', { provider: HOSTILE.bidi, model: HOSTILE.script, system: all });
  const chunk = session.append('assistant/chunk', {
    turn: 1,
    step: 1,
    chunk: { type: 'text-delta', id: 't', delta: HOSTILE.script },
  });
  const answer = session.append(
    'assistant/message',
    assistant(
      'a1',
      `# Heading ${HOSTILE.onerror}\n\n${all}\n\n\`\`\`html\n${HOSTILE.closeData}\n\`\`\``,
      [
        {
          id: 'call1',
          name: `tool${HOSTILE.script}`,
          arguments: JSON.stringify({ path: HOSTILE.onerror }),
        },
      ],
    ),
    { surfaceOp: 'append', sourceEventSeqs: [chunk.seq] },
  );
  const call = session.append('tool/call', {
    turn: 1,
    step: 1,
    callId: 'call1',
    name: 'read_file',
    arguments: '{}',
  });
  // One line of a megabyte, with markup at both ends and in the middle.
  const huge = `${HOSTILE.closeData}${'A'.repeat(500_000)}${HOSTILE.onerror}${'B'.repeat(500_000)}${HOSTILE.bidi}`;
  session.append('tool/result', toolResult('r1', 'call1', huge), {
    surfaceOp: 'append',
    sourceEventSeqs: [call.seq],
  });
  session.append('step/end', { turn: 1, step: 1 });
  session.append('turn/end', { turn: 1, reason: { kind: 'completed' } });
  void answer;
  await saveSession(storeUrl, session);
  return session.id;
}

/** Writes `session`, header and events, into the store at `storeUrl`. */
export async function saveSession(storeUrl: string, session: Session): Promise<void> {
  const store = await openStore(storeUrl);
  try {
    await store.create(session.header);
    await store.append(session.id, session.events, { expectedSeq: 0 });
  } finally {
    await store.close();
  }
}
