/**
 * The derived messages at one moment, as a view that costs O(1) to take: a frozen array must be
 * a fresh copy after every change, and V8 allocates each array of 16,384 or more elements as a
 * large object of its own (an mmap and a munmap each), which makes that copy far dearer than its
 * size suggests.
 */
import type { Message } from './messages.js';

/**
 * The messages the model sees at one moment, read without a copy: {@link Session.deriveMessageList}
 * returns one in O(new messages) at any size. It never changes, whatever the session appends or
 * replaces afterwards. It is not an array: read it by `length` and `at`, iterate it, or take a
 * frozen array of a range with `slice` (O(range)).
 *
 * @example
 * ```ts
 * import { Session } from 'palimpsest';
 *
 * const session = Session.create({ id: 'message-list-example' });
 * const user = (id: string, text: string) =>
 *   ({ id, role: 'user', content: [{ type: 'text', text }], source: { kind: 'user' } }) as const;
 * session.append('user/message', user('u1', 'Hello.'), { surfaceOp: 'append' });
 * const before = session.deriveMessageList();
 * session.append('user/message', user('u2', 'Still there?'), { surfaceOp: 'append' });
 * const after = session.deriveMessageList();
 * console.log(before.length); // 1
 * console.log(after.at(-1)?.id); // 'u2'
 * console.log([...after].map((message) => message.id).join(',')); // 'u1,u2'
 * ```
 */
export interface MessageList extends Iterable<Message> {
  /** The number of messages. */
  readonly length: number;
  /** The message at `index` (negative counts from the end), or `undefined`. */
  at(index: number): Message | undefined;
  /** The messages from `start` to `end` (as `Array.prototype.slice` reads them) in a frozen array. */
  slice(start?: number, end?: number): readonly Message[];
}

/**
 * The first `length` messages of a store that only ever grows at its end: the session pushes to
 * the store until a replace rewrites the surface, and then starts a new store, so the range a
 * list reads never changes.
 */
class StoredMessageList implements MessageList {
  readonly #store: readonly Message[];
  readonly length: number;

  constructor(store: readonly Message[], length: number) {
    this.#store = store;
    this.length = length;
    Object.freeze(this);
  }

  /** The store of a list of this class: it only grows, so it names every list that reads it. */
  static storeOf(list: MessageList): object | undefined {
    return #store in list ? list.#store : undefined;
  }

  at(index: number): Message | undefined {
    const relative = Math.trunc(index) || 0;
    const position = relative < 0 ? relative + this.length : relative;
    return position >= 0 && position < this.length ? this.#store[position] : undefined;
  }

  slice(start?: number, end?: number): readonly Message[] {
    const from = clampPosition(start, 0, this.length);
    const to = clampPosition(end, this.length, this.length);
    return Object.freeze(this.#store.slice(from, Math.max(from, to)));
  }

  *[Symbol.iterator](): Iterator<Message> {
    const store = this.#store;
    for (let index = 0; index < this.length; index++) yield store[index] as Message;
  }
}

/** A slice bound as `Array.prototype.slice` reads it, within `0..length`. */
function clampPosition(value: number | undefined, fallback: number, length: number): number {
  if (value === undefined) return fallback;
  const position = Math.trunc(value) || 0;
  return position < 0 ? Math.max(0, length + position) : Math.min(position, length);
}

/** The list of the first `length` messages of `store`, which must never change below `length`. */
export function messageListOf(store: readonly Message[], length: number): MessageList {
  return new StoredMessageList(store, length);
}

/**
 * What a session's list reads, as an identity (a weak key): two lists of the same lineage hold
 * the same message at every position below the shorter one's length, so a reader that kept
 * what it built from one list extends it for a longer one of its lineage. Undefined for a
 * list the session did not make.
 */
export function messageListLineage(list: MessageList): object | undefined {
  return StoredMessageList.storeOf(list);
}
