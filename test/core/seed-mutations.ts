/**
 * What the seed fuzzing (test/core/seed-fuzz.test.ts) does to a golden log: fast-check
 * arbitraries for mutations (events dropped, duplicated, swapped or replaced; seq, time and type
 * corrupted; data deleted or swapped for values JSON cannot express; unknown envelope keys;
 * malformed surfaceOp and sourceEventSeqs; broken message shapes) and the code that applies them.
 */
import fc from 'fast-check';
import type { JsonValue } from '../../src/core/index.js';
import { GOLDENS, type GoldenName } from './seed-goldens.js';

class Widget {
  readonly x = 1;
}

class ReplaceOpClass {
  readonly op = 'replace';
  constructor(
    readonly start: number,
    readonly end: number,
  ) {}
}

function deepArray(levels: number): unknown {
  let node: unknown = 0;
  for (let i = 0; i < levels; i++) node = [node];
  return node;
}

function deepObject(levels: number): unknown {
  let node: unknown = 'leaf';
  for (let i = 0; i < levels; i++) node = { k: node };
  return node;
}

function sparse(length: number, at: number, value: unknown): unknown[] {
  const array: unknown[] = [];
  array.length = length;
  array[at] = value;
  return array;
}

/** Values a JSON text cannot hold (and a few it can), built directly. Labels keep reports readable. */
const ODD_VALUES: Readonly<Record<string, () => unknown>> = {
  undefined: () => undefined,
  null: () => null,
  NaN: () => Number.NaN,
  Infinity: () => Number.POSITIVE_INFINITY,
  '-0': () => -0,
  '1.5': () => 1.5,
  '-1': () => -1,
  '2**53': () => 2 ** 53,
  "'7'": () => '7',
  'empty string': () => '',
  true: () => true,
  'empty array': () => [],
  'empty object': () => ({}),
  bigint: () => 10n,
  symbol: () => Symbol('odd'),
  function: () => () => 1,
  Date: () => new Date(0),
  Map: () => new Map([[1, 2]]),
  'class instance': () => new Widget(),
  'boxed number': () => Object(1),
  'array subclass': () => Uint8Array.from([1]),
  'null-prototype object': () => Object.assign(Object.create(null), { a: 1 }),
  'inherited key only': () => Object.create({ inherited: 1 }),
  'cyclic object': () => {
    const value: Record<string, unknown> = { a: 1 };
    value.self = value;
    return value;
  },
  'cyclic array': () => {
    const value: unknown[] = [1];
    value.push(value);
    return value;
  },
  'deep array (1e5 levels)': () => deepArray(100_000),
  'deep object (1e5 levels)': () => deepObject(100_000),
  'deep array (200 levels)': () => deepArray(200),
  'sparse array': () => sparse(3, 1, 'x'),
  'symbol key': () => ({ [Symbol('k')]: 1, a: 1 }),
  'non-enumerable key': () => Object.defineProperty({ a: 1 }, 'hidden', { value: 2 }),
  'frozen object': () => Object.freeze({ a: Object.freeze([1]) }),
  'shared subtree': () => {
    const shared = { s: [1, 2] };
    return [shared, shared, { again: shared }];
  },
  'own __proto__ key': () => JSON.parse('{"__proto__":{"polluted":true}}'),
};
const ODD_LABELS = Object.keys(ODD_VALUES);

type Field = 'seq' | 'time' | 'type' | 'data' | 'surfaceOp' | 'sourceEventSeqs';
const FIELDS: readonly Field[] = ['seq', 'time', 'type', 'data', 'surfaceOp', 'sourceEventSeqs'];

/** What a corrupt envelope value may depend on: the event's position and its own fields. */
interface FieldContext {
  readonly seq: number;
  readonly event: Mutable;
}

type ValueTable = Readonly<Record<string, (ctx: FieldContext) => unknown>>;

const earlierOf = ({ seq }: FieldContext): number => Math.max(0, seq - 1);
const sourcesOf = ({ event }: FieldContext): unknown[] =>
  Array.isArray(event.sourceEventSeqs) ? [...event.sourceEventSeqs] : [];

