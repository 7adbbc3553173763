/**
 * Checkpoints: the chain's head over every event before it, appended as a `log/checkpoint`
 * event. A {@link ChainTracker} follows a live session so that each checkpoint hashes only the
 * events since the last one.
 */
import {
  type CheckpointData,
  InvalidArgumentError,
  isElidedChunk,
  type SessionEvent,
  type SessionHeader,
} from '../../core/index.js';
import {
  type Anchor,
  ChainSegment,
  type DigestText,
  genesisDigest,
  isDigestText,
  leafDigest,
} from './chain.js';
import { indexRedactions, originalLeaf } from './original-leaves.js';
import { type CheckpointSigner, signedMessage } from './signature.js';

/**
 * The chain of one session as far as it was fed: the segment since its last checkpoint.
 *
 * @example
 * ```ts
 * import { Session } from 'palimpsest';
 * import { ChainTracker } from 'palimpsest/store';
 *
 * const session = Session.create({ id: 'chained' });
 * session.append('turn/start', { turn: 1 });
 * const tracker = ChainTracker.resume(session.header, session.events);
 * const data = tracker.checkpoint();
 * session.append('log/checkpoint', data);
 * console.log(data.count); // 1
 * console.log(data.head.startsWith('sha256:')); // true
 * ```
 */
export class ChainTracker {
  readonly #session: string;
  readonly #signer: CheckpointSigner | undefined;
  #segment: ChainSegment;
  /** Events fed since the segment's last leaf, hashed when a head is asked for. */
  #pending: SessionEvent[] = [];
  #next: number;

  private constructor(
    session: string,
    segment: ChainSegment,
    signer: CheckpointSigner | undefined,
  ) {
    this.#session = session;
    this.#segment = segment;
    this.#next = segment.from;
    this.#signer = signer;
  }

  /**
   * The tracker of a session whose log is `events`: its segment starts at the last checkpoint
   * (or at the start), and every event since is hashed. Those events must have their bodies: an
   * elided chunk after the last checkpoint is an `InvalidArgumentError` (load the session in
   * full).
   */
  static resume(
    header: SessionHeader,
    events: readonly SessionEvent[],
    signer?: CheckpointSigner,
  ): ChainTracker {
    let last: SessionEvent<'log/checkpoint'> | undefined;
    for (let seq = events.length - 1; seq >= 0 && last === undefined; seq--) {
      const event = events[seq] as SessionEvent;
      if (event.type === 'log/checkpoint') last = event as SessionEvent<'log/checkpoint'>;
    }
    const head = last === undefined ? genesisDigest(header.id) : last.data.head;
    if (!isDigestText(head)) {
      throw new InvalidArgumentError(
        `expected the checkpoint at seq ${last?.seq} of session '${header.id}' to hold a sha256 head, found ${JSON.stringify(last?.data.head)}`,
      );
    }
    const tracker = new ChainTracker(header.id, new ChainSegment(head, last?.seq ?? 0), signer);
    const index = indexRedactions(events);
    for (let seq = tracker.#next; seq < events.length; seq++) {
      const event = events[seq] as SessionEvent;
      if (isElidedChunk(event)) {
        throw new InvalidArgumentError(
          `expected the events of session '${header.id}' after its last checkpoint in full, found the chunk at seq ${seq} loaded without its body`,
        );
      }
      const found = originalLeaf(event, index);
      tracker.#push(found.kind === 'mismatch' ? leafDigest(event) : found.leaf);
    }
    return tracker;
  }

  /** Seqs hashed so far: the count a checkpoint made now would cover. */
  get count(): number {
    return this.#next;
  }

  /** The head over every event fed so far, to keep outside the store. */
  anchor(): Anchor {
    return { session: this.#session, count: this.#next, head: this.#settled().head() };
  }

  /**
   * Takes the next event appended (its seq must be `count`). Its leaf is hashed when a head is
   * next asked for, so it must not change meanwhile (a session's events are frozen).
   */
  feed(event: SessionEvent): void {
    if (event.seq !== this.#next) {
      throw new InvalidArgumentError(
        `expected seq ${this.#next} next in the chain of session '${this.#session}', found seq ${event.seq}`,
      );
    }
    const head =
      event.type === 'log/checkpoint'
        ? (event as SessionEvent<'log/checkpoint'>).data.head
        : undefined;
    // A checkpoint starts the next segment, which holds its own leaf first; the events before it
    // are covered by its head and need no leaves any more.
    if (head !== undefined && isDigestText(head)) {
      this.#segment = new ChainSegment(head, event.seq);
      this.#pending = [];
    }
    // A turn's leaves hashed in one loop cost less than each in the middle of its append
    // (docs/benchmarks.md, "Hash chain and encryption benchmark").
    this.#pending.push(event);
    this.#next++;
  }

  /**
   * The data of a checkpoint over every event fed so far, to be appended as the next event
   * (its seq must equal `count`).
   */
  checkpoint(): CheckpointData {
    const segment = this.#settled();
    const head = segment.head();
    const signature =
      this.#signer === undefined
        ? undefined
        : {
            key: this.#signer.keyId,
            value: this.#signer
              .sign(signedMessage(this.#session, this.#next, head))
              .toString('base64url'),
          };
    return {
      session: this.#session,
      count: this.#next,
      head,
      from: segment.from,
      leaves: segment.shortLeaves(),
      ...(signature === undefined ? {} : { signature }),
    };
  }

  /** The segment with a leaf for every event fed. */
  #settled(): ChainSegment {
    for (const event of this.#pending) this.#segment.push(leafDigest(event));
    this.#pending = [];
    return this.#segment;
  }

  #push(leaf: DigestText): void {
    this.#segment.push(leaf);
    this.#next++;
  }
}
