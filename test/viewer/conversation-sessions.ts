/**
 * Sessions the conversation view's tests open besides the demo: one recorded by the AI SDK
 * middleware from the SDK's own Anthropic recordings (tool use, then thinking), and a long one
 * written here (hundreds of turns, an image, a cut last turn) that a live writer then extends.
 */
import { createAnthropic } from '@ai-sdk/anthropic';
import { stepCountIs, streamText, tool, wrapLanguageModel } from 'ai';
import { z } from 'zod';
import { sessionMiddleware } from '../../src/adapters/ai-sdk/index.js';
import { Session, type SessionEvent } from '../../src/core/index.js';
import { openStore } from '../../src/store/index.js';
import { sdkRecording } from '../agent/ai-sdk-recordings.js';
import { startWireServer } from '../agent/wire-server.js';
import { recordToolTurn, tickingClock } from '../core/builders.js';
import { saveSession } from './sessions.js';

/** The id of the AI SDK session. */
export const AI_SDK_ID = 'ai-sdk-anthropic';
/** The id of the long session. */
export const LONG_ID = 'long';
/** Turns of the long session before its cut last turn. */
export const LONG_TURNS = 150;

/** A 1×1 PNG, the image the long session's last prompt carries. */
const PIXEL =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

/** Records a run of `streamText` through the middleware, the provider a loopback replay. */
export async function recordAiSdk(storeUrl: string): Promise<void> {
  const server = await startWireServer(
    [
      ...sdkRecording('anthropic/anthropic-tool-no-args.chunks.txt'),
      ...sdkRecording('anthropic/anthropic-clear-thinking.1.chunks.txt'),
    ].map((fixture) => ({ fixture })),
  );
  try {
    const session = Session.create({ id: AI_SDK_ID });
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

/** Writes the long session: {@link LONG_TURNS} tool turns, then a turn with an image, aborted. */
export async function recordLong(storeUrl: string): Promise<void> {
  const session = Session.create({ id: LONG_ID, clock: tickingClock(Date.UTC(2026, 11, 1)) });
  for (let turn = 1; turn <= LONG_TURNS; turn++) recordToolTurn(session, turn, `question ${turn}`);
  const turn = LONG_TURNS + 1;
  session.append('turn/start', { turn });
  session.append(
    'user/message',
    {
      id: 'u-image',
      role: 'user',
      content: [
        { type: 'text', text: 'What is in this picture?' },
        { type: 'image', mediaType: 'image/png', data: PIXEL },
      ],
      source: { kind: 'user' },
    },
    { surfaceOp: 'append' },
  );
  session.append('turn/end', { turn, reason: { kind: 'aborted', cause: 'the user pressed Esc' } });
  await saveSession(storeUrl, session);
}

/** Appends one more complete tool turn to the long session, as a live writer would. */
export async function appendLongTurn(
  storeUrl: string,
  turn: number,
  prompt: string,
): Promise<void> {
  const store = await openStore(storeUrl);
  try {
    const { header, events } = await store.load(LONG_ID);
    const session = Session.create({ header, seed: events as SessionEvent[] });
    const from = session.seq;
    recordToolTurn(session, turn, prompt);
    await store.append(LONG_ID, session.events.slice(from), { expectedSeq: from });
  } finally {
    await store.close();
  }
}