const SEQ_VALUES: ValueTable = {
  'gap +1': ({ seq }) => seq + 1,
  'seq - 1': ({ seq }) => seq - 1,
  'seq as string': ({ seq }) => String(seq),
  zero: () => 0,
  '1.5': () => 1.5,
  '-1': () => -1,
  NaN: () => Number.NaN,
  null: () => null,
  '-0': () => -0,
  '2**53': () => 2 ** 53,
};

const TIME_VALUES: ValueTable = {
  '1.5': () => 1.5,
  "'x'": () => 'x',
  NaN: () => Number.NaN,
  '-1': () => -1,
  '2**60': () => 2 ** 60,
  null: () => null,
  '-0': () => -0,
  zero: () => 0,
  Infinity: () => Number.POSITIVE_INFINITY,
};

const SURFACE_OP_VALUES: ValueTable = {
  append: () => 'append',
  "'Append'": () => 'Append',
  "'replace'": () => 'replace',
  'empty object': () => ({}),
  "{op:'replace'} only": () => ({ op: 'replace' }),
  'start as string': (ctx) => ({
    op: 'replace',
    start: String(earlierOf(ctx)),
    end: earlierOf(ctx),
  }),
  'negative start': (ctx) => ({ op: 'replace', start: -1, end: earlierOf(ctx) }),
  'fractional start': (ctx) => ({ op: 'replace', start: 0.5, end: earlierOf(ctx) }),
  "{op:'append'}": () => ({ op: 'append' }),
  'extra key': ({ event }) => ({
    ...(isRecord(event.surfaceOp) ? event.surfaceOp : { op: 'replace', start: 0, end: 0 }),
    why: 'x',
  }),
  "['append']": () => ['append'],
  null: () => null,
  zero: () => 0,
  'own seq': ({ seq }) => ({ op: 'replace', start: seq, end: seq }),
  'later seq': (ctx) => ({ op: 'replace', start: earlierOf(ctx), end: ctx.seq + 3 }),
  'earlier pair': (ctx) => ({
    op: 'replace',
    start: Math.floor(earlierOf(ctx) / 2),
    end: earlierOf(ctx),
  }),
  'swapped endpoints': ({ event }) => {
    const op = event.surfaceOp;
    return isRecord(op) ? { op: 'replace', start: op.end, end: op.start } : op;
  },
  'null-prototype replace': (ctx) =>
    Object.assign(Object.create(null), {
      op: 'replace',
      start: earlierOf(ctx),
      end: earlierOf(ctx),
    }),
  'class instance replace': (ctx) => new ReplaceOpClass(earlierOf(ctx), earlierOf(ctx)),
};

const SOURCES_VALUES: ValueTable = {
  "['1']": () => ['1'],
  '[-1]': () => [-1],
  '[own seq]': ({ seq }) => [seq],
  '[later seq]': ({ seq }) => [seq + 10],
  hole: () => sparse(2, 1, 0),
  duplicate: (ctx) => [...sourcesOf(ctx), earlierOf(ctx), earlierOf(ctx)],
  "'x'": () => 'x',
  'empty object': () => ({}),
  '[1.5]': () => [1.5],
  '[NaN]': () => [Number.NaN],
  '[]': () => [],
  null: () => null,
  'drop one': (ctx) => sourcesOf(ctx).slice(1),
  'add earlier': (ctx) => [...sourcesOf(ctx), earlierOf(ctx)],
  'huge sparse': () => sparse(2 ** 32 - 1, 0, 0),
  '[-0]': () => [-0],
  reversed: (ctx) => sourcesOf(ctx).reverse(),
};

type EnvelopeField = 'seq' | 'time' | 'surfaceOp' | 'sourceEventSeqs';

const FIELD_VALUES: Readonly<Record<EnvelopeField, ValueTable>> = {
  seq: SEQ_VALUES,
  time: TIME_VALUES,
  surfaceOp: SURFACE_OP_VALUES,
  sourceEventSeqs: SOURCES_VALUES,
};

const TYPE_POOL: readonly unknown[] = [
  '',
  'User/Message',
  'user',
  'a/b',
  'a//b',
  '/a',
  'a/',
  `${'x'.repeat(300)}/y`,
  'user/message',
  'context/message',
  'assistant/message',
  'tool/result',
  'assistant/chunk',
  'app/__proto__',
  '__proto__/x',
  123,
  null,
];

