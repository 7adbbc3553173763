/**
 * The event envelope and the core vocabulary of a session log.
 */
import type { JsonObject, JsonValue } from './json.js';
import type {
  AssistantMessage,
  ToolMessage,
  ToolResultContentBlock,
  UserMessage,
} from './messages.js';

/**
 * How a surface-eligible event entered the surface: `'append'` puts its seq at the tail;
 * `{op:'replace', start, end}` removes the inclusive range from `start` to `end` (both named by
 * seq, ordered by surface position) and puts the event's seq in its place.
 */
export type SurfaceOp = 'append' | ReplaceOp;

/** An inclusive, positional replace of the surface range `start..end`. */
export type ReplaceOp = {
  readonly op: 'replace';
  readonly start: number;
  readonly end: number;
};

/**
 * The third argument of `append` for a surface-eligible event: how it enters the surface and,
 * optionally, which earlier events it was derived from. A replace must cite every seq it shadows.
 */
export interface SurfaceIntent {
  readonly surfaceOp: SurfaceOp;
  readonly sourceEventSeqs?: readonly number[];
}

/** The optional third argument of `append` for any other event: provenance only. */
export interface ProvenanceIntent {
  readonly surfaceOp?: never;
  readonly sourceEventSeqs?: readonly number[];
}

/**
 * Token counts reported by a provider for one model call: every count the provider gave, and
 * its own usage object as it sent it (`raw`), for fields no neutral name covers.
 */
export type TokenUsage = {
  readonly inputTokens?: number;
  readonly outputTokens?: number;
  readonly totalTokens?: number;
  /** Output tokens spent on reasoning. */
  readonly reasoningTokens?: number;
  /** Output tokens of the text (output minus reasoning, when the provider says). */
  readonly textTokens?: number;
  /** Input tokens read from the provider's prompt cache. */
  readonly cachedInputTokens?: number;
  /** Input tokens written to the provider's prompt cache. */
  readonly cacheWriteTokens?: number;
  /** Input tokens that were neither read from nor written to a cache. */
  readonly noCacheTokens?: number;
  /** The provider's usage object as it reported it (not summed across steps). */
  readonly raw?: JsonObject;
};

/** Why a model call stopped, in AI SDK terms (`'stop'`, `'length'`, `'tool-calls'`, ...). */
export type FinishReason =
  | 'stop'
  | 'length'
  | 'tool-calls'
  | 'content-filter'
  | 'error'
  | 'aborted'
  | 'other'
  | 'unknown';

/**
 * A failure reported by a provider, bounded to what a reader needs, with credentials redacted.
 */
export type ProviderFailure = {
  readonly message: string;
  /** A stable class of the failure: the provider's error type (`invalid_request_error`), `NETWORK`... */
  readonly code?: string;
  /** The provider's specific error code when it sends one beside the type (`context_length_exceeded`). */
  readonly providerCode?: string;
  readonly status?: number;
  readonly requestId?: string;
};

/** Why a turn ended. `interrupted` is written only by crash repair. */
export type TurnEndReason =
  | {
      readonly kind: 'completed';
      /**
       * Present when the last step asked for tools that were not run because the model stopped
       * for a reason other than a safe finish (`content-filter`, `other`...): the turn ended
       * there.
       */
      readonly finishReason?: FinishReason;
    }
  | { readonly kind: 'aborted'; readonly cause?: string }
  | { readonly kind: 'error'; readonly error: ProviderFailure }
  | { readonly kind: 'max-tokens' }
  | { readonly kind: 'max-steps'; readonly maxSteps: number }
  | {
      /**
       * The provider refused the request as longer than the model's context window, and it
       * could not be made to fit: no `onContextOverflow` handler, a handler that freed nothing
       * (`compacted: false`), or a retry after compaction that overflowed again
       * (`compacted: true`).
       */
      readonly kind: 'context-overflow';
      readonly error: ProviderFailure;
      readonly compacted: boolean;
    }
  | { readonly kind: 'interrupted' };

/** `turn/start`: a turn (one user input and everything the agent does about it) begins. */
export type TurnStartData = {
  readonly turn: number;
  /**
   * Present on a turn that continues an unfinished earlier turn without new user input
   * (`Agent.resume()`): the number of that turn.
   */
  readonly resumes?: number;
};

/** `turn/end`: the turn is over. */
export type TurnEndData = {
  readonly turn: number;
  readonly reason: TurnEndReason;
};

