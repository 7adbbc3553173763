/**
 * The naive reference model of the session surface that surface-model.property.test.ts checks a
 * real `Session` against: it keeps the accepted events, a map seq -> derived message and a
 * replace counter, rebuilds its surface from scratch at every step by replaying the accepted
 * surface ops with `splice`, and decides accept/reject on its own.
 */
import { isDeepStrictEqual } from 'node:util';
import type { JsonObject, JsonValue, SessionValidationCode } from '../../src/core/index.js';

/** The third argument of `append`, deliberately loose so invalid intents can be expressed. */
export interface Intent {
  readonly surfaceOp?: unknown;
  readonly sourceEventSeqs?: unknown;
}

/** One call of `session.append`, fully resolved against the current state. */
export interface Attempt {
  readonly type: string;
  readonly data: JsonObject;
  readonly intent: Intent | undefined;
}

export type Decision =
  | { readonly ok: true; readonly shadowed: readonly number[] | undefined }
  | { readonly ok: false; readonly code: SessionValidationCode };

interface ModelEvent {
  readonly seq: number;
  readonly type: string;
  readonly data: JsonObject;
  /** `undefined` for log-only events, `'append'`, or the positional replace endpoints. */
  readonly op: undefined | 'append' | { readonly start: number; readonly end: number };
}

interface PendingCall {
  readonly id: string;
  readonly requestSeq: number;
  callSeq: number | undefined;
}

export const SURFACE_TYPES: ReadonlySet<string> = new Set([
  'user/message',
  'context/message',
  'assistant/message',
  'tool/result',
]);

/**
 * The naive reference: a list of accepted events, a seq -> message map, a replace counter and a
 * surface rebuilt from scratch after every accepted event. Also tracks a little agent state
 * (turn, step, open chunks, unanswered tool calls) so the generator can build realistic events.
 */
export class ReferenceModel {
  readonly events: ModelEvent[] = [];
  readonly messageOf = new Map<number, JsonValue | null>();
  /** The expected derived messages right after each seq. */
  readonly history: (readonly JsonValue[])[] = [];
  surface: readonly number[] = [];
  generation = 0;

  turn = 1;
  step = 1;
  openChunks: number[] = [];
  pendingCalls: PendingCall[] = [];
  private nextId = 0;

  get nextSeq(): number {
    return this.events.length;
  }

  freshId(prefix: string): string {
    this.nextId++;
    return `${prefix}-${this.nextId}`;
  }

  /** Decides, with the rules read plainly, whether `attempt` is accepted. */
  decide(attempt: Attempt): Decision {
    const seq = this.nextSeq;
    const eligible = SURFACE_TYPES.has(attempt.type);
    const op = attempt.intent?.surfaceOp;
    const sources = attempt.intent?.sourceEventSeqs;
    if (op === undefined) {
      if (eligible) return { ok: false, code: 'SURFACE_OP_REQUIRED' };
    } else {
      if (!eligible) return { ok: false, code: 'SURFACE_OP_FORBIDDEN' };
      if (op !== 'append' && !isWellFormedReplace(op)) {
        return { ok: false, code: 'INVALID_SURFACE_OP' };
      }
    }
    const provenance = checkProvenance(attempt.type, seq, sources);
    if (provenance !== undefined) return { ok: false, code: provenance };
    if (op === undefined || op === 'append') return { ok: true, shadowed: undefined };

    const { start, end } = op as { start: number; end: number };
    const from = this.surface.indexOf(start);
    const to = this.surface.indexOf(end);
    if (from === -1 || to === -1) return { ok: false, code: 'REPLACE_ENDPOINT_NOT_ON_SURFACE' };
    if (from > to) return { ok: false, code: 'REPLACE_RANGE_REVERSED' };
    const shadowed = this.surface.slice(from, to + 1);
    const cited = Array.isArray(sources) ? sources : [];
    if (!shadowed.every((s) => cited.includes(s))) {
      return { ok: false, code: 'REPLACE_SOURCES_INCOMPLETE' };
    }
    if (attempt.type === 'tool/result') {
      const target = shadowed.length === 1 ? this.events[shadowed[0] ?? -1] : undefined;
      if (
        target === undefined ||
        target.type !== 'tool/result' ||
        !isDeepStrictEqual(withoutResultContent(target.data), withoutResultContent(attempt.data))
      ) {
        return { ok: false, code: 'TOOL_RESULT_REWRITE_INVALID' };
      }
    }
    return { ok: true, shadowed };
  }

