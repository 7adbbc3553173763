/**
 * Admission of one event into a log: every check that does not depend on the surface state.
 * The same code admits live appends, seeds, loaded logs and folds, so they all accept and refuse
 * the same events with the same errors.
 */

import { admitDeltaChunk } from './delta-chunk.js';
import {
  elidedChunkData,
  elidedShapeIssue,
  isElisionCandidate,
  isSharedElidedMarker,
} from './elided.js';
import {
  describeValue,
  type SessionValidationCode,
  type SessionValidationDetails,
  SessionValidationError,
} from './errors.js';
import { checkLogData, checkSurfaceData, isSeqLike } from './event-shapes.js';
import {
  type EventEnvelope,
  isSurfaceEligibleType,
  isValidEventType,
  type SessionEvent,
  type SurfaceOp,
} from './events.js';
import {
  adoptJson,
  checkJson,
  freezeParsedJson,
  isObjectPrototype,
  JsonIssue,
  type JsonLimits,
  type JsonValue,
  prototypesArePristine,
  snapshotJson,
} from './json.js';
import { Stamp } from './stamp.js';

/**
 * How a stored event's objects are treated: `copy` snapshots borrowed input, `adopt` validates
 * and freezes objects the caller hands over, `parsed` does the same for objects `JSON.parse`
 * built (a store's freshly parsed lines), skipping the checks such values pass by construction
 * (see {@link freezeParsedJson}), `check` only validates.
 */
export type AdmissionMode = 'copy' | 'adopt' | 'parsed' | 'check';

/**
 * Marks events produced by admission (validated and deeply frozen, safe to share) with a private
 * field: unforgeable like a WeakSet, but an O(1) check with no table. A WeakSet costs a hash
 * insert per event and ephemeron work in every GC, and V8's identity hashes have 21 bits, so
 * past ~2M live entries its probe chains grow and every append slows down by an order of
 * magnitude. The brand is stamped before the event is frozen.
 */
class AdmittedBrand extends Stamp {
  readonly #admitted = true;

  static stamp(event: object): void {
    new AdmittedBrand(event);
  }

  static has(value: object): boolean {
    return #admitted in value;
  }
}

/** True for an event object that an earlier admission produced (validated and deeply frozen). */
export function isAdmittedEvent(event: unknown): event is SessionEvent {
  return typeof event === 'object' && event !== null && AdmittedBrand.has(event);
}

/**
 * Marks frozen arrays that hold a session's admitted events from seq 0 on (`session.events`, a
 * fork's prefix of it). Seeded events are not branded one by one (appended ones are): a brand is
 * a property of its own on each event (40 bytes, and a quarter of the cost of a resume), while
 * what fork and the linter need to know is that a whole log was admitted, which one mark on the
 * array says.
 */
class AdmittedLogBrand extends Stamp {
  readonly #log = true;

  static stamp(log: object): void {
    new AdmittedLogBrand(log);
  }

  static has(value: object): boolean {
    return #log in value;
  }
}

/**
 * Freezes and marks `events`, which must be admitted events with seqs 0, 1, 2... (a session's log
 * or a prefix of it). Core-internal: the mark vouches for every event in the array.
 */
export function markAdmittedLog(events: SessionEvent[]): readonly SessionEvent[] {
  AdmittedLogBrand.stamp(events);
  return Object.freeze(events);
}

/** True for an array {@link markAdmittedLog} marked: admitted events, seqs from 0, frozen. */
export function isAdmittedLog(value: unknown): value is readonly SessionEvent[] {
  return typeof value === 'object' && value !== null && AdmittedLogBrand.has(value);
}

const INTENT_KEYS: ReadonlySet<string> = new Set(['surfaceOp', 'sourceEventSeqs']);

/**
 * Builds the frozen event for a live `append`: copying the caller's data, or (`adopt`) freezing
 * it in place for callers that built it for this event alone.
 */