/** `step/start` and `step/end`: one model call plus the tool executions it asked for. */
export type StepData = {
  readonly turn: number;
  readonly step: number;
};

/** A tool's schema as sent to the model. */
export type ToolSchema = {
  readonly name: string;
  readonly description?: string;
  readonly parameters: JsonObject;
};

/** `request/header`: the non-history part of a request, logged when it changes. */
export type RequestHeaderData = {
  readonly provider: string;
  readonly model: string;
  readonly system?: string;
  readonly tools?: readonly ToolSchema[];
  /** Call settings such as temperature or max output tokens. */
  readonly settings?: JsonObject;
  /**
   * The rates that priced the calls made under this header, recorded by the writer from its
   * price table (`{table, currency, effectiveFrom, rates}`, see `palimpsest/agent`'s
   * `RecordedPrice`), so the session prices as it was billed whatever later tables say.
   */
  readonly price?: JsonObject;
};

/** One raw stream part (`text-delta`, `reasoning-delta`, `tool-input-delta`, `finish`, ...). */
export interface StreamChunk {
  readonly type: string;
  readonly [key: string]: JsonValue;
}

/** `assistant/chunk`: one stream part, kept forever so a message can be traced to its stream. */
export type AssistantChunkData = {
  readonly turn: number;
  readonly step: number;
  /**
   * The attempt of the step's model call this part belongs to, when it is not the first (absent
   * means 1): after a `request/retry`, the new attempt's parts say so themselves.
   */
  readonly attempt?: number;
  readonly chunk: StreamChunk;
};

/** `assistant/message`: the assembled model output of one step. */
export type AssistantMessageData = {
  readonly turn: number;
  readonly step: number;
  readonly message: AssistantMessage;
  readonly finishReason: FinishReason;
  /** The provider's own finish reason (`end_turn`, `max_tokens`, `content_filter`...). */
  readonly rawFinishReason?: string;
  readonly usage?: TokenUsage;
  /** Present when the stream was cancelled; the message holds the text streamed until then. */
  readonly interrupted?: true;
  readonly providerMetadata?: JsonObject;
  /**
   * The digest of the request the call received (`sha256:` and 64 hex digits, over its canonical
   * form: provider, model, system prompt, tools, settings, messages), where the writer recorded
   * it: palimpsest's loop and the AI SDK middleware do; imported sessions do not.
   */
  readonly requestDigest?: string;
};

/** `tool/call`: a tool execution started. */
/**
 * The session a call's work ran in: a subagent's own session, linked both ways. The parent's
 * `tool/call` and `tool/result` name the child here; the child's header names the parent in
 * `metadata.subagentOf` (`{session, toolCallId?, agentId?}`).
 */
export type ChildSessionLink = {
  /** The child session's id in the same store. */
  readonly session: string;
  /** The harness's own id for the agent, where it has one. */
  readonly agentId?: string;
};

export type ToolCallData = {
  readonly turn: number;
  readonly step: number;
  readonly callId: string;
  readonly name: string;
  /** The child session the call ran in (a subagent), when it ran in one. */
  readonly child?: ChildSessionLink;
  /**
   * The raw JSON arguments the tool runs with: the model's, unless a `beforeToolCall` hook
   * changed them (then `decision.originalArguments` holds the model's).
   */
  readonly arguments: string;
  /** What the writer's `beforeToolCall` hook decided, when it has one. */
  readonly decision?: ToolCallDecisionRecord;
};

/**
 * A `beforeToolCall` decision as logged: on the `tool/call` of a call that runs (`allow`,
 * `modify`), on the `tool/result` of a denied one (`deny`, with no `tool/call`: nothing started).
 */
export type ToolCallDecisionRecord =
  | { readonly action: 'allow' }
  | { readonly action: 'modify'; readonly originalArguments: string }
  | { readonly action: 'deny'; readonly reason: string };

/** The result a tool produced, kept on a `tool/result` whose content an `afterToolCall` hook replaced. */
export type ReplacedToolResult = {
  readonly by: 'afterToolCall';
  readonly content: readonly ToolResultContentBlock[];
  readonly error?: ToolError;
};

/**
 * What a thrown error was, for the developer: bounded copies of its name, message, stack and
 * cause chain (the model reads `message` only).
 */
