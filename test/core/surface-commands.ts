/**
 * The commands surface-model.property.test.ts runs: generated blind by fast-check (valid and
 * invalid appends and replaces, weighted towards interesting cases), then resolved into an
 * `Attempt` against the reference model's state when they run.
 */
import fc from 'fast-check';
import type { JsonObject, JsonValue } from '../../src/core/index.js';
import type { Attempt, ReferenceModel } from './surface-reference-model.js';

const VALID_KINDS = [
  'user',
  'context',
  'assistant',
  'chunk',
  'log',
  'toolCall',
  'toolResult',
  'replace',
  'nestedReplace',
  'rewrite',
] as const;
const INVALID_KINDS = [
  'endpointOff',
  'reversed',
  'sourcesIncomplete',
  'badProvenance',
  'emptyProvenance',
  'rewriteField',
  'rewriteSpan',
  'rewriteTarget',
  'surfaceOpMissing',
  'surfaceOpForbidden',
  'surfaceOpMalformed',
] as const;
type CommandKind = (typeof VALID_KINDS)[number] | (typeof INVALID_KINDS)[number];

export interface Command {
  readonly kind: CommandKind;
  /** Free random numbers, mapped onto positions and variants when the command runs. */
  readonly a: number;
  readonly b: number;
  readonly c: number;
  readonly flag: boolean;
  readonly text: string;
  /** Picks the earlier seq whose `messagesAt` is checked after this step. */
  readonly probe: number;
}

const WEIGHTS: Readonly<Record<CommandKind, number>> = {
  user: 10,
  context: 3,
  assistant: 9,
  chunk: 6,
  log: 6,
  toolCall: 4,
  toolResult: 7,
  replace: 7,
  nestedReplace: 4,
  rewrite: 5,
  endpointOff: 2,
  reversed: 2,
  sourcesIncomplete: 2,
  badProvenance: 2,
  emptyProvenance: 1,
  rewriteField: 2,
  rewriteSpan: 1,
  rewriteTarget: 1,
  surfaceOpMissing: 1,
  surfaceOpForbidden: 1,
  surfaceOpMalformed: 1,
};

export const commandArb: fc.Arbitrary<Command> = fc.record({
  kind: fc.oneof(
    ...[...VALID_KINDS, ...INVALID_KINDS].map((kind) => ({
      arbitrary: fc.constant(kind),
      weight: WEIGHTS[kind],
    })),
  ),
  a: fc.nat(1000),
  b: fc.nat(1000),
  c: fc.nat(1000),
  flag: fc.boolean(),
  text: fc.string({ maxLength: 6 }),
  probe: fc.nat(1000),
});

function pick<T>(items: readonly T[], n: number): T | undefined {
  return items.length === 0 ? undefined : items[n % items.length];
}

function userData(model: ReferenceModel, text: string, kind = 'user'): JsonObject {
  return {
    id: model.freshId('u'),
    role: 'user',
    content: [{ type: 'text', text }],
    source: { kind },
  };
}

function assistantData(model: ReferenceModel, content: JsonValue[]): JsonObject {
  return {
    turn: model.turn,
    step: model.step,
    message: {
      id: model.freshId('a'),
      role: 'assistant',
      content,
      source: { kind: 'model', provider: 'test', model: 'scripted' },
    },
    finishReason: content.some((block) => (block as JsonObject).type === 'tool-call')
      ? 'tool-calls'
      : 'stop',
  };
}

function toolResultData(model: ReferenceModel, callId: string, text: string): JsonObject {
  return {
    turn: model.turn,
    step: model.step,
    message: {
      id: model.freshId('r'),
      role: 'tool',
      content: [{ type: 'tool-result', toolCallId: callId, content: [{ type: 'text', text }] }],
    },
  };
}

/** The tool/result data `data` with its result content replaced (a valid prune). */
function withResultContent(data: JsonObject, content: JsonValue): JsonObject {
  const message = data.message as JsonObject;
  const block = (message.content as readonly JsonObject[])[0] as JsonObject;
  return { ...data, message: { ...message, content: [{ ...block, content }] } };
}

