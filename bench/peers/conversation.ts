/**
 * The one conversation every system in the side-by-side benchmark records. Per turn a user
 * message, 200 stream chunks, an assistant message with a tool call, the call and its result:
 * palimpsest appends all 204 events; a peer, which persists no stream, stores the three
 * messages (user, assistant with the call, tool result) with the same texts.
 */
import { type TurnAppend, TurnSource } from '../store-workload.js';

/** The three messages a peer stores for a turn, with the texts palimpsest records. */
export interface PeerTurn {
  readonly turn: number;
  readonly user: string;
  readonly assistant: string;
  readonly callId: string;
  readonly toolName: string;
  /** The tool call's arguments as JSON text. */
  readonly arguments: string;
  readonly result: string;
}

function textOf(content: readonly { readonly type: string }[]): string {
  const first = content[0];
  if (first === undefined || first.type !== 'text' || !('text' in first)) {
    throw new Error('the workload message starts with a text part');
  }
  return String(first.text);
}

/** The peer's view of one turn of palimpsest appends. */
export function peerTurn(turn: number, appends: readonly TurnAppend[]): PeerTurn {
  let user = '';
  let assistant = '';
  let callId = '';
  let toolName = '';
  let args = '';
  let result = '';
  for (const append of appends) {
    if (append.type === 'user/message') user = textOf(append.data.content);
    else if (append.type === 'assistant/message') assistant = textOf(append.data.message.content);
    else if (append.type === 'tool/call') {
      callId = append.data.callId;
      toolName = append.data.name;
      args = append.data.arguments;
    } else if (append.type === 'tool/result') {
      const part = append.data.message.content[0];
      if (part?.type === 'tool-result') result = textOf(part.content);
    }
  }
  return { turn, user, assistant, callId, toolName, arguments: args, result };
}

/** Consecutive turns of the conversation: palimpsest's appends and the peer's messages. */
export class Conversation {
  private readonly source = new TurnSource();
  private next = 0;

  /** The appends of the next turn, whose first event gets seq `firstSeq`. */
  appends(firstSeq: number): TurnAppend[] {
    return this.source.turn(this.next++, firstSeq);
  }

  /** The messages of the next turn, for a peer. */
  peer(): PeerTurn {
    const turn = this.next;
    return peerTurn(turn, this.appends(0));
  }
}

/**
 * The peer's turns, each built by {@link prepare} in the untimed part before the turn, so a
 * system's timed append does not include making the conversation's texts.
 */
export class PreparedPeerTurns {
  private readonly conversation = new Conversation();
  private prepared: PeerTurn | undefined;

  /** Builds the next turn's messages. */
  prepare(): void {
    this.prepared = this.conversation.peer();
  }

  /** The turn {@link prepare} built; each is taken once. */
  take(): PeerTurn {
    const turn = this.prepared;
    if (turn === undefined) throw new Error('appendTurn without prepareTurn');
    this.prepared = undefined;
    return turn;
  }
}
