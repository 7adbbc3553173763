/**
 * Typed errors of the core. Every error carries a stable `code` to branch on; messages say what
 * was expected and what was found, and never embed a whole payload.
 */

// The key predates per-class kinds: an older copy of the package that tests `key in value` still
// recognises errors of this one.
const ERROR_KINDS = Symbol.for('palimpsest.error');

/** What a class needs for {@link PalimpsestError.isInstance}: its kind and its instance type. */
export interface PalimpsestErrorClass<T> {
  readonly kind: string;
  readonly prototype: T;
}

/** The kinds of a class and its palimpsest ancestors, computed once per class. */
const kindsByClass = new WeakMap<object, readonly string[]>();

function kindsOf(target: object): readonly string[] {
  const cached = kindsByClass.get(target);
  if (cached !== undefined) return cached;
  const kinds: string[] = [];
  for (let at: unknown = target; typeof at === 'function'; at = Object.getPrototypeOf(at)) {
    const own = Object.getOwnPropertyDescriptor(at, 'kind');
    if (own !== undefined) kinds.push(String(own.value));
  }
  const frozen = Object.freeze(kinds);
  kindsByClass.set(target, frozen);
  return frozen;
}

/**
 * Base class of every error palimpsest throws on purpose.
 *
 * Branch on `code`, or test the class with its static `isInstance`, which recognises exactly its
 * own kind (and its subclasses), also when two copies of the package are loaded or the error
 * crossed a realm, where `instanceof` would fail:
 *
 * @example
 * ```ts
 * import { PalimpsestError, Session, SessionValidationError } from 'palimpsest';
 *
 * const session = Session.create({ id: 'errors-example' });
 * const hello = { id: 'u1', role: 'user', content: [{ type: 'text', text: 'hello' }], source: { kind: 'user' } } as const;
 * session.append('user/message', hello, { surfaceOp: 'append' });
 * try {
 *   // A replace shadows a range of the surface; seq 5 is not on it.
 *   session.append('user/message', { ...hello, id: 'u2' }, {
 *     surfaceOp: { op: 'replace', start: 0, end: 5 },
 *     sourceEventSeqs: [0],
 *   });
 * } catch (error) {
 *   if (!SessionValidationError.isInstance(error)) throw error;
 *   console.log(error.code); // 'REPLACE_ENDPOINT_NOT_ON_SURFACE'
 *   console.log(PalimpsestError.isInstance(error)); // true: every palimpsest error is one
 * }
 * console.log(session.events.length); // 1: a refused append changes nothing
 * ```
 */
export class PalimpsestError extends Error {
  /**
   * The name `isInstance` recognises, shared by every copy of the package. Each subclass declares
   * its own; one that does not is recognised as its parent.
   */
  static readonly kind: string = 'PalimpsestError';

  /** Stable machine-readable reason; never changes between releases for the same condition. */
  readonly code: string;
  declare readonly [ERROR_KINDS]: readonly string[];

  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.name = new.target.name;
    Object.defineProperty(this, ERROR_KINDS, { value: kindsOf(new.target) });
  }

  /**
   * True when `value` is an error of this class or one of its subclasses, from any copy of the
   * package: `PalimpsestError.isInstance` accepts every palimpsest error, `ConflictError.isInstance`
   * only conflicts. Narrows to the class, so `code` and the class's fields are typed.
   */
  static isInstance<T>(this: PalimpsestErrorClass<T>, value: unknown): value is T {
    if (typeof value !== 'object' || value === null || !(ERROR_KINDS in value)) return false;
    // biome-ignore lint/complexity/noThisInStatic: the class isInstance is called on is the kind asked about
    const kind = this.kind;
    const kinds: unknown = (value as { [ERROR_KINDS]: unknown })[ERROR_KINDS];
    // An older copy marked its errors with `true` and knew no kinds: only the base can claim them.
    if (!Array.isArray(kinds)) return kind === PalimpsestError.kind;
    return kinds.includes(kind);
  }
}