export function admitAppend(
  type: unknown,
  data: unknown,
  intent: unknown,
  seq: number,
  time: number,
  limits: JsonLimits,
  mode: 'copy' | 'adopt' = 'copy',
): SessionEvent {
  const where: Where = { seq, eventType: typeof type === 'string' ? type : undefined };
  if (!isValidEventType(type)) throw invalidType(type, where);
  let surfaceOp: unknown;
  let sources: unknown;
  if (intent !== undefined) {
    const record = asPlainRecord(intent);
    if (record === undefined) {
      fail(
        'INVALID_ENVELOPE',
        `expected the intent as an object, found ${describeValue(intent)}`,
        where,
      );
    }
    for (const key of Object.keys(record)) {
      if (!INTENT_KEYS.has(key)) {
        fail(
          'INVALID_ENVELOPE',
          `unknown intent field '${key.slice(0, 40)}'; expected surfaceOp or sourceEventSeqs`,
          where,
        );
      }
    }
    surfaceOp = record.surfaceOp;
    sources = record.sourceEventSeqs;
  }
  return finish(type, seq, time, data, surfaceOp, sources, mode, limits, where, false);
}

/**
 * The admission of a whole seed, event by event: returns the function that admits the event at
 * each index. In `parsed` mode, events that look like an admitted event already (plain, keys in
 * the admitted order, no replace) take a fast path that validates them
 * without allocating and turns the parsed record itself into the event; anything else, and any
 * event the fast path doubts, goes through {@link admitStored}, which reports the exact error.
 */
export function seedAdmission(
  mode: AdmissionMode,
  limits: JsonLimits,
): (raw: unknown, index: number) => SessionEvent {
  // The fast path lists keys with `for...in`, which would also list enumerable keys added to
  // the prototypes; checked once per seed, since admission runs no code that could add one.
  if (mode !== 'parsed' || !prototypesArePristine()) {
    return (raw, index) => admitStored(raw, index, mode, limits);
  }
  return (raw, index) =>
    admitParsedFast(raw, index, limits) ?? admitStored(raw, index, mode, limits);
}

/**
 * Admits one event of a seed, a loaded log or a fold. `index` is its position; the seq must
 * equal it. Elided chunks (stubs, see `elided.ts`) are accepted here; the caller checks, once the
 * whole seed is admitted, that a later message cites each of them.
 */
export function admitStored(
  raw: unknown,
  index: number,
  mode: AdmissionMode,
  limits: JsonLimits,
): SessionEvent {
  if (isAdmittedEvent(raw)) {
    if (raw.seq !== index) {
      fail('SEQ_NOT_CONTIGUOUS', `expected seq ${index}, found seq ${raw.seq}`, {
        index,
        seq: raw.seq,
        eventType: raw.type,
      });
    }
    return raw;
  }
  const record = asPlainRecord(raw);
  if (record === undefined) {
    fail('INVALID_ENVELOPE', `expected an event object, found ${describeValue(raw)}`, { index });
  }
  const type = record.type;
  const where: Where = { index, eventType: typeof type === 'string' ? type : undefined };
  for (const key of Object.keys(record)) {
    if (envelopeRank(key) === -1) {
      fail('INVALID_ENVELOPE', `unknown envelope field '${key.slice(0, 40)}'`, where);
    }
  }
  const seq = record.seq;
  if (!isSeqLike(seq)) {
    fail(
      'INVALID_ENVELOPE',
      `expected seq as a non-negative integer, found ${describeValue(seq)}`,
      where,
    );
  }
  where.seq = seq;
  if (seq !== index) fail('SEQ_NOT_CONTIGUOUS', `expected seq ${index}, found seq ${seq}`, where);
  const time = record.time;
  if (typeof time !== 'number' || !Number.isSafeInteger(time) || Object.is(time, -0)) {
    fail('INVALID_TIME', `expected time as integer epoch ms, found ${describeValue(time)}`, where);
  }
  if (!isValidEventType(type)) throw invalidType(type, where);
  if (!('data' in record)) fail('INVALID_ENVELOPE', 'the event has no data field', where);
  return finish(
    type,
    seq,
    time,
    record.data,
    record.surfaceOp,
    record.sourceEventSeqs,
    mode,
    limits,
    where,
    true,
  );
}

