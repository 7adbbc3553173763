/**
 * The surface: the ordered seqs of the events whose messages the model sees. One incremental
 * manager per session maintains it from the `surfaceOp` markers of the log; `foldSurface` gives
 * the same answer for any log from scratch.
 */
import { admitStored, isAdmittedLog } from './admission.js';
import { ElidedChunkTracker, isSharedElidedMarker } from './elided.js';
import { ElidedLog } from './elided-log.js';
import { type SessionValidationDetails, SessionValidationError } from './errors.js';
import type { SessionEvent } from './events.js';
import { firstDoubtfulDelta, type HeldDeltaRun, heldDelta } from './held-deltas.js';
import { DEFAULT_JSON_LIMITS, type JsonLimits, type JsonValue, jsonEqual } from './json.js';
import { asObject } from './messages.js';

/** Read-only view of a session's surface. */
export interface SessionSurface {
  /** The surface in order, as a frozen snapshot (the same array until the surface changes). */
  readonly seqs: readonly number[];
  /** Number of entries on the surface. */
  readonly size: number;
  /** Counts committed replaces: equal generations mean the surface only grew at its tail. */
  readonly replaceGeneration: number;
  /** True when `seq` is currently on the surface (O(1)). */
  has(seq: number): boolean;
  /** Position of `seq` on the surface, or -1. */
  indexOf(seq: number): number;
  /** The seq at surface position `index` (negative counts from the end), or `undefined`. */
  at(index: number): number | undefined;
}

/** One committed replace, as reported by {@link foldSurface}. */
export interface SurfaceReplacement {
  /** The replacing event. */
  readonly seq: number;
  readonly start: number;
  readonly end: number;
  /** The seqs the replace removed from the surface, in surface order. */
  readonly shadowedSeqs: readonly number[];
}

/** The result of {@link foldSurface}. */
export interface SurfaceFold {
  readonly seqs: readonly number[];
  readonly replaceGeneration: number;
  readonly replacements: readonly SurfaceReplacement[];
}

/** What one event does to the surface, decided before the event is committed. */
type SurfacePlan =
  | { readonly kind: 'none' }
  | { readonly kind: 'append' }
  | { readonly kind: 'replace'; readonly from: number; readonly shadowed: readonly number[] };

const NO_EFFECT: SurfacePlan = Object.freeze({ kind: 'none' });
const APPEND: SurfacePlan = Object.freeze({ kind: 'append' });

/**
 * The incremental surface of one log. It reads the log it was given by reference and folds only
 * the events committed since its last synchronization: O(1) when nothing is new, O(new events)
 * otherwise, O(surface) for a replace (positional lookup and splice).
 *
 * Validation is split from application: {@link SurfaceManager.validateNext} plans a candidate
 * without changing anything; once the caller commits that exact event object to the log, the
 * stored plan is applied on the next read.
 */
export class SurfaceManager implements SessionSurface {
  private readonly order: number[] = [];
  private membership = new Uint8Array(64);
  private generation = 0;
  private processed = 0;
  private pending:
    | { readonly event: SessionEvent; readonly index: number; readonly plan: SurfacePlan }
    | undefined;
  private frozenSeqs: readonly number[] | undefined;
  private readonly replacements: SurfaceReplacement[] | undefined;
  /** Where the committed events end while a seed fills a log sized ahead (see `seedUpTo`). */
  private seededUpTo: number | undefined;

  /**
   * @param log the committed events, read by reference (the owner appends to it); a hole is an
   *   elided chunk (see `elided-log.ts`), which never touches the surface.
   * @param options.recordReplacements keep a history of replaces (for `foldSurface`).
   */
  constructor(
    private readonly log: readonly (SessionEvent | undefined)[],
    options: { readonly recordReplacements?: boolean } = {},
  ) {
    this.replacements = options.recordReplacements === true ? [] : undefined;
  }