  /** Records an accepted attempt and rebuilds the surface from scratch. */
  commit(attempt: Attempt, decision: Decision & { ok: true }): void {
    const seq = this.nextSeq;
    const op = attempt.intent?.surfaceOp;
    this.events.push({
      seq,
      type: attempt.type,
      data: attempt.data,
      op:
        op === undefined
          ? undefined
          : op === 'append'
            ? 'append'
            : (op as { start: number; end: number }),
    });
    if (op !== undefined) this.messageOf.set(seq, plainMessageOf(attempt.type, attempt.data));
    if (decision.shadowed !== undefined) this.generation++;
    this.surface = this.rebuildSurface();
    this.history.push(this.messages());
  }

  /** The messages the model should see: surface order, events that derive nothing dropped. */
  messages(): JsonValue[] {
    const out: JsonValue[] = [];
    for (const seq of this.surface) {
      const message = this.messageOf.get(seq);
      if (message !== null && message !== undefined) out.push(message);
    }
    return out;
  }

  /** Replays every accepted surface op from an empty array. */
  private rebuildSurface(): number[] {
    let surface: number[] = [];
    for (const event of this.events) {
      if (event.op === undefined) continue;
      const next = surface.slice();
      if (event.op === 'append') {
        next.push(event.seq);
      } else {
        const from = next.indexOf(event.op.start);
        const to = next.indexOf(event.op.end);
        next.splice(from, to - from + 1, event.seq);
      }
      surface = next;
    }
    return surface;
  }
}

function isWellFormedReplace(op: unknown): boolean {
  if (typeof op !== 'object' || op === null || Array.isArray(op)) return false;
  const record = op as Record<string, unknown>;
  const keys = Object.keys(record).sort();
  return (
    keys.join(',') === 'end,op,start' &&
    record.op === 'replace' &&
    isSeqLike(record.start) &&
    isSeqLike(record.end)
  );
}

function isSeqLike(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

/** DESIGN §4 rule 5, read plainly. */
function checkProvenance(
  type: string,
  seq: number,
  sources: unknown,
): SessionValidationCode | undefined {
  if (sources === undefined) return undefined;
  if (!Array.isArray(sources)) return 'INVALID_SOURCE_EVENT_SEQS';
  if (sources.length === 0) {
    return type === 'assistant/message' ? undefined : 'EMPTY_SOURCE_EVENT_SEQS';
  }
  const seen: number[] = [];
  for (const source of sources) {
    if (!isSeqLike(source) || source >= seq || seen.includes(source)) {
      return 'INVALID_SOURCE_EVENT_SEQS';
    }
    seen.push(source);
  }
  return undefined;
}

/** A tool/result's data with the result content blanked out (rule 6 compares the rest). */
function withoutResultContent(data: JsonObject): JsonValue {
  const copy = JSON.parse(JSON.stringify(data)) as {
    message?: { content?: { content?: unknown }[] };
  };
  const block = copy.message?.content?.[0];
  if (block !== undefined) block.content = null;
  return copy as JsonValue;
}

/** What an event on the surface contributes, computed from the data the test built. */
function plainMessageOf(type: string, data: JsonObject): JsonValue | null {
  if (type === 'user/message' || type === 'context/message') return data;
  const message = data.message as JsonObject;
  if (type === 'assistant/message') {
    return (message.content as readonly JsonValue[]).length === 0 ? null : message;
  }
  return message;
}