/**
 * Codes of {@link SessionValidationError}: one per rule an event (appended or seeded) can break.
 *
 * - `INVALID_EVENT_TYPE`: the type is not a lowercase `area/name` string.
 * - `INVALID_ENVELOPE`: a seeded event is not `{seq, time, type, data, surfaceOp?, sourceEventSeqs?}`.
 * - `INVALID_TIME`: `time` (from a seed or the clock) is not a safe integer.
 * - `SEQ_NOT_CONTIGUOUS`: a seeded event's seq differs from its index.
 * - `NON_JSON_DATA`: data or metadata is not lossless JSON (undefined, NaN, -0, functions, class
 *   instances, sparse arrays, symbol keys, cycles...).
 * - `DATA_LIMIT_EXCEEDED`: data nests deeper or holds more characters than the session's limits.
 * - `SURFACE_OP_REQUIRED`: a surface-eligible event has no `surfaceOp`.
 * - `SURFACE_OP_FORBIDDEN`: an event that is not surface-eligible carries a `surfaceOp`.
 * - `INVALID_SURFACE_OP`: `surfaceOp` is neither `'append'` nor exactly `{op:'replace', start, end}`.
 * - `REPLACE_ENDPOINT_NOT_ON_SURFACE`: a replace names a start or end seq absent from the surface.
 * - `REPLACE_RANGE_REVERSED`: a replace's start comes after its end in surface order.
 * - `INVALID_SOURCE_EVENT_SEQS`: provenance is not a list of unique integers below the event's seq.
 * - `EMPTY_SOURCE_EVENT_SEQS`: `[]` provenance on a type other than `assistant/message`.
 * - `REPLACE_SOURCES_INCOMPLETE`: a replace does not cite every seq it shadows.
 * - `TOOL_RESULT_REWRITE_INVALID`: a `tool/result` replace shadows more or other than one
 *   `tool/result`, or changes a field other than the result content.
 * - `INVALID_MESSAGE`: a surface event's message does not have the shape of its type.
 * - `INVALID_EVENT_DATA`: a log-only event of the core vocabulary lacks the fields of its type
 *   (such as an integer `turn` on `turn/start` or a reason kind on `turn/end`).
 * - `INVALID_HEADER`: the session header is malformed or of another format version.
 * - `REENTRANT_APPEND`: a subscriber appended while the session was publishing an event.
 * - `ELIDED_CHUNK_OUTSIDE_SEED`: an elided `assistant/chunk` (data `{elided: {bytes}}`, a stub a
 *   store loads in place of a finished chunk) was appended; stubs exist only in loaded seeds.
 * - `ELIDED_CHUNK_NOT_FINISHED`: a seed holds an elided chunk that no later `assistant/message`
 *   of the seed cites, so it cannot stand for a finished chunk.
 */
export type SessionValidationCode =
  | 'INVALID_EVENT_TYPE'
  | 'INVALID_ENVELOPE'
  | 'INVALID_TIME'
  | 'SEQ_NOT_CONTIGUOUS'
  | 'NON_JSON_DATA'
  | 'DATA_LIMIT_EXCEEDED'
  | 'SURFACE_OP_REQUIRED'
  | 'SURFACE_OP_FORBIDDEN'
  | 'INVALID_SURFACE_OP'
  | 'REPLACE_ENDPOINT_NOT_ON_SURFACE'
  | 'REPLACE_RANGE_REVERSED'
  | 'INVALID_SOURCE_EVENT_SEQS'
  | 'EMPTY_SOURCE_EVENT_SEQS'
  | 'REPLACE_SOURCES_INCOMPLETE'
  | 'TOOL_RESULT_REWRITE_INVALID'
  | 'INVALID_MESSAGE'
  | 'INVALID_EVENT_DATA'
  | 'INVALID_HEADER'
  | 'REENTRANT_APPEND'
  | 'ELIDED_CHUNK_OUTSIDE_SEED'
  | 'ELIDED_CHUNK_NOT_FINISHED';

/** Where a rejected event came from and what it was; all fields are short scalars. */
export interface SessionValidationDetails {
  /** The seq the event has or would have had. */
  readonly seq?: number | undefined;
  /** The event type, when it was a string. */
  readonly eventType?: string | undefined;
  /** Index in the seed or folded log, when the event was not appended live. */
  readonly index?: number | undefined;
  /** Path inside the event to the offending value, such as `data.message.content[0]`. */
  readonly path?: string | undefined;
}

