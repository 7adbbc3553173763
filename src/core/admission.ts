/**
 * Admission of one event into a log: every check that does not depend on the surface state.
 * The same code admits live appends, seeds, loaded logs and folds, so they all accept and refuse
 * the same events with the same errors.
 */
import {
  describeValue,
  type SessionValidationCode,
  type SessionValidationDetails,
  SessionValidationError,
} from './errors.js';
import { checkLogData, checkSurfaceData, isSeqLike } from './event-shapes.js';
import {
  isSurfaceEligibleType,
  isValidEventType,
  type SessionEvent,
  type SurfaceOp,
} from './events.js';
import {
  adoptJson,
  checkJson,
  isObjectPrototype,
  JsonIssue,
  type JsonLimits,
  type JsonValue,
  snapshotJson,
} from './json.js';

/**
 * How a stored event's objects are treated: `copy` snapshots borrowed input, `adopt` validates
 * and freezes objects the caller hands over (freshly parsed lines), `check` only validates.
 */
export type AdmissionMode = 'copy' | 'adopt' | 'check';

/** Returns its argument from `new`, so a subclass's private fields land on that object. */
class Stamp {
  constructor(target: object) {
    // biome-ignore lint/correctness/noConstructorReturn: the private-brand idiom needs it
    return target;
  }
}

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

const ENVELOPE_KEYS: ReadonlySet<string> = new Set([
  'seq',
  'time',
  'type',
  'data',
  'surfaceOp',
  'sourceEventSeqs',
]);
const INTENT_KEYS: ReadonlySet<string> = new Set(['surfaceOp', 'sourceEventSeqs']);

/** Builds the frozen event for a live `append`, copying the caller's data. */
export function admitAppend(
  type: unknown,
  data: unknown,
  intent: unknown,
  seq: number,
  time: number,
  limits: JsonLimits,
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
  return finish(type, seq, time, data, surfaceOp, sources, 'copy', limits, where);
}

/**
 * Admits one event of a seed, a loaded log or a fold. `index` is its position; the seq must
 * equal it.
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
    if (!ENVELOPE_KEYS.has(key)) {
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
  );
}

type Where = { -readonly [K in keyof SessionValidationDetails]: SessionValidationDetails[K] };

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
): SessionEvent {
  let data: JsonValue;
  try {
    data =
      mode === 'copy'
        ? snapshotJson(rawData, limits)
        : mode === 'adopt'
          ? adoptJson(rawData, limits)
          : checkJson(rawData, limits);
  } catch (error) {
    if (!(error instanceof JsonIssue)) throw error;
    fail(error.kind === 'limit' ? 'DATA_LIMIT_EXCEEDED' : 'NON_JSON_DATA', error.reason, {
      ...where,
      path: error.path('data'),
    });
  }
  const surfaceOp = admitSurfaceOp(type, rawSurfaceOp, where);
  const sources = admitSources(type, seq, rawSources, where);
  if (surfaceOp !== undefined) {
    const issue = checkSurfaceData(type, data);
    if (issue !== undefined) fail('INVALID_MESSAGE', issue.reason, { ...where, path: issue.path });
  } else {
    const issue = checkLogData(type, data);
    if (issue !== undefined)
      fail('INVALID_EVENT_DATA', issue.reason, { ...where, path: issue.path });
  }
  if (mode === 'check') {
    return { seq, time, type, data, surfaceOp, sourceEventSeqs: sources } as SessionEvent;
  }
  const event: { -readonly [K in keyof SessionEvent]: SessionEvent[K] } = { seq, time, type, data };
  if (surfaceOp !== undefined) event.surfaceOp = surfaceOp;
  if (sources !== undefined) event.sourceEventSeqs = sources;
  AdmittedBrand.stamp(event);
  Object.freeze(event);
  return event;
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