export type ErrorDetails = {
  readonly name: string;
  readonly message: string;
  readonly stack?: string;
  /** The error's own `code` property, when it is a string (`ENOENT`...). */
  readonly code?: string;
  readonly cause?: ErrorDetails;
};

/** A tool failure, in a form the model and the reader can act on. */
export type ToolError = {
  readonly code: string;
  readonly message: string;
  /** When the tool threw: what it threw, for the developer. */
  readonly exception?: ErrorDetails;
};

/** `tool/result`: the result of one tool call. */
export type ToolResultData = {
  readonly turn: number;
  readonly step: number;
  readonly message: ToolMessage;
  readonly error?: ToolError;
  /** A denial by the writer's `beforeToolCall` hook (`error.code` is `TOOL_DENIED`). */
  readonly decision?: ToolCallDecisionRecord;
  /** What the tool returned, when an `afterToolCall` hook replaced it with `message`'s content. */
  readonly replaced?: ReplacedToolResult;
  /** The child session whose final answer this result carries (a subagent), when there is one. */
  readonly child?: ChildSessionLink;
};

/**
 * `request/retry`: attempt `attempt` (1-based) of a step's model call failed with a retryable
 * `error`; the writer waits `delayMs` and calls again. Cites the failed attempt's chunks.
 */
export type RequestRetryData = {
  readonly turn: number;
  readonly step: number;
  readonly attempt: number;
  readonly delayMs: number;
  /** The wait the provider asked for (`retry-after`, `retry-after-ms`), when it did. */
  readonly retryAfterMs?: number;
  readonly error: ProviderFailure;
};

/**
 * `request/overflow`: the step's model call was refused as longer than the context window
 * (`error`, e.g. `context_length_exceeded`). Appended after the failed step's `step/end`, citing
 * its `assistant/message`, before the loop asks its overflow handler to make room (a compaction
 * follows); the next step is the retry.
 */
export type RequestOverflowData = {
  readonly turn: number;
  readonly step: number;
  readonly error: ProviderFailure;
};

/**
 * `queue/steer` and `queue/follow-up`: a user message queued while a turn runs, recorded the
 * moment it is queued so a crash never loses it. It is not on the surface: it enters it once, as
 * a `user/message` with the same `id` and content, `source {kind: 'steer' | 'follow-up', queued:
 * seq}`, citing the queue event in `sourceEventSeqs`. A queue event no `user/message` cites is
 * pending.
 */
export type QueuedMessageData = UserMessage;

/** `compaction/start` and `compaction/end`: the bracket around a compaction or a prune. */
export interface CompactionBracketData {
  readonly id: string;
  readonly [key: string]: JsonValue;
}

/**
 * One event a `log/redaction` erased: its seq and the digests of the event before and after the
 * erasure (each the event's leaf digest in the hash chain, see `docs/governance.md`), so the
 * chain stays verifiable once the erased bytes are gone.
 */
export type ErasedEvent = {
  readonly seq: number;
  /** The leaf digest of the event as it was (`sha256:` and base64url). */
  readonly before: string;
  /** The leaf digest of the event as it is now, with its content replaced by placeholders. */
  readonly after: string;
};

/**
 * `log/redaction`: content erased from earlier events. The stores remove the erased bytes and
 * keep each event in place with its content replaced by `[redacted]` placeholders; this event
 * says which, why, and what the chain needs to stay verifiable. It cites the erased seqs in
 * `sourceEventSeqs`. Never on the surface.
 */
export type RedactionData = {
  /** Why: a ticket, a policy, a request id. Keep personal data out of it: it is not erased. */
  readonly reason: string;
  /** How the events were chosen: named by seq, found by a pattern, or tagged with a subject. */
  readonly selector: 'seqs' | 'match' | 'subject';
  /** The subject id, for an erasure by subject. */
  readonly subject?: string;
  readonly erased: readonly ErasedEvent[];
};

/**
 * `log/checkpoint`: the head of the session's hash chain over every event before this one, so a
 * later change to any of them shows (see `docs/governance.md`). Never on the surface.
 */