/** A surface range picked by position: `start` may well be numerically above `end`. */
interface Range {
  readonly start: number;
  readonly end: number;
  readonly shadowed: readonly number[];
}

function rangeAt(surface: readonly number[], i: number, j: number): Range | undefined {
  if (surface.length === 0) return undefined;
  const a = i % surface.length;
  const b = j % surface.length;
  const lo = Math.min(a, b);
  const hi = Math.max(a, b);
  const shadowed = surface.slice(lo, hi + 1);
  return { start: shadowed[0] as number, end: shadowed[shadowed.length - 1] as number, shadowed };
}

/** Cites every shadowed seq, in a rotated order, sometimes with an extra unshadowed earlier seq. */
function citing(model: ReferenceModel, range: Range, cmd: Command): number[] {
  const rotation = cmd.c % range.shadowed.length;
  const sources = [...range.shadowed.slice(rotation), ...range.shadowed.slice(0, rotation)];
  if (cmd.flag) {
    const extra = pick(
      model.events.map((e) => e.seq).filter((s) => !range.shadowed.includes(s)),
      cmd.b,
    );
    if (extra !== undefined) sources.push(extra);
  }
  return sources;
}

function replaceOp(range: { start: number; end: number }): {
  op: 'replace';
  start: number;
  end: number;
} {
  return { op: 'replace', start: range.start, end: range.end };
}

function summaryAttempt(model: ReferenceModel, range: Range, cmd: Command): Attempt {
  const intent = { surfaceOp: replaceOp(range), sourceEventSeqs: citing(model, range, cmd) };
  const text = `summary of ${range.shadowed.length} entries ${cmd.text}`;
  switch (cmd.a % 4) {
    case 0:
      return { type: 'context/message', data: userData(model, text, 'context'), intent };
    case 1: {
      const content: JsonValue[] = cmd.flag ? [] : [{ type: 'text', text }];
      return { type: 'assistant/message', data: assistantData(model, content), intent };
    }
    default:
      return { type: 'user/message', data: userData(model, text, 'compaction'), intent };
  }
}

function surfaceToolResults(model: ReferenceModel): number[] {
  return model.surface.filter((seq) => model.events[seq]?.type === 'tool/result');
}

function surfaceReplacements(model: ReferenceModel): number[] {
  return model.surface.filter((seq) => typeof model.events[seq]?.op === 'object');
}