/**
 * The fast path of `parsed` admission: the same rules as {@link admitStored} for the events a
 * store writes (keys in the admitted order, surfaceOp `'append'` or none, data a parsed value),
 * without allocating: the parsed record becomes the event. Returns `undefined` for anything it
 * does not accept outright (an error, or a case it leaves to the general path); nothing it did
 * changes what {@link admitStored} then decides (it may have frozen parts of the data, which
 * adoption does anyway).
 */
function admitParsedFast(
  raw: unknown,
  index: number,
  limits: JsonLimits,
): SessionEvent | undefined {
  if (typeof raw !== 'object' || raw === null || Object.getPrototypeOf(raw) !== Object.prototype) {
    return undefined;
  }
  const record = raw as MutableEvent;
  // The keys of an admitted event in its order, each at most once (an unknown key ranks -1).
  let previous = -1;
  for (const key in record) {
    const rank = envelopeRank(key);
    // (`undefined` cannot come from JSON.parse; an absent field is absent, not undefined.)
    if (rank <= previous || record[key as keyof MutableEvent] === undefined) return undefined;
    previous = rank;
  }
  if (previous < 3) return undefined; // no data (and so not even seq, time and type)
  const { seq, time, type, data, surfaceOp, sourceEventSeqs } = record;
  if (seq !== index || !isSeqLike(seq)) return undefined;
  if (typeof time !== 'number' || !Number.isSafeInteger(time) || Object.is(time, -0)) {
    return undefined;
  }
  if (type !== 'assistant/chunk' && !isValidEventType(type)) return undefined;
  const eligible = isSurfaceEligibleType(type);
  if (eligible ? surfaceOp !== 'append' : surfaceOp !== undefined) return undefined;
  if (sourceEventSeqs !== undefined && !freezeAscendingSources(sourceEventSeqs, seq, type)) {
    return undefined;
  }
  if (
    type === 'assistant/chunk' &&
    typeof data === 'object' &&
    data !== null &&
    isElisionCandidate(data)
  ) {
    // A stub. One parsed from JSON text (a load handed on, as the viewer's server does) takes
    // the shared marker here, as the general path gives it: the seed's tracker tells stubs by it.
    if (elidedShapeIssue(data) !== undefined) return undefined;
    if (!isSharedElidedMarker(data)) {
      record.data = elidedChunkData((data as { elided: { bytes: number } }).elided.bytes);
    }
  } else {
    if (!freezeParsedJson(data, limits)) return undefined;
    const issue = eligible ? checkSurfaceData(type, data) : checkLogData(type, data);
    if (issue !== undefined) return undefined;
  }
  // Not branded: the session's log carries the mark (see markAdmittedLog).
  return admitted(record);
}

/**
 * Validates and freezes, in place, a parsed `sourceEventSeqs` that ascends (the usual case:
 * chunks in stream order), where no seq can repeat. `false` for anything else, left to the
 * general path.
 */
function freezeAscendingSources(raw: unknown, seq: number, type: string): boolean {
  if (!Array.isArray(raw) || Object.getPrototypeOf(raw) !== Array.prototype) return false;
  const length = raw.length;
  if (length === 0 && type !== 'assistant/message') return false;
  let previous = -1;
  for (let i = 0; i < length; i++) {
    const value: unknown = raw[i];
    if (!isSeqLike(value) || value <= previous || value >= seq) return false;
    previous = value;
  }
  Object.freeze(raw);
  return true;
}

/** The position of an envelope key in an admitted event, or -1 for any other key. */
function envelopeRank(key: string): number {
  switch (key) {
    case 'seq':
      return 0;
    case 'time':
      return 1;
    case 'type':
      return 2;
    case 'data':
      return 3;
    case 'surfaceOp':
      return 4;
    case 'sourceEventSeqs':
      return 5;
    default:
      return -1;
  }
}

type Where = { -readonly [K in keyof SessionValidationDetails]: SessionValidationDetails[K] };
/** An event as admission builds it: JSON data, typed by its type only once it is admitted. */
type MutableEvent = {
  -readonly [K in keyof EventEnvelope<string, JsonValue>]: EventEnvelope<string, JsonValue>[K];
};