export type CheckpointData = {
  /** The session that computed the head (a fork keeps its parent's checkpoints in its seed). */
  readonly session: string;
  /** How many events the head covers: seqs `0 .. count - 1`, so always this event's own seq. */
  readonly count: number;
  /** The chain head (`sha256:` and base64url). */
  readonly head: string;
  /** The first seq whose short leaf digest {@link CheckpointData.leaves} holds. */
  readonly from: number;
  /** Eight base64url characters of each leaf digest from `from` to `count - 1`, run together. */
  readonly leaves: string;
  /** An Ed25519 signature over the session, count and head, when the writer had a key. */
  readonly signature?: {
    /** The first 16 hex digits of the SHA-256 of the raw public key. */
    readonly key: string;
    /** The signature, base64url. */
    readonly value: string;
  };
};

/**
 * The \`data\` of an elided chunk (see \`elided.ts\`): \`{elided: {bytes}}\`, nothing else. It widens
 * the chunk type of {@link SessionEventMap} because a session loaded with elided chunks holds
 * such stubs; appends never take one (see {@link AppendData}).
 */
export type ElidedChunkData = {
  readonly elided: {
    /** The UTF-8 length of the chunk's \`data\` as JSON text, as stored. */
    readonly bytes: number;
  };
};

/**
 * The data shape of each core event type. Applications may add their own types by declaration
 * merging; types that are not listed here are accepted with any JSON data.
 */
export interface SessionEventMap {
  'turn/start': TurnStartData;
  'turn/end': TurnEndData;
  'step/start': StepData;
  'step/end': StepData;
  'request/header': RequestHeaderData;
  'request/retry': RequestRetryData;
  'request/overflow': RequestOverflowData;
  'queue/steer': QueuedMessageData;
  'queue/follow-up': QueuedMessageData;
  'user/message': UserMessage;
  'context/message': UserMessage;
  /** A stream part; in a session loaded with elided chunks, possibly a stub (`isElidedChunk`). */
  'assistant/chunk': AssistantChunkData | ElidedChunkData;
  'assistant/message': AssistantMessageData;
  'tool/call': ToolCallData;
  'tool/result': ToolResultData;
  'compaction/start': CompactionBracketData;
  'compaction/end': CompactionBracketData;
  'log/redaction': RedactionData;
  'log/checkpoint': CheckpointData;
}

/** A type of the core vocabulary. */
export type KnownEventType = keyof SessionEventMap;

/** The four types whose events produce a message and therefore live on the surface. */
export type SurfaceEventType =
  | 'user/message'
  | 'context/message'
  | 'assistant/message'
  | 'tool/result';

/** Known types that never enter the surface. */
export type LogEventType = Exclude<KnownEventType, SurfaceEventType>;

/** The data of an event of type `T` (any JSON for types outside the core vocabulary). */
export type EventData<T extends string> = T extends KnownEventType ? SessionEventMap[T] : JsonValue;

/**
 * The data an append of type `T` takes: {@link EventData}, except that a chunk must be a real
 * stream part (stubs exist only in seeds loaded with elided chunks).
 */
export type AppendData<T extends string> = T extends 'assistant/chunk'
  ? AssistantChunkData
  : EventData<T>;

/**
 * The fields every entry of the append-only log has: `seq` equals its index in the log; `time` is
 * integer epoch ms. Accepted events are deeply frozen.
 */
export type EventEnvelope<T extends string, D> = {
  readonly seq: number;
  readonly time: number;
  readonly type: T;
  readonly data: D;
  /** Present exactly on surface-eligible events. */
  readonly surfaceOp?: SurfaceOp;
  /** Earlier events this one was derived from; absent means "not recorded". */
  readonly sourceEventSeqs?: readonly number[];
};

/** An event of a type {@link SessionEventMap} declares, with its data narrowed by `type`. */
export type KnownSessionEvent = {
  [K in KnownEventType]: EventEnvelope<K, SessionEventMap[K]>;
}[KnownEventType];

/**
 * An event of a type {@link SessionEventMap} does not declare: an application's own type, kept
 * verbatim with any JSON data. Read its data with {@link dataAsJson}, or declare the type in
 * `SessionEventMap` (declaration merging) to have it typed and narrowed like a core type.
 *
 * Its `data` is typed `never` on purpose. TypeScript cannot drop a member whose `type` is
 * `string` when `event.type === 'tool/result'` narrows a union, so that member stays in every
 * narrowed union; typed `never`, its data vanishes there and `event.data` is `ToolResultData`.
 * Typed `JsonValue` or `unknown`, it would widen every narrowed `event.data` back to a type that
 * says nothing. The price: on an event narrowed to a foreign type, `event.data` is `never`, which
 * has no properties to read (the compiler says so) but is assignable to anything, so read it
 * through `dataAsJson` rather than passing it on.
 */
