/**
 * `verifyIntegrity`: the hash chain of a loaded session checked from its first event to its
 * last. Integrity (nothing altered, reordered, inserted or removed up to the last checkpoint or
 * anchor) and completeness (nothing cut from the end, which only an anchor kept outside the
 * store can show) are reported apart.
 */
import type { KeyObject } from 'node:crypto';
import {
  type CheckpointData,
  InvalidArgumentError,
  isElidedChunk,
  type SessionEvent,
  type SessionHeader,
} from '../../core/index.js';
import { type Anchor, ChainSegment, genesisDigest, isDigestText } from './chain.js';
import { type BreakKind, locateBreak, splitLeaves } from './locate.js';
import { indexRedactions, originalLeaf } from './original-leaves.js';
import { ed25519PublicKey, publicKeyId, signedMessage, verifySignature } from './signature.js';

/** Options of {@link verifyIntegrity}. */
export interface IntegrityOptions {
  /** Ed25519 public keys (KeyObjects or PEM) whose checkpoint signatures are checked. */
  readonly publicKeys?: readonly (KeyObject | string)[];
  /** Heads kept outside the store; each must match, and the log must reach it. */
  readonly anchors?: readonly Anchor[];
  /** Refuse a signed checkpoint whose key is not among `publicKeys` (default `false`). */
  readonly requireKnownKeys?: boolean;
}

/** What broke the chain first. */
export interface IntegrityBreak {
  /** The first seq that is not what the chain recorded. */
  readonly seq: number;
  readonly kind: BreakKind | 'checkpoint' | 'signature' | 'anchor' | 'redaction';
  readonly message: string;
}

/** Whether the end of the log is known to be all there. */
export interface Completeness {
  /**
   * `complete`: the log reaches every anchor given. `truncated`: an anchor covers events the log
   * no longer has. `unknown`: no anchor was given, so a log cut after a checkpoint cannot be told
   * from one that ended there.
   */
  readonly status: 'complete' | 'truncated' | 'unknown';
  /** Events covered by the furthest anchor that matched. */
  readonly anchoredThrough: number;
  /** Events past the last checkpoint and the last anchor: what nothing protects yet. */
  readonly unprotected: number;
  readonly message: string;
}

/** What {@link verifyIntegrity} found. */
export interface IntegrityReport {
  readonly session: string;
  readonly events: number;
  /** `undefined` when the chain holds; else its first break. */
  readonly broken: IntegrityBreak | undefined;
  readonly checkpoints: number;
  /** Events covered by the last checkpoint. */
  readonly covered: number;
  /** Signatures checked against a key given, and those signed by a key that was not given. */
  readonly signatures: { readonly verified: number; readonly unknownKey: number };
  /** Events read through a redaction's record (their content is erased). */
  readonly redacted: number;
  /** Seqs a redaction erased whose stored bytes were not yet rewritten (a crash): rerun it. */
  readonly pendingRedactions: readonly number[];
  readonly completeness: Completeness;
}

/**
 * Checks the hash chain of a session: every event's leaf (its erased form's recorded leaf for a
 * redacted one), every checkpoint's head, link and signature, and the anchors given. Needs every
 * event in full (a load without elided chunks).
 *
 * @example
 * ```ts
 * import { Session } from 'palimpsest';
 * import { ChainTracker, verifyIntegrity } from 'palimpsest/store';
 *
 * const session = Session.create({ id: 'audited' });
 * session.append('turn/start', { turn: 1 });
 * session.append('log/checkpoint', ChainTracker.resume(session.header, session.events).checkpoint());
 * const report = verifyIntegrity(session.header, session.events);
 * console.log(report.broken); // undefined
 * console.log(report.covered); // 1
 * ```
 */
export function verifyIntegrity(
  header: SessionHeader,
  events: readonly SessionEvent[],
  options: IntegrityOptions = {},
): IntegrityReport {
  const keys = new Map<string, KeyObject>();
  for (const key of options.publicKeys ?? []) {
    const publicKey = ed25519PublicKey(key);
    keys.set(publicKeyId(publicKey), publicKey);
  }
  const anchors = [...(options.anchors ?? [])].sort((a, b) => a.count - b.count);
  for (const anchor of anchors) checkAnchor(header, anchor);
  const index = indexRedactions(events);
  const first = events.find((event) => event.type === 'log/checkpoint') as
    | SessionEvent<'log/checkpoint'>
    | undefined;
  let segment = new ChainSegment(genesisDigest(first?.data.session ?? header.id), 0);
  let anchorAt = 0;
  let checkpoints = 0;
  let covered = 0;
  let redacted = 0;
  let broken: IntegrityBreak | undefined;
  const pending: number[] = [];
  const signatures = { verified: 0, unknownKey: 0 };
  let anchoredThrough = 0;

  for (let seq = 0; seq <= events.length && broken === undefined; seq++) {
    while (broken === undefined && anchors[anchorAt]?.count === seq) {
      const anchor = anchors[anchorAt++] as Anchor;
      if (segment.head() === anchor.head) anchoredThrough = anchor.count;
      else
        broken = {
          seq: segment.from,
          kind: 'anchor',
          message: `the events before seq ${seq} differ from those the anchor over ${seq} events recorded (${anchor.head}): something from seq ${segment.from} on was changed`,
        };
    }
    const event = events[seq];
    if (event === undefined || broken !== undefined) break;
    if (isElidedChunk(event)) {
      throw new InvalidArgumentError(
        `expected every event of session '${header.id}' in full to verify its chain, found the chunk at seq ${seq} loaded without its body`,
      );
    }
    if (event.type === 'log/checkpoint') {
      const checkpoint = event as SessionEvent<'log/checkpoint'>;
      broken = checkCheckpoint(header, checkpoint, segment, keys, signatures, options);
      if (broken !== undefined) break;
      checkpoints++;
      covered = checkpoint.data.count;
      segment = new ChainSegment(checkpoint.data.head, seq);
    }
    const found = originalLeaf(event, index);
    if (found.kind === 'mismatch') {
      broken = {
        seq,
        kind: 'redaction',
        message: `event ${seq} is neither what the redaction at seq ${found.redaction} erased nor what it left: it was altered after its redaction`,
      };
      break;
    }
    if (found.kind !== 'own') redacted++;
    if (found.kind === 'pending') pending.push(seq);
    segment.push(found.leaf);
  }
  return {
    session: header.id,
    events: events.length,
    broken,
    checkpoints,
    covered,
    signatures,
    redacted,
    pendingRedactions: pending,
    completeness: completenessOf(events.length, covered, anchors, anchoredThrough, broken),
  };
}