  get seqs(): readonly number[] {
    this.sync();
    if (this.frozenSeqs === undefined) this.frozenSeqs = Object.freeze(this.order.slice());
    return this.frozenSeqs;
  }

  get size(): number {
    this.sync();
    return this.order.length;
  }

  get replaceGeneration(): number {
    this.sync();
    return this.generation;
  }

  has(seq: number): boolean {
    this.sync();
    return (
      Number.isInteger(seq) &&
      seq >= 0 &&
      seq < this.membership.length &&
      this.membership[seq] === 1
    );
  }

  indexOf(seq: number): number {
    return this.has(seq) ? this.order.indexOf(seq) : -1;
  }

  at(index: number): number | undefined {
    this.sync();
    return this.order.at(index);
  }

  /** The surface as the manager's own array; callers must not keep or mutate it. */
  borrowOrder(): readonly number[] {
    this.sync();
    return this.order;
  }

  /**
   * Notes that the log's owner lengthens it to `length` with holes (a seed's elided chunks):
   * folds what is pending, then passes over them without reading each, as holes never touch the
   * surface.
   */
  skipHoles(length: number): void {
    this.sync();
    if (length > this.processed) this.processed = length;
  }

  /** Replaces committed so far (only when constructed with `recordReplacements`). */
  committedReplacements(): readonly SurfaceReplacement[] {
    this.sync();
    return this.replacements ?? [];
  }

  /**
   * Validates `candidate` as the next event of the log without changing the surface. Throws
   * `SessionValidationError` when the candidate breaks a surface rule.
   */
  validateNext(candidate: SessionEvent, details: SessionValidationDetails = {}): void {
    // An event without a surfaceOp cannot break a surface rule and changes nothing.
    if (candidate.surfaceOp === undefined) return;
    this.sync();
    const plan = this.plan(candidate, details);
    this.pending = { event: candidate, index: this.committed(), plan };
  }

  /**
   * Notes that a seed sized the log ahead (one allocation for a million slots, where growing it
   * reallocates again and again) and that its committed events end at `length`, until
   * {@link SurfaceManager.endSeed}: the slots past it are not events yet.
   */
  seedUpTo(length: number): void {
    this.seededUpTo = length;
  }

  /** Ends {@link SurfaceManager.seedUpTo}: the log's length says again where its events end. */
  endSeed(): void {
    this.seededUpTo = undefined;
  }

  private committed(): number {
    return this.seededUpTo ?? this.log.length;
  }

  /** {@link validateNext} for the seed event at `index`, without a details object per event. */
  validateSeeded(candidate: SessionEvent, index: number): void {
    if (candidate.surfaceOp !== undefined) this.validateNext(candidate, { index });
  }

  /** Folds events committed since the last synchronization. */
  private sync(): void {
    const log = this.log;
    const committed = this.committed();
    while (this.processed < committed) {
      const event = log[this.processed];
      if (event?.surfaceOp === undefined) {
        // Most of a log (chunks, brackets, tool calls) never touches the surface.
        this.processed++;
        continue;
      }
      const pending = this.pending;
      let plan: SurfacePlan;
      if (pending !== undefined && pending.event === event && pending.index === this.processed) {
        plan = pending.plan;
      } else {
        plan = this.plan(event, { index: this.processed });
      }
      this.pending = undefined;
      this.apply(event, plan);
      this.processed++;
    }
  }

