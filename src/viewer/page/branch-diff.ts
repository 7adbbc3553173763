/**
 * Two branches of a conversation side by side: the messages both logs hold from the start (the
 * prefix a fork copied, or that two forks share), then each branch's continuation, aligned so a
 * message both continuations hold (the same prompt sent on each branch) faces its twin.
 */
import { deriveEventMessage, formatMessage, type SessionEvent } from '../../core/index.js';

/** One message of a branch, as the diff shows it. */
export interface BranchMessage {
  readonly seq: number;
  /** `user`, `context`, `assistant` or `tool`. */
  readonly role: string;
  readonly text: string;
}

/** One line of the side-by-side view: a message on either side, or on one side only. */
export interface BranchRow {
  readonly left?: BranchMessage;
  readonly right?: BranchMessage;
  /** Both sides hold the same message (same role, same text). */
  readonly same: boolean;
}

/** Two branches compared. */
export interface BranchDiff {
  /** The messages both logs begin with. */
  readonly prefix: readonly BranchMessage[];
  readonly rows: readonly BranchRow[];
}

/** Past this many cells (left × right messages) the continuations are paired in order instead. */
const ALIGNMENT_CELLS = 250_000;

/** The messages of `events` (surface-eligible events with a message), in log order. */
export function branchMessages(events: readonly SessionEvent[]): BranchMessage[] {
  const out: BranchMessage[] = [];
  for (const event of events) {
    const message = deriveEventMessage(event);
    if (message === null) continue;
    const role = event.type === 'context/message' ? 'context' : message.role;
    out.push({ seq: event.seq, role, text: formatMessage(message) });
  }
  return out;
}

/**
 * How many message events `left` and `right` begin with alike (same type, same data, same
 * surface marker): a fork's copy of its parent's prefix is identical to it.
 */
export function sharedPrefix(
  left: readonly SessionEvent[],
  right: readonly SessionEvent[],
): number {
  const messages = (events: readonly SessionEvent[]) =>
    events.filter((event) => deriveEventMessage(event) !== null);
  const a = messages(left);
  const b = messages(right);
  let shared = 0;
  while (shared < a.length && shared < b.length) {
    const x = a[shared] as SessionEvent;
    const y = b[shared] as SessionEvent;
    if (
      x.type !== y.type ||
      JSON.stringify(x.data) !== JSON.stringify(y.data) ||
      JSON.stringify(x.surfaceOp) !== JSON.stringify(y.surfaceOp)
    )
      break;
    shared++;
  }
  return shared;
}

/** Compares two branches: their shared prefix, then their continuations aligned. */
export function diffBranches(
  left: readonly SessionEvent[],
  right: readonly SessionEvent[],
): BranchDiff {
  const shared = sharedPrefix(left, right);
  const a = branchMessages(left);
  const b = branchMessages(right);
  return { prefix: a.slice(0, shared), rows: alignBranches(a.slice(shared), b.slice(shared)) };
}

const alike = (x: BranchMessage, y: BranchMessage): boolean =>
  x.role === y.role && x.text === y.text;

/**
 * The continuations side by side. Messages both hold are matched by a longest common
 * subsequence; between matches, the unmatched messages of each side face each other in order.
 * Long continuations (past {@link ALIGNMENT_CELLS}) are paired in order without matching.
 */
export function alignBranches(
  left: readonly BranchMessage[],
  right: readonly BranchMessage[],
): BranchRow[] {
  if (left.length * right.length > ALIGNMENT_CELLS) return zip(left, right);
  // lengths[i][j]: the longest common subsequence of left[i..] and right[j..].
  const width = right.length + 1;
  const lengths = new Uint32Array((left.length + 1) * width);
  for (let i = left.length - 1; i >= 0; i--) {
    for (let j = right.length - 1; j >= 0; j--) {
      lengths[i * width + j] = alike(left[i] as BranchMessage, right[j] as BranchMessage)
        ? (lengths[(i + 1) * width + j + 1] as number) + 1
        : Math.max(lengths[(i + 1) * width + j] as number, lengths[i * width + j + 1] as number);
    }
  }
  const rows: BranchRow[] = [];
  let i = 0;
  let j = 0;
  let pendingLeft: BranchMessage[] = [];
  let pendingRight: BranchMessage[] = [];
  const settle = () => {
    rows.push(...zip(pendingLeft, pendingRight));
    pendingLeft = [];
    pendingRight = [];
  };
  while (i < left.length && j < right.length) {
    const x = left[i] as BranchMessage;
    const y = right[j] as BranchMessage;
    if (alike(x, y)) {
      settle();
      rows.push({ left: x, right: y, same: true });
      i++;
      j++;
    } else if ((lengths[(i + 1) * width + j] as number) >= (lengths[i * width + j + 1] as number)) {
      pendingLeft.push(x);
      i++;
    } else {
      pendingRight.push(y);
      j++;
    }
  }
  pendingLeft.push(...left.slice(i));
  pendingRight.push(...right.slice(j));
  settle();
  return rows;
}

function zip(left: readonly BranchMessage[], right: readonly BranchMessage[]): BranchRow[] {
  const rows: BranchRow[] = [];
  for (let k = 0; k < Math.max(left.length, right.length); k++) {
    const x = left[k];
    const y = right[k];
    rows.push({
      ...(x === undefined ? {} : { left: x }),
      ...(y === undefined ? {} : { right: y }),
      same: x !== undefined && y !== undefined && alike(x, y),
    });
  }
  return rows;
}