function checkAnchor(header: SessionHeader, anchor: Anchor): void {
  if (anchor.session !== header.id) {
    throw new InvalidArgumentError(
      `expected an anchor of session '${header.id}', found one of session '${anchor.session}'`,
    );
  }
  if (!Number.isSafeInteger(anchor.count) || anchor.count < 0 || !isDigestText(anchor.head)) {
    throw new InvalidArgumentError(
      `expected an anchor with a count and a sha256 head, found count ${anchor.count} and head ${JSON.stringify(anchor.head)}`,
    );
  }
}

/** The break a checkpoint shows, or `undefined` when its head, link and signature hold. */
function checkCheckpoint(
  header: SessionHeader,
  event: SessionEvent<'log/checkpoint'>,
  segment: ChainSegment,
  keys: ReadonlyMap<string, KeyObject>,
  signatures: { verified: number; unknownKey: number },
  options: IntegrityOptions,
): IntegrityBreak | undefined {
  const data: CheckpointData = event.data;
  const seq = event.seq;
  const head = segment.head();
  if (head !== data.head || data.count !== seq || data.from !== segment.from) {
    const recorded = splitLeaves(typeof data.leaves === 'string' ? data.leaves : '');
    const located = locateBreak(recorded, segment.shortLeafList());
    if (located !== undefined) {
      const at = segment.from + located.index;
      return { seq: at, kind: located.kind, message: describeBreak(located.kind, at, seq) };
    }
    return {
      seq,
      kind: 'checkpoint',
      message:
        data.from !== segment.from
          ? `the checkpoint at seq ${seq} links to seq ${data.from}, but the checkpoint before it is at seq ${segment.from}: a checkpoint was removed or moved`
          : `the checkpoint at seq ${seq} records ${data.count} events and head ${data.head}, but the ${seq} events before it hash to ${head}`,
    };
  }
  if (data.session !== header.id && seq > (header.seedLength ?? 0)) {
    return {
      seq,
      kind: 'checkpoint',
      message: `the checkpoint at seq ${seq} was made by session '${data.session}', and lies past the events this session copied from its parent`,
    };
  }
  const signature = data.signature;
  if (signature === undefined) return undefined;
  const key = keys.get(signature.key);
  if (key === undefined) {
    signatures.unknownKey++;
    return options.requireKnownKeys === true
      ? {
          seq,
          kind: 'signature',
          message: `the checkpoint at seq ${seq} is signed by key ${signature.key}, which is not among the keys given`,
        }
      : undefined;
  }
  if (!verifySignature(key, signedMessage(data.session, data.count, data.head), signature.value)) {
    return {
      seq,
      kind: 'signature',
      message: `the signature of the checkpoint at seq ${seq} does not verify with key ${signature.key}`,
    };
  }
  signatures.verified++;
  return undefined;
}

function describeBreak(kind: BreakKind, seq: number, checkpoint: number): string {
  const recorded = `what the checkpoint at seq ${checkpoint} recorded`;
  switch (kind) {
    case 'removed':
      return `an event was removed before seq ${seq}: the events from seq ${seq} on are ${recorded} shifted by one`;
    case 'inserted':
      return `an event was inserted at seq ${seq}: the events after it are ${recorded} shifted by one`;
    case 'reordered':
      return `events ${seq} and ${seq + 1} were swapped: each is what ${recorded} for the other`;
    default:
      return `event ${seq} was altered: it is not ${recorded}`;
  }
}

function completenessOf(
  length: number,
  covered: number,
  anchors: readonly Anchor[],
  anchoredThrough: number,
  broken: IntegrityBreak | undefined,
): Completeness {
  const furthest = anchors.at(-1);
  const unprotected = length - Math.max(covered, anchoredThrough);
  if (furthest !== undefined && furthest.count > length) {
    return {
      status: 'truncated',
      anchoredThrough,
      unprotected,
      message: `the log ends at ${length} events, but an anchor covers ${furthest.count}: events ${length} to ${furthest.count - 1} were cut from the end`,
    };
  }
  if (furthest === undefined) {
    return {
      status: 'unknown',
      anchoredThrough,
      unprotected,
      message: `no anchor given: a log cut after its last checkpoint cannot be told from one that ended there; ${unprotected} event(s) after the last checkpoint are not covered`,
    };
  }
  return {
    status: broken === undefined ? 'complete' : 'unknown',
    anchoredThrough,
    unprotected,
    message: `the log reaches the last anchor (${furthest.count} events); ${unprotected} event(s) after it are not covered yet`,
  };
}