export type ForeignEvent<T extends string = string> = EventEnvelope<T, never>;

/**
 * One entry of the append-only log. Without a type argument (or with `string`) it is the union of
 * every {@link KnownSessionEvent} and {@link ForeignEvent}, so comparing `event.type` with a
 * declared type (an `if`, a `switch`) narrows `event.data` to that type's data. With a declared
 * type (`SessionEvent<'tool/result'>`) it is that type's member; with any other, a `ForeignEvent`.
 *
 * A comparison narrows `data` but leaves the `ForeignEvent` member in the event's own type (its
 * `type` is any string); to hand the event on as a `SessionEvent<'tool/result'>`, narrow it with
 * {@link isEventOfType}.
 *
 * @example
 * ```ts
 * import { dataAsJson, Session, type SessionEvent } from 'palimpsest';
 *
 * const session = Session.create({ id: 'narrowing-example' });
 * session.append('turn/start', { turn: 1 });
 * session.append('my-app/note', { text: 'kept verbatim' });
 * const describe = (event: SessionEvent): string => {
 *   switch (event.type) {
 *     case 'turn/start':
 *       return `turn ${event.data.turn}`; // data is TurnStartData
 *     default:
 *       return `${event.type} ${JSON.stringify(dataAsJson(event))}`;
 *   }
 * };
 * const [start, note] = session.events.map(describe);
 * console.log(start); // 'turn 1'
 * console.log(note); // 'my-app/note {"text":"kept verbatim"}'
 * ```
 */
export type SessionEvent<T extends string = string> = string extends T
  ? KnownSessionEvent | ForeignEvent
  : T extends KnownEventType
    ? EventEnvelope<T, SessionEventMap[T]>
    : ForeignEvent<T>;

/**
 * The data of any event as the JSON it is: how a {@link ForeignEvent}'s data is read, and how code
 * that must not trust a log's shapes reads any event's (admission checks the fields the library
 * relies on, not every field a data type declares).
 */
export function dataAsJson(event: SessionEvent): JsonValue {
  return event.data;
}

/** True for the four types that must (and alone may) carry a `surfaceOp`. */
export function isSurfaceEligibleType(type: string): type is SurfaceEventType {
  // Comparisons, not a Set: a type read from a log is a fresh string, which a Set would hash in
  // full on every lookup, while a comparison stops at the first differing length or character.
  switch (type) {
    case 'user/message':
    case 'context/message':
    case 'assistant/message':
    case 'tool/result':
      return true;
    default:
      return false;
  }
}

/** True when the event entered the surface by appending. */
export function isAppendSurfaceEvent(event: SessionEvent): boolean {
  return event.surfaceOp === 'append';
}

/** The replace op of an event, or `undefined` when the event did not replace a range. */
export function replaceOpOf(event: SessionEvent): ReplaceOp | undefined {
  const op = event.surfaceOp;
  return typeof op === 'object' ? op : undefined;
}

/**
 * Narrows an event to a declared type: unlike comparing `event.type`, which narrows only `data`,
 * it narrows the event itself to `SessionEvent<T>`.
 */
export function isEventOfType<T extends KnownEventType>(
  event: SessionEvent,
  type: T,
): event is SessionEvent<T> {
  return event.type === type;
}

const EVENT_TYPE_PATTERN = /^[a-z0-9][a-z0-9._-]*(\/[a-z0-9][a-z0-9._-]*)+$/;
/** The types of the core vocabulary (stores that give types codes cover exactly these). */
export const KNOWN_TYPES: ReadonlySet<string> = new Set<KnownEventType>([
  'turn/start',
  'turn/end',
  'step/start',
  'step/end',
  'request/header',
  'request/retry',
  'request/overflow',
  'queue/steer',
  'queue/follow-up',
  'user/message',
  'context/message',
  'assistant/chunk',
  'assistant/message',
  'tool/call',
  'tool/result',
  'compaction/start',
  'compaction/end',
  'log/redaction',
  'log/checkpoint',
]);

/** True when `type` is a lowercase `area/name` event type (more `/` segments are allowed). */
export function isValidEventType(type: unknown): type is string {
  return (
    typeof type === 'string' &&
    (KNOWN_TYPES.has(type) || (type.length <= 200 && EVENT_TYPE_PATTERN.test(type)))
  );
}