const MESSAGE_CORRUPTIONS = [
  'role',
  'content not array',
  'unknown block type',
  'two tool-result blocks',
  'empty id',
  'missing id',
  'missing source',
  'empty source kind',
  'image with data and url',
  'non-string arguments',
  'assistant source kind user',
  'missing finishReason',
  'interrupted false',
  'usage array',
  'negative turn',
  'error code number',
  'text not string',
] as const;

export type Mutation =
  | { readonly kind: 'drop' | 'duplicate' | 'truncate'; readonly at: number }
  | { readonly kind: 'swap' | 'shareData'; readonly at: number; readonly other: number }
  | {
      readonly kind: 'setField';
      readonly at: number;
      readonly field: EnvelopeField;
      readonly label: string;
    }
  | { readonly kind: 'setType'; readonly at: number; readonly type: unknown }
  | { readonly kind: 'setData'; readonly at: number; readonly value: OddOrJson }
  | { readonly kind: 'deleteField'; readonly at: number; readonly field: Field }
  | {
      readonly kind: 'addKey';
      readonly at: number;
      readonly key: string;
      readonly value: OddOrJson;
    }
  | {
      readonly kind: 'deepSet';
      readonly at: number;
      readonly path: readonly number[];
      readonly value: OddOrJson | 'delete';
    }
  | { readonly kind: 'corruptMessage'; readonly at: number; readonly how: string }
  | { readonly kind: 'replaceEvent'; readonly at: number; readonly how: string };

type OddOrJson = { readonly odd: string } | { readonly json: JsonValue };

const oddOrJsonArb: fc.Arbitrary<OddOrJson> = fc.oneof(
  { arbitrary: fc.constantFrom(...ODD_LABELS).map((odd) => ({ odd })), weight: 3 },
  {
    arbitrary: fc.jsonValue({ maxDepth: 2 }).map((json) => ({ json: json as JsonValue })),
    weight: 1,
  },
);

/**
 * An event position: even values index the whole log, odd values index the events that carry a
 * surfaceOp, so mutations land on surface events (where most rules live) about half the time.
 */
const at = fc.nat(2000);

function resolveIndex(events: readonly unknown[], position: number): number {
  const onSurface = events.flatMap((e, i) => (isRecord(e) && e.surfaceOp !== undefined ? [i] : []));
  const pool = position % 2 === 1 && onSurface.length > 0 ? onSurface : undefined;
  const k = Math.floor(position / 2);
  return pool === undefined ? k % events.length : (pool[k % pool.length] as number);
}
const mutationArb: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ kind: fc.constantFrom('drop', 'duplicate', 'truncate'), at }),
  fc.record({ kind: fc.constantFrom('swap', 'shareData'), at, other: at }),
  fc.constantFrom<EnvelopeField>('seq', 'time', 'surfaceOp', 'sourceEventSeqs').chain((field) =>
    fc.record({
      kind: fc.constant('setField' as const),
      at,
      field: fc.constant(field),
      label: fc.constantFrom(...Object.keys(FIELD_VALUES[field])),
    }),
  ),
  fc.record({
    kind: fc.constant('setType' as const),
    at,
    type: fc.oneof(
      fc.constantFrom(...TYPE_POOL),
      fc.string({ maxLength: 12 }),
      fc.stringMatching(/^[a-z0-9]{1,4}(\/[a-z0-9._-]{1,4}){1,2}$/),
    ),
  }),
  fc.record({ kind: fc.constant('setData' as const), at, value: oddOrJsonArb }),
  fc.record({ kind: fc.constant('deleteField' as const), at, field: fc.constantFrom(...FIELDS) }),
  fc.record({
    kind: fc.constant('addKey' as const),
    at,
    key: fc.constantFrom(
      'extra',
      'surfaceop',
      'Seq',
      '__proto__',
      'constructor',
      'toString',
      'ignorable',
    ),
    value: oddOrJsonArb,
  }),
  fc.record({
    kind: fc.constant('deepSet' as const),
    at,
    path: fc.array(fc.nat(50), { maxLength: 6 }),
    value: fc.oneof(oddOrJsonArb, fc.constant('delete' as const)),
  }),
  fc.record({
    kind: fc.constant('corruptMessage' as const),
    at,
    how: fc.constantFrom(...MESSAGE_CORRUPTIONS),
  }),
  fc.record({
    kind: fc.constant('replaceEvent' as const),
    at,
    how: fc.constantFrom(
      'null',
      'number',
      'string',
      'array',
      'class instance',
      'null prototype',
      'inherited fields',
      'frozen copy',
    ),
  }),
);