/**
 * The admission steps every path shares: data, surface op, provenance, data shape; then the
 * frozen event. `seeded` allows elided chunks (loads only), and leaves the event unbranded: a
 * seeded log is marked as a whole (see markAdmittedLog), and a brand is a property of its own on
 * each event (40 bytes, and a quarter of the time of a resume).
 */
function finish(
  type: string,
  seq: number,
  time: number,
  rawData: unknown,
  rawSurfaceOp: unknown,
  rawSources: unknown,
  mode: AdmissionMode,
  limits: JsonLimits,
  where: Where,
  seeded: boolean,
): SessionEvent {
  const fast =
    type === 'assistant/chunk' && (mode === 'copy' || mode === 'adopt')
      ? admitDeltaChunk(rawData, mode, limits)
      : undefined;
  if (fast?.data !== undefined) {
    const surfaceOp = admitSurfaceOp(type, rawSurfaceOp, where);
    const sources = admitSources(type, seq, rawSources, where);
    return seal({ seq, time, type, data: fast.data }, surfaceOp, sources, seeded);
  }
  if (fast !== undefined) rawData = fast.general;
  let data: JsonValue;
  if (isSharedElidedMarker(rawData)) {
    // Made by elidedChunkData: valid, frozen and shared; a snapshot would only duplicate it.
    data = rawData;
  } else {
    try {
      data =
        mode === 'copy'
          ? snapshotJson(rawData, limits)
          : mode === 'check'
            ? checkJson(rawData, limits)
            : adoptJson(rawData, limits);
    } catch (error) {
      if (!(error instanceof JsonIssue)) throw error;
      fail(error.kind === 'limit' ? 'DATA_LIMIT_EXCEEDED' : 'NON_JSON_DATA', error.reason, {
        ...where,
        path: error.path('data'),
      });
    }
  }
  const surfaceOp = admitSurfaceOp(type, rawSurfaceOp, where);
  const sources = admitSources(type, seq, rawSources, where);
  if (surfaceOp !== undefined) {
    const issue = checkSurfaceData(type, data);
    if (issue !== undefined) fail('INVALID_MESSAGE', issue.reason, { ...where, path: issue.path });
  } else if (
    type === 'assistant/chunk' &&
    typeof data === 'object' &&
    data !== null &&
    isElisionCandidate(data)
  ) {
    if (!seeded) {
      fail(
        'ELIDED_CHUNK_OUTSIDE_SEED',
        'an elided assistant/chunk ({elided: {bytes}}) stands for a chunk a store did not load and exists only in a loaded seed; append the chunk itself',
        { ...where, path: 'data.elided' },
      );
    }
    const issue = elidedShapeIssue(data);
    if (issue !== undefined)
      fail('INVALID_EVENT_DATA', issue.reason, { ...where, path: issue.path });
    // Every admitted stub holds a shared marker, so telling stubs apart is an O(1) test.
    if (!isSharedElidedMarker(data)) {
      data = elidedChunkData((data as { elided: { bytes: number } }).elided.bytes);
    }
  } else {
    const issue = checkLogData(type, data);
    if (issue !== undefined)
      fail('INVALID_EVENT_DATA', issue.reason, { ...where, path: issue.path });
  }
  if (mode === 'check') {
    return { seq, time, type, data, surfaceOp, sourceEventSeqs: sources } as SessionEvent;
  }
  return seal({ seq, time, type, data }, surfaceOp, sources, seeded);
}

/** Completes, brands (unless seeded, see {@link finish}) and freezes an admitted event. */
function seal(
  event: MutableEvent,
  surfaceOp: SurfaceOp | undefined,
  sources: readonly number[] | undefined,
  seeded: boolean,
): SessionEvent {
  if (surfaceOp !== undefined) event.surfaceOp = surfaceOp;
  if (sources !== undefined) event.sourceEventSeqs = sources;
  if (!seeded) AdmittedBrand.stamp(event);
  return admitted(event);
}

/**
 * Freezes an event that passed admission and types it by its type: admission has checked the
 * fields a core type's data must have, which is what makes the narrowing of `data` by `type` hold.
 */
function admitted(event: MutableEvent): SessionEvent {
  return Object.freeze(event) as SessionEvent;
}