function resolveValid(model: ReferenceModel, cmd: Command): Attempt {
  const seq = model.nextSeq;
  switch (cmd.kind) {
    case 'context':
      return {
        type: 'context/message',
        data: userData(model, `context ${cmd.text}`, 'context'),
        intent: { surfaceOp: 'append' },
      };
    case 'assistant': {
      const calls = cmd.a % 4;
      const content: JsonValue[] = [];
      if (cmd.b % 5 !== 0) {
        if (calls === 0 || cmd.flag) content.push({ type: 'text', text: `reply ${cmd.text}` });
        for (let i = 0; i < calls; i++) {
          const id = model.freshId('call');
          content.push({ type: 'tool-call', id, name: 'lookup', arguments: `{"q":${i}}` });
          model.pendingCalls.push({ id, requestSeq: seq, callSeq: undefined });
        }
      }
      const chunks = model.openChunks;
      model.openChunks = [];
      const sources = cmd.c % 3 === 0 ? chunks : cmd.c % 3 === 1 ? [] : undefined;
      return {
        type: 'assistant/message',
        data: assistantData(model, content),
        intent: {
          surfaceOp: 'append',
          ...(sources === undefined ? {} : { sourceEventSeqs: sources }),
        },
      };
    }
    case 'chunk':
      model.openChunks.push(seq);
      return {
        type: 'assistant/chunk',
        data: { turn: model.turn, step: model.step, chunk: { type: 'text-delta', text: cmd.text } },
        intent: undefined,
      };
    case 'log':
      return logAttempt(model, cmd);
    case 'toolCall': {
      const call = pick(
        model.pendingCalls.filter((p) => p.callSeq === undefined),
        cmd.a,
      );
      if (call === undefined) return logAttempt(model, cmd);
      call.callSeq = seq;
      return {
        type: 'tool/call',
        data: {
          turn: model.turn,
          step: model.step,
          callId: call.id,
          name: 'lookup',
          arguments: '{}',
        },
        intent: { sourceEventSeqs: [call.requestSeq] },
      };
    }
    case 'toolResult': {
      const call = pick(model.pendingCalls, cmd.a);
      if (call !== undefined) model.pendingCalls = model.pendingCalls.filter((p) => p !== call);
      const callId = call?.id ?? model.freshId('orphan');
      const cite = call === undefined || !cmd.flag ? undefined : [call.callSeq ?? call.requestSeq];
      return {
        type: 'tool/result',
        data: toolResultData(model, callId, `result ${cmd.text}`),
        intent: { surfaceOp: 'append', ...(cite === undefined ? {} : { sourceEventSeqs: cite }) },
      };
    }
    case 'replace': {
      const range = rangeAt(model.surface, cmd.a, cmd.b);
      if (range !== undefined) return summaryAttempt(model, range, cmd);
      break;
    }
    case 'nestedReplace': {
      const inner = pick(surfaceReplacements(model), cmd.c);
      if (inner === undefined) return resolveValid(model, { ...cmd, kind: 'replace' });
      const position = model.surface.indexOf(inner);
      const lo = Math.max(0, position - (cmd.a % 3));
      const hi = Math.min(model.surface.length - 1, position + (cmd.b % 3));
      const range = rangeAt(model.surface, lo, hi);
      if (range !== undefined) return summaryAttempt(model, range, cmd);
      break;
    }
    case 'rewrite': {
      const target = pick(surfaceToolResults(model), cmd.a);
      const event = target === undefined ? undefined : model.events[target];
      if (event === undefined) return resolveValid(model, { ...cmd, kind: 'toolResult' });
      const pruned = [{ type: 'text', text: `[pruned ${cmd.text}]` }];
      return {
        type: 'tool/result',
        data: withResultContent(event.data, cmd.flag ? [] : pruned),
        intent: {
          surfaceOp: replaceOp({ start: event.seq, end: event.seq }),
          sourceEventSeqs: [event.seq],
        },
      };
    }
    default:
      break;
  }
  return {
    type: 'user/message',
    data: userData(model, `prompt ${cmd.text}`),
    intent: { surfaceOp: 'append' },
  };
}

function logAttempt(model: ReferenceModel, cmd: Command): Attempt {
  const seq = model.nextSeq;
  const cite = cmd.flag && seq > 0 ? { sourceEventSeqs: [cmd.b % seq] } : undefined;
  switch (cmd.a % 6) {
    case 0:
      model.turn++;
      model.step = 1;
      return { type: 'turn/start', data: { turn: model.turn }, intent: cite };
    case 1:
      return {
        type: 'turn/end',
        data: { turn: model.turn, reason: { kind: 'completed' } },
        intent: cite,
      };
    case 2:
      model.step++;
      return { type: 'step/start', data: { turn: model.turn, step: model.step }, intent: cite };
    case 3:
      return { type: 'compaction/start', data: { id: model.freshId('compaction') }, intent: cite };
    case 4:
      return { type: 'app/note', data: { note: cmd.text, n: cmd.c }, intent: cite };
    default:
      return { type: 'app/metrics/tick', data: { tick: cmd.c }, intent: cite };
  }
}