export type Mutable = Record<string, unknown>;

export function isRecord(value: unknown): value is Mutable {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function oddValue(value: OddOrJson): unknown {
  if ('json' in value) return structuredClone(value.json);
  const make = ODD_VALUES[value.odd];
  if (make === undefined) throw new Error(`unknown odd value ${value.odd}`);
  return make();
}

/** Sets `key` as an own property, also for `__proto__`. */
function setOwn(target: Mutable, key: string, value: unknown): void {
  Object.defineProperty(target, key, {
    value,
    enumerable: true,
    writable: true,
    configurable: true,
  });
}

/**
 * The event at `index` as an object the mutation may edit: a frozen (live) event is copied and
 * frozen data is cloned. Frozen values in this file are always valid JSON, so JSON clones them.
 */
function editable(events: unknown[], index: number): Mutable | undefined {
  const found = events[index];
  if (!isRecord(found)) return undefined;
  const event = Object.isFrozen(found) ? { ...found } : found;
  events[index] = event;
  const data = event.data;
  if (typeof data === 'object' && data !== null && Object.isFrozen(data)) {
    event.data = JSON.parse(JSON.stringify(data));
  }
  return event;
}

function fieldValue(field: EnvelopeField, label: string, ctx: FieldContext): unknown {
  const make = FIELD_VALUES[field][label];
  if (make === undefined) throw new Error(`no value ${label} for ${field}`);
  return make(ctx);
}

/** Walks `path` into `data` and sets or deletes one member of the container it ends in. */
function deepSet(data: unknown, path: readonly number[], value: OddOrJson | 'delete'): void {
  let container: unknown = data;
  for (const step of path.slice(0, -1)) {
    const next = childAt(container, step);
    if (typeof next !== 'object' || next === null) break;
    container = next;
  }
  const last = path[path.length - 1] ?? 0;
  if (typeof container !== 'object' || container === null || Object.isFrozen(container)) return;
  // An odd value set by an earlier mutation may be a typed array, whose elements cannot be
  // deleted or redefined: it is left as it is (the seed is already invalid through it).
  if (ArrayBuffer.isView(container)) return;
  if (Array.isArray(container)) {
    const index = last % (container.length + 1);
    if (value === 'delete') container.splice(index, 1);
    else container[index] = oddValue(value);
  } else if (isRecord(container)) {
    const keys = Object.keys(container);
    const key = last % 5 === 4 ? '__proto__' : (keys[last % Math.max(1, keys.length)] ?? 'k');
    if (value === 'delete') delete container[key];
    else setOwn(container, key, oddValue(value));
  }
}

function childAt(container: unknown, step: number): unknown {
  if (Array.isArray(container)) return container[step % Math.max(1, container.length)];
  if (isRecord(container)) {
    const keys = Object.keys(container);
    const key = keys[step % Math.max(1, keys.length)];
    return key === undefined ? undefined : container[key];
  }
  return undefined;
}

/** Breaks the message of a surface event (or a data field next to it) in one way. */
function corruptMessage(event: Mutable, how: string): void {
  const data = event.data;
  if (!isRecord(data)) return;
  const message = isRecord(data.message) ? data.message : data;
  const content = Array.isArray(message.content) ? message.content : [];
  const block = isRecord(content[0]) ? content[0] : {};
  if ([data, message, content, block].some((part) => Object.isFrozen(part))) return;
  switch (how) {
    case 'role':
      message.role = message.role === 'user' ? 'assistant' : 'user';
      break;
    case 'content not array':
      message.content = 'text';
      break;
    case 'unknown block type':
      content.push({ type: 'video', url: 'x' });
      break;
    case 'two tool-result blocks':
      content.push({ ...block });
      break;
    case 'empty id':
      message.id = '';
      break;
    case 'missing id':
      delete message.id;
      break;
    case 'missing source':
      delete message.source;
      break;
    case 'empty source kind':
      message.source = { kind: '' };
      break;
    case 'image with data and url':
      content.push({ type: 'image', mediaType: 'image/png', data: 'AA==', url: 'https://x' });
      break;
    case 'non-string arguments':
      content.push({ type: 'tool-call', id: 'z', name: 'z', arguments: { a: 1 } });
      break;
    case 'assistant source kind user':
      message.source = { kind: 'user', provider: 'p', model: 'm' };
      break;
    case 'missing finishReason':
      delete data.finishReason;
      break;
    case 'interrupted false':
      data.interrupted = false;
      break;
    case 'usage array':
      data.usage = [1, 2];
      break;
    case 'negative turn':
      data.turn = -1;
      break;
    case 'error code number':
      data.error = { code: 1, message: 'x' };
      break;
    default:
      block.text = 42;
      break;
  }
}

function replacement(event: unknown, how: string): unknown {
  const fields = isRecord(event) ? { ...event } : {};
  switch (how) {
    case 'null':
      return null;
    case 'number':
      return 42;
    case 'string':
      return '{"seq":0}';
    case 'array':
      return Object.values(fields);
    case 'class instance':
      return Object.assign(new Widget(), fields);
    case 'null prototype':
      return Object.assign(Object.create(null), fields);
    case 'inherited fields':
      return Object.create(fields);
    default:
      return Object.freeze(fields);
  }
}

function applyMutation(events: unknown[], mutation: Mutation): void {
  if (events.length === 0) return;
  const i = resolveIndex(events, mutation.at);
  switch (mutation.kind) {
    case 'drop':
      events.splice(i, 1);
      return;
    case 'duplicate':
      events.splice(i + 1, 0, duplicateOf(events[i]));
      return;
    case 'truncate':
      events.length = i;
      return;
    case 'swap': {
      const j = resolveIndex(events, mutation.other);
      [events[i], events[j]] = [events[j], events[i]];
      return;
    }
    case 'replaceEvent':
      events[i] = replacement(events[i], mutation.how);
      return;
    default:
      break;
  }
  const event = editable(events, i);
  if (event === undefined) return;
  switch (mutation.kind) {
    case 'shareData': {
      const other = editable(events, resolveIndex(events, mutation.other));
      if (other !== undefined) other.data = event.data;
      return;
    }
    case 'setField':
      setOwn(event, mutation.field, fieldValue(mutation.field, mutation.label, { seq: i, event }));
      return;
    case 'setType':
      event.type = mutation.type;
      return;
    case 'setData':
      event.data = oddValue(mutation.value);
      return;
    case 'deleteField':
      delete event[mutation.field];
      return;
    case 'addKey':
      setOwn(event, mutation.key, oddValue(mutation.value));
      return;
    case 'deepSet':
      deepSet(event.data, mutation.path, mutation.value);
      return;
    case 'corruptMessage':
      corruptMessage(event, mutation.how);
      return;
  }
}

/** A duplicate of an event: a shallow copy (sharing its data), or the frozen event itself. */
function duplicateOf(value: unknown): unknown {
  return isRecord(value) && !Object.isFrozen(value) ? { ...value } : value;
}

export interface FuzzCase {
  readonly golden: GoldenName;
  /** Start from the session's own frozen events instead of their JSON. */
  readonly live: boolean;
  readonly mutations: readonly Mutation[];
}

export const caseArb: fc.Arbitrary<FuzzCase> = fc.record({
  golden: fc.constantFrom<GoldenName>('agent', 'nested', 'tiny', 'empty'),
  live: fc.boolean(),
  mutations: fc.array(mutationArb, { minLength: 1, maxLength: 4 }),
});

/** A fresh copy of the mutated log (mutations are deterministic, so every copy is the same). */
export function buildSeed(fuzz: FuzzCase): unknown[] {
  const log = GOLDENS[fuzz.golden];
  const events: unknown[] = fuzz.live ? [...log.live] : JSON.parse(log.json);
  for (const mutation of fuzz.mutations) applyMutation(events, mutation);
  return events;
}
