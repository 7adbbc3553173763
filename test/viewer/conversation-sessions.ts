/**
 * Sessions the conversation view's tests open besides the demo and the AI SDK session of
 * `sessions.ts`: a long one written here (hundreds of turns, an image, a cut last turn) that a
 * live writer then extends.
 */
import { Session, type SessionEvent } from '../../src/core/index.js';
import { openStore } from '../../src/store/index.js';
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