/**
 * An event was refused by the session's validation. The session is exactly as it was before the
 * call: log, surface, generation, caches and next seq are untouched.
 */
export class SessionValidationError extends PalimpsestError {
  static override readonly kind: string = 'SessionValidationError';
  declare readonly code: SessionValidationCode;
  readonly seq: number | undefined;
  readonly eventType: string | undefined;
  readonly index: number | undefined;
  readonly path: string | undefined;

  constructor(
    code: SessionValidationCode,
    message: string,
    details: SessionValidationDetails = {},
  ) {
    super(code, withContext(message, details));
    this.seq = details.seq;
    this.eventType = details.eventType;
    this.index = details.index;
    this.path = details.path;
  }
}

/**
 * Codes of {@link ForkError}:
 * - `INVALID_BOUNDARY`: the boundary is not the seq of an event of the parent.
 * - `OPEN_TURN`: the prefix would end inside a turn that has not ended.
 * - `ELIDED_CHUNKS`: the prefix holds elided chunks (the parent was loaded without their
 *   bodies), which the child could not store; load the parent in full to fork it.
 */
export type ForkErrorCode = 'INVALID_BOUNDARY' | 'OPEN_TURN' | 'ELIDED_CHUNKS';

/** A fork was refused; no child session was created. */
export class ForkError extends PalimpsestError {
  static override readonly kind: string = 'ForkError';
  declare readonly code: ForkErrorCode;
  /** The boundary seq that was asked for, when it was a number. */
  readonly boundarySeq: number | undefined;

  constructor(code: ForkErrorCode, message: string, boundarySeq?: number) {
    super(code, message);
    this.boundarySeq = boundarySeq;
  }
}

/**
 * An argument or option is out of range or of the wrong type: of a query method (such as
 * `messagesAt`), of a store (a negative `leaseMs`, an unknown `chunks` mode), or a batch handed to
 * a store's `append` that it cannot take (seqs not contiguous, data that is not JSON).
 */
export class InvalidArgumentError extends PalimpsestError {
  static override readonly kind: string = 'InvalidArgumentError';
  declare readonly code: 'INVALID_ARGUMENT';

  constructor(message: string, options?: { cause?: unknown }) {
    super('INVALID_ARGUMENT', message, options);
  }
}

function withContext(message: string, details: SessionValidationDetails): string {
  const where: string[] = [];
  if (details.index !== undefined) where.push(`at index ${details.index}`);
  if (details.seq !== undefined) where.push(`seq ${details.seq}`);
  if (details.eventType !== undefined) where.push(`type '${truncate(details.eventType, 60)}'`);
  const prefix = where.length > 0 ? `event ${where.join(', ')}: ` : '';
  const suffix =
    details.path !== undefined && details.path !== '' ? ` (at ${truncate(details.path, 120)})` : '';
  return `${prefix}${message}${suffix}`;
}

/** Cuts a string for inclusion in an error message. */
export function truncate(text: string, max = 80): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** A short, payload-free description of a value for error messages. */
export function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'undefined';
  if (typeof value === 'string') return `the string ${JSON.stringify(truncate(value, 40))}`;
  if (typeof value === 'number') {
    if (Object.is(value, -0)) return '-0';
    return `the number ${String(value)}`;
  }
  if (typeof value === 'bigint') return 'a bigint';
  if (typeof value === 'boolean') return String(value);
  if (typeof value === 'function') return 'a function';
  if (typeof value === 'symbol') return 'a symbol';
  if (Array.isArray(value)) return `an array of ${value.length}`;
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto === null || proto === Object.prototype) return 'an object';
  const ctor = Object.hasOwn(proto as object, 'constructor')
    ? (proto as { constructor?: { name?: unknown } }).constructor
    : undefined;
  const name = typeof ctor?.name === 'string' && ctor.name !== '' ? ctor.name : undefined;
  return name === undefined || name === 'Object'
    ? 'an object whose prototype is not a plain object prototype'
    : `an instance of ${name}`;
}