/** Builds an attempt aimed at one rule. The model still decides on its own. */
function resolveInvalid(model: ReferenceModel, cmd: Command): Attempt {
  const seq = model.nextSeq;
  const surface = model.surface;
  const range = rangeAt(surface, cmd.a, cmd.b);
  switch (cmd.kind) {
    case 'endpointOff': {
      const onSurface = new Set(surface);
      const off = [
        ...model.events.map((e) => e.seq).filter((s) => !onSurface.has(s)),
        seq,
        seq + 1 + (cmd.c % 5),
      ];
      const bad = pick(off, cmd.c) as number;
      const base = range ?? { start: bad, end: bad, shadowed: [] };
      const op = cmd.flag ? { start: bad, end: base.end } : { start: base.start, end: bad };
      return {
        type: 'user/message',
        data: userData(model, 'summary'),
        intent: {
          surfaceOp: replaceOp(op),
          ...(base.shadowed.length > 0 ? { sourceEventSeqs: [...base.shadowed] } : {}),
        },
      };
    }
    case 'reversed': {
      if (surface.length < 2) return resolveInvalid(model, { ...cmd, kind: 'endpointOff' });
      const i = cmd.a % surface.length;
      const j = (i + 1 + (cmd.b % (surface.length - 1))) % surface.length;
      const forward = rangeAt(surface, i, j) as Range;
      return {
        type: 'user/message',
        data: userData(model, 'summary'),
        intent: {
          surfaceOp: replaceOp({ start: forward.end, end: forward.start }),
          sourceEventSeqs: [...forward.shadowed],
        },
      };
    }
    case 'sourcesIncomplete': {
      if (range === undefined) return resolveInvalid(model, { ...cmd, kind: 'endpointOff' });
      const dropped = range.shadowed[cmd.c % range.shadowed.length];
      const sources = citing(model, range, cmd).filter((s) => s !== dropped);
      const attempt = summaryAttempt(model, range, cmd);
      return {
        ...attempt,
        intent: {
          surfaceOp: replaceOp(range),
          ...(sources.length > 0 ? { sourceEventSeqs: sources } : {}),
        },
      };
    }
    case 'badProvenance': {
      const bad: unknown[][] = [
        [seq],
        [seq + 1 + (cmd.b % 3)],
        withDuplicate(seq, cmd),
        [-1],
        [seq > 1 ? 0.5 : 1.5],
        [String(Math.max(0, seq - 1))],
      ];
      const sourceEventSeqs = bad[cmd.a % bad.length];
      const base = baseAttempt(model, cmd);
      return { ...base, intent: { ...base.intent, sourceEventSeqs } };
    }
    case 'emptyProvenance': {
      const base = baseAttempt(model, { ...cmd, c: cmd.c - (cmd.c % 3) + 1 });
      return { ...base, intent: { ...base.intent, sourceEventSeqs: [] } };
    }
    case 'rewriteField': {
      const target = pick(surfaceToolResults(model), cmd.a);
      const event = target === undefined ? undefined : model.events[target];
      if (event === undefined) return resolveInvalid(model, { ...cmd, kind: 'rewriteTarget' });
      const pruned = withResultContent(event.data, [{ type: 'text', text: '[pruned]' }]);
      return {
        type: 'tool/result',
        data: changeOneField(pruned, cmd.b),
        intent: {
          surfaceOp: replaceOp({ start: event.seq, end: event.seq }),
          sourceEventSeqs: [event.seq],
        },
      };
    }
    case 'rewriteSpan': {
      if (surface.length < 2) return resolveInvalid(model, { ...cmd, kind: 'rewriteTarget' });
      const i = cmd.a % (surface.length - 1);
      const span = rangeAt(surface, i, i + 1 + (cmd.b % 2)) as Range;
      const first = model.events[span.start];
      const data =
        first?.type === 'tool/result'
          ? withResultContent(first.data, [])
          : toolResultData(model, 'call-x', 'x');
      return {
        type: 'tool/result',
        data,
        intent: { surfaceOp: replaceOp(span), sourceEventSeqs: [...span.shadowed] },
      };
    }
    case 'rewriteTarget': {
      const targets = surface.filter((s) => model.events[s]?.type !== 'tool/result');
      const target = pick(targets, cmd.a) ?? pick(surface, cmd.a) ?? 0;
      return {
        type: 'tool/result',
        data: toolResultData(model, 'call-x', 'rewritten'),
        intent: { surfaceOp: replaceOp({ start: target, end: target }), sourceEventSeqs: [target] },
      };
    }
    case 'surfaceOpMissing': {
      const base = baseAttempt(model, { ...cmd, c: 0 });
      const types = ['user/message', 'context/message', 'assistant/message', 'tool/result'];
      const type = types[cmd.a % types.length] as string;
      const data =
        type === 'assistant/message'
          ? assistantData(model, [{ type: 'text', text: 'x' }])
          : type === 'tool/result'
            ? toolResultData(model, 'call-x', 'x')
            : base.data;
      const intent = cmd.flag && seq > 0 ? { sourceEventSeqs: [seq - 1] } : undefined;
      return { type, data, intent };
    }
    case 'surfaceOpForbidden': {
      const base = logAttempt(model, cmd);
      const surfaceOp = range !== undefined && cmd.flag ? replaceOp(range) : 'append';
      return { ...base, intent: { ...base.intent, surfaceOp } };
    }
    case 'surfaceOpMalformed': {
      const start = range?.start ?? 0;
      const malformed: unknown[] = [
        'prepend',
        'Append',
        null,
        ['append'],
        { op: 'append' },
        { op: 'replace', start, end: start, extra: 1 },
        { op: 'replace', start: String(start), end: start },
        { op: 'replace', start: -1, end: start },
        { op: 'replace', start: 0.5, end: start },
        { op: 'replace', start },
      ];
      return {
        type: 'user/message',
        data: userData(model, 'x'),
        intent: { surfaceOp: malformed[cmd.c % malformed.length], sourceEventSeqs: [start] },
      };
    }
    default:
      return resolveValid(model, cmd);
  }
}