  private plan(event: SessionEvent, details: SessionValidationDetails): SurfacePlan {
    const op = event.surfaceOp;
    if (op === undefined) return NO_EFFECT;
    if (op === 'append') return APPEND;
    const where = { ...details, seq: event.seq, eventType: event.type };
    const { start, end } = op;
    if (!this.isMember(start) || !this.isMember(end)) {
      const missing = this.isMember(start) ? `end seq ${end}` : `start seq ${start}`;
      throw new SessionValidationError(
        'REPLACE_ENDPOINT_NOT_ON_SURFACE',
        `replace ${missing} is not on the surface (${this.order.length} entries)`,
        where,
      );
    }
    const from = this.order.indexOf(start);
    const to = this.order.indexOf(end, from);
    if (to === -1) {
      throw new SessionValidationError(
        'REPLACE_RANGE_REVERSED',
        `replace start seq ${start} (surface position ${from}) comes after end seq ${end} (position ${this.order.indexOf(end)})`,
        where,
      );
    }
    const shadowed = this.order.slice(from, to + 1);
    const missing = missingSources(shadowed, event.sourceEventSeqs);
    if (missing.length > 0) {
      const shown =
        missing.slice(0, 5).join(', ') +
        (missing.length > 5 ? `, … (${missing.length} in all)` : '');
      throw new SessionValidationError(
        'REPLACE_SOURCES_INCOMPLETE',
        `a replace must cite every seq it shadows in sourceEventSeqs; missing ${shown}`,
        where,
      );
    }
    if (event.type === 'tool/result') this.checkToolResultRewrite(event, shadowed, where);
    return { kind: 'replace', from, shadowed };
  }

  private checkToolResultRewrite(
    event: SessionEvent,
    shadowed: readonly number[],
    where: SessionValidationDetails,
  ): void {
    const fail = (message: string): never => {
      throw new SessionValidationError('TOOL_RESULT_REWRITE_INVALID', message, where);
    };
    if (shadowed.length !== 1) {
      fail(
        `a tool/result replace must shadow exactly one tool/result, found a range of ${shadowed.length} entries`,
      );
    }
    const target = this.log[shadowed[0] as number];
    if (target === undefined || target.type !== 'tool/result') {
      fail(
        `a tool/result replace must target a tool/result, found ${target?.type ?? 'nothing'} at seq ${shadowed[0]}`,
      );
      return;
    }
    const field = firstDifferenceOutsideResultContent(target.data, event.data);
    if (field !== undefined) {
      fail(
        `a tool/result replace may change only the result content, but ${field} differs from seq ${target.seq}`,
      );
    }
  }

  private apply(event: SessionEvent, plan: SurfacePlan): void {
    if (plan.kind === 'none') return;
    this.frozenSeqs = undefined;
    const seq = event.seq;
    this.ensureMembership(seq);
    if (plan.kind === 'append') {
      this.order.push(seq);
      this.membership[seq] = 1;
      return;
    }
    this.order.splice(plan.from, plan.shadowed.length, seq);
    for (const shadowedSeq of plan.shadowed) this.membership[shadowedSeq] = 0;
    this.membership[seq] = 1;
    this.generation++;
    const op = event.surfaceOp;
    if (this.replacements !== undefined && typeof op === 'object') {
      this.replacements.push(
        Object.freeze({
          seq,
          start: op.start,
          end: op.end,
          shadowedSeqs: Object.freeze([...plan.shadowed]),
        }),
      );
    }
  }

  private isMember(seq: number): boolean {
    return seq < this.membership.length && this.membership[seq] === 1;
  }

  private ensureMembership(seq: number): void {
    if (seq < this.membership.length) return;
    let size = this.membership.length * 2;
    while (size <= seq) size *= 2;
    const grown = new Uint8Array(size);
    grown.set(this.membership);
    this.membership = grown;
  }
}

function missingSources(
  shadowed: readonly number[],
  sources: readonly number[] | undefined,
): number[] {
  if (sources === undefined) return [...shadowed];
  if (shadowed.length * sources.length <= 256)
    return shadowed.filter((seq) => !sources.includes(seq));
  const cited = new Set(sources);
  return shadowed.filter((seq) => !cited.has(seq));
}

/**
 * Compares two tool/result data values everywhere but `message.content[0].content`; returns a
 * description of the first differing field, or `undefined` when only the content differs.
 */