function admitSurfaceOp(type: string, raw: unknown, where: Where): SurfaceOp | undefined {
  const eligible = isSurfaceEligibleType(type);
  if (raw === undefined) {
    if (eligible) {
      fail(
        'SURFACE_OP_REQUIRED',
        `a ${type} event must carry a surfaceOp ('append' or a replace)`,
        where,
      );
    }
    return undefined;
  }
  if (!eligible) {
    fail(
      'SURFACE_OP_FORBIDDEN',
      `only user/message, context/message, assistant/message and tool/result may carry a surfaceOp, found one on ${type}`,
      where,
    );
  }
  if (raw === 'append') return 'append';
  const record = asPlainRecord(raw);
  if (record === undefined) {
    fail(
      'INVALID_SURFACE_OP',
      `expected 'append' or {op:'replace', start, end}, found ${describeValue(raw)}`,
      where,
    );
  }
  const keys = Object.keys(record);
  if (
    keys.length !== 3 ||
    !('op' in record && 'start' in record && 'end' in record) ||
    record.op !== 'replace'
  ) {
    fail(
      'INVALID_SURFACE_OP',
      `expected exactly {op:'replace', start, end}, found an object with keys ${keys.slice(0, 5).join(', ') || '(none)'}`,
      where,
    );
  }
  const { start, end } = record;
  for (const [name, value] of [
    ['start', start],
    ['end', end],
  ] as const) {
    if (!isSeqLike(value)) {
      fail(
        'INVALID_SURFACE_OP',
        `expected replace ${name} as a non-negative integer seq, found ${describeValue(value)}`,
        where,
      );
    }
  }
  return Object.freeze({ op: 'replace', start: start as number, end: end as number });
}

function admitSources(
  type: string,
  seq: number,
  raw: unknown,
  where: Where,
): readonly number[] | undefined {
  if (raw === undefined) return undefined;
  if (!Array.isArray(raw)) {
    fail(
      'INVALID_SOURCE_EVENT_SEQS',
      `expected sourceEventSeqs as an array of seqs, found ${describeValue(raw)}`,
      where,
    );
  }
  const length = raw.length;
  if (length === 0) {
    if (type !== 'assistant/message') {
      fail(
        'EMPTY_SOURCE_EVENT_SEQS',
        `an empty sourceEventSeqs is only allowed on assistant/message (a known empty stream), found it on ${type}`,
        where,
      );
    }
    return Object.freeze([]);
  }
  const out = new Array<number>(length);
  const seen = length > 16 ? new Set<number>() : undefined;
  for (let i = 0; i < length; i++) {
    const value: unknown = raw[i];
    if (!isSeqLike(value)) {
      fail(
        'INVALID_SOURCE_EVENT_SEQS',
        `expected sourceEventSeqs[${i}] to be a non-negative integer seq, found ${i in raw ? describeValue(value) : 'a hole'}`,
        where,
      );
    }
    if (value >= seq) {
      fail(
        'INVALID_SOURCE_EVENT_SEQS',
        `sourceEventSeqs[${i}] is ${value}; a source must be an earlier event (below seq ${seq})`,
        where,
      );
    }
    if (seen === undefined ? out.lastIndexOf(value, i - 1) !== -1 : seen.has(value)) {
      fail('INVALID_SOURCE_EVENT_SEQS', `sourceEventSeqs cites seq ${value} twice`, where);
    }
    seen?.add(value);
    out[i] = value;
  }
  return Object.freeze(out);
}

/** The value as a record when it is a plain (or null-prototype) object, else `undefined`. */
function asPlainRecord(value: unknown): Record<string, unknown> | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  return isObjectPrototype(Object.getPrototypeOf(value))
    ? (value as Record<string, unknown>)
    : undefined;
}

function invalidType(type: unknown, where: Where): SessionValidationError {
  return new SessionValidationError(
    'INVALID_EVENT_TYPE',
    `expected a lowercase 'area/name' event type, found ${describeValue(type)}`,
    where,
  );
}

function fail(
  code: SessionValidationCode,
  message: string,
  where: SessionValidationDetails,
): never {
  throw new SessionValidationError(code, message, where);
}