/** Up to three distinct earlier seqs followed by a repeat of one of them (anywhere in the list). */
function withDuplicate(seq: number, cmd: Command): number[] {
  if (seq === 0) return [0, 0];
  const distinct = [...new Set([cmd.b % seq, cmd.c % seq, (cmd.b + cmd.c) % seq])];
  return [...distinct, distinct[cmd.a % distinct.length] as number];
}

/** A valid user append, log-only event or summary replace, to carry a faulty field. */
function baseAttempt(model: ReferenceModel, cmd: Command): Attempt {
  switch (cmd.c % 3) {
    case 0:
      return { type: 'user/message', data: userData(model, 'x'), intent: { surfaceOp: 'append' } };
    case 1: {
      const types = ['user/message', 'context/message', 'tool/result', 'app/note', 'turn/start'];
      const type = types[cmd.b % types.length] as string;
      if (type === 'tool/result') {
        return {
          type,
          data: toolResultData(model, 'call-x', 'x'),
          intent: { surfaceOp: 'append' },
        };
      }
      if (type === 'app/note' || type === 'turn/start') {
        return { type, data: { turn: model.turn }, intent: {} };
      }
      return { type, data: userData(model, 'x'), intent: { surfaceOp: 'append' } };
    }
    default: {
      const range = rangeAt(model.surface, cmd.a, cmd.b);
      if (range === undefined) return baseAttempt(model, { ...cmd, c: 0 });
      return summaryAttempt(model, range, cmd);
    }
  }
}

/** Changes exactly one field other than the result content of a tool/result's data. */
function changeOneField(data: JsonObject, variant: number): JsonObject {
  const message = data.message as JsonObject;
  const block = (message.content as readonly JsonObject[])[0] as JsonObject;
  const withBlock = (next: JsonObject): JsonObject => ({
    ...data,
    message: { ...message, content: [next] },
  });
  switch (variant % 7) {
    case 0:
      return { ...data, turn: (data.turn as number) + 1 };
    case 1:
      return { ...data, step: (data.step as number) + 1 };
    case 2:
      return { ...data, message: { ...message, id: `${String(message.id)}-changed` } };
    case 3:
      return withBlock({ ...block, toolCallId: `${String(block.toolCallId)}-changed` });
    case 4:
      return withBlock({ ...block, isError: block.isError !== true });
    case 5:
      return { ...data, error: { code: 'PRUNED', message: 'pruned' } };
    default:
      return { ...data, note: 'pruned' };
  }
}

export function resolve(model: ReferenceModel, cmd: Command): Attempt {
  return (INVALID_KINDS as readonly string[]).includes(cmd.kind)
    ? resolveInvalid(model, cmd)
    : resolveValid(model, cmd);
}