function firstDifferenceOutsideResultContent(
  original: JsonValue,
  replacement: JsonValue,
): string | undefined {
  const a = asObject(original);
  const b = asObject(replacement);
  if (a === undefined || b === undefined) return 'data';
  const differentKey = differingKey(a, b, 'message');
  if (differentKey !== undefined) return `data.${differentKey}`;
  const messageA = asObject(a.message);
  const messageB = asObject(b.message);
  if (messageA === undefined || messageB === undefined) return 'data.message';
  const messageKey = differingKey(messageA, messageB, 'content');
  if (messageKey !== undefined) return `data.message.${messageKey}`;
  const blockA = Array.isArray(messageA.content)
    ? asObject(messageA.content[0] as JsonValue)
    : undefined;
  const blockB = Array.isArray(messageB.content)
    ? asObject(messageB.content[0] as JsonValue)
    : undefined;
  if (blockA === undefined || blockB === undefined) return 'data.message.content';
  const blockKey = differingKey(blockA, blockB, 'content');
  if (blockKey !== undefined) return `data.message.content[0].${blockKey}`;
  return undefined;
}

/** The first key (other than `except`) whose value differs between two objects. */
function differingKey(
  a: Readonly<Record<string, JsonValue>>,
  b: Readonly<Record<string, JsonValue>>,
  except: string,
): string | undefined {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  for (const key of keys) {
    if (key === except) continue;
    const hasA = Object.hasOwn(a, key);
    const hasB = Object.hasOwn(b, key);
    if (hasA !== hasB || !jsonEqual(a[key] as JsonValue, b[key] as JsonValue)) return key;
  }
  return undefined;
}

/**
 * Admits `events` one by one into `log` through `manager`, the path every seed takes (a
 * session's seed and `foldSurface`): admission, the surface rules, and the elided-chunk rule
 * checked once the whole seed is in. An {@link ElidedLog}'s holes stay holes in `log` (an elided
 * chunk's time and length were checked when the log took it; held deltas are checked here, with
 * `limits`). Returns the number of elided chunks.
 */
export function seedLog(
  events: readonly unknown[] | ElidedLog,
  admit: (raw: unknown, index: number) => SessionEvent,
  limits: JsonLimits,
  manager: SurfaceManager,
  log: (SessionEvent | undefined)[],
): number {
  if (events instanceof ElidedLog) return seedElidedLog(events, admit, limits, manager, log);
  const elided = new ElidedChunkTracker();
  for (let index = 0; index < events.length; index++) {
    const event = admit(events[index], index);
    manager.validateSeeded(event, index);
    log.push(event);
    noteSeeded(elided, event);
  }
  elided.finish();
  return elided.count;
}

/**
 * {@link seedLog} for a loaded log with holes: only the events present are admitted as objects;
 * the holes are taken as a whole (a resume has a million of them): elided chunks checked
 * finished at the end, held deltas checked in their place as admission would check their events.
 */
function seedElidedLog(
  events: ElidedLog,
  admit: (raw: unknown, index: number) => SessionEvent,
  limits: JsonLimits,
  manager: SurfaceManager,
  log: (SessionEvent | undefined)[],
): number {
  const slots = events.slots();
  const elided = new ElidedChunkTracker(events.elidedMap(), events.elidedCount);
  const held = events.heldRuns();
  let nextRun = 0;
  let nextHeld = held[0]?.seq ?? -1;
  const start = log.length;
  // The log is sized once: its holes read as `undefined` like the log's other elided chunks,
  // without a write each, and each event lands in its slot.
  log.length = start + slots.length;
  let index = 0;
  try {
    for (; index < slots.length; index++) {
      const raw = slots[index];
      if (raw === undefined) {
        if (index === nextHeld) {
          admitHeld(held[nextRun] as HeldDeltaRun, admit, limits);
          nextHeld = held[++nextRun]?.seq ?? -1;
        }
        continue;
      }
      const event = admit(raw, index);
      manager.seedUpTo(start + index);
      manager.skipHoles(start + index);
      manager.validateSeeded(event, index);
      log[start + index] = event;
      noteSeeded(elided, event);
    }
    manager.seedUpTo(start + slots.length);
    manager.skipHoles(start + slots.length);
  } catch (error) {
    // As if the events had been pushed one by one: the log ends before the one refused.
    log.length = start + index;
    throw error;
  } finally {
    manager.endSeed();
  }
  elided.finish();
  return elided.count;
}

/**
 * Checks a run of held deltas as admission checks their events: a chunk the delta shape's rules
 * doubt is built and admitted, so the general path decides and reports what is wrong with it.
 */
function admitHeld(
  run: HeldDeltaRun,
  admit: (raw: unknown, index: number) => SessionEvent,
  limits: JsonLimits,
): void {
  for (
    let i = firstDoubtfulDelta(run, limits);
    i !== -1;
    i = firstDoubtfulDelta(run, limits, i + 1)
  ) {
    const seq = run.seq + i;
    const chunk = { type: run.type, id: run.id, delta: heldDelta(run, i) };
    const data = { turn: run.turn, step: run.step, chunk };
    admit({ seq, time: run.times[i], type: 'assistant/chunk', data }, seq);
  }
}

function noteSeeded(elided: ElidedChunkTracker, event: SessionEvent): void {
  // Every admitted stub holds a shared marker, so this is an O(1) test per chunk.
  if (event.type === 'assistant/chunk' && isSharedElidedMarker(event.data)) {
    elided.noteElided(event.seq);
  } else {
    elided.noteEvent(event);
  }
}

/**
 * Folds a whole log from seq 0 and returns its surface, applying exactly the validation a
 * session applies when seeded with the same events (and throwing the same errors). Pure: the
 * input is neither copied nor frozen.
 */
export function foldSurface(
  events: readonly unknown[],
  limits: JsonLimits = DEFAULT_JSON_LIMITS,
): SurfaceFold {
  const log: SessionEvent[] = [];
  const manager = new SurfaceManager(log, { recordReplacements: true });
  // A session's own log was admitted already (see markAdmittedLog); only the surface is folded.
  const admit = isAdmittedLog(events)
    ? (raw: unknown) => raw as SessionEvent
    : (raw: unknown, index: number) => admitStored(raw, index, 'check', limits);
  seedLog(events, admit, limits, manager, log);
  return Object.freeze({
    seqs: manager.seqs,
    replaceGeneration: manager.replaceGeneration,
    replacements: Object.freeze([...manager.committedReplacements()]),
  });
}

/**
 * Replays the surface of an already validated log up to and including `lastIndex`, without
 * validation. Used for time travel (`messagesAt`) and the transcript.
 */
export function replaySurface(
  log: readonly (SessionEvent | undefined)[],
  lastIndex: number,
  onReplace?: (replacement: SurfaceReplacement) => void,
): number[] {
  const order: number[] = [];
  for (let index = 0; index <= lastIndex; index++) {
    const event = log[index];
    if (event !== undefined) applySurfaceOp(order, event, onReplace);
  }
  return order;
}

/**
 * Applies one already validated event's `surfaceOp` to a surface order, in place: the step
 * {@link replaySurface} takes per event, for a caller that walks the log itself.
 */
export function applySurfaceOp(
  order: number[],
  event: SessionEvent,
  onReplace?: (replacement: SurfaceReplacement) => void,
): void {
  const op = event.surfaceOp;
  if (op === undefined) return;
  if (op === 'append') {
    order.push(event.seq);
    return;
  }
  const from = order.indexOf(op.start);
  const to = order.indexOf(op.end, from);
  const shadowed = order.splice(from, to - from + 1, event.seq);
  onReplace?.({ seq: event.seq, start: op.start, end: op.end, shadowedSeqs: shadowed });
}
