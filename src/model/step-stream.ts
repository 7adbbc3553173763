/**
 * Assembles one model call's stream parts into the assistant message the step records. Blocks
 * keep the order in which the provider opened them (reasoning before text before tool calls,
 * as providers require on the next request); provider metadata a provider needs back (thinking
 * signatures, redacted reasoning) stays on the block it arrived with.
 */
import type { LanguageModelV3StreamPart } from '@ai-sdk/provider';
import type {
  AssistantContentBlock,
  FinishReason,
  JsonObject,
  TokenUsage,
  ToolCallBlock,
} from '../core/index.js';
import { mapUsage } from './usage.js';
import { toLogJson } from './wire-json.js';

type Slot =
  | { kind: 'text' | 'reasoning'; text: string; metadata: JsonObject | undefined }
  | {
      kind: 'tool-call';
      id: string;
      name: string;
      input: string | undefined;
      metadata: JsonObject | undefined;
    }
  | { kind: 'image'; mediaType: string; data: string };

/** The state of one attempt at one model call. */
export class StepStream {
  /** Seqs of the `assistant/chunk` events of this attempt, in order. */
  readonly chunkSeqs: number[] = [];
  /** The first `error` part the provider streamed, if any. */
  streamError: unknown;
  finishReason: FinishReason | undefined;
  /** The provider's own finish reason, when it sent one. */
  rawFinishReason: string | undefined;
  usage: TokenUsage | undefined;
  providerMetadata: JsonObject | undefined;
  private readonly slots: Slot[] = [];
  private readonly open = new Map<string, Slot>();
  // Deltas of one block arrive in runs: the last text slot answers most lookups.
  private lastText:
    | { kind: string; id: string; slot: Extract<Slot, { kind: 'text' | 'reasoning' }> }
    | undefined;

  /** Takes one stream part, recorded at `seq`. */
  add(part: LanguageModelV3StreamPart, seq: number): void {
    this.chunkSeqs.push(seq);
    switch (part.type) {
      case 'text-start':
      case 'reasoning-start':
        this.textSlot(
          part.type === 'text-start' ? 'text' : 'reasoning',
          part.id,
          part.providerMetadata,
        );
        break;
      case 'text-delta':
      case 'reasoning-delta': {
        const slot = this.textSlot(
          part.type === 'text-delta' ? 'text' : 'reasoning',
          part.id,
          part.providerMetadata,
        );
        slot.text += part.delta;
        break;
      }
      case 'text-end':
      case 'reasoning-end':
        this.textSlot(
          part.type === 'text-end' ? 'text' : 'reasoning',
          part.id,
          part.providerMetadata,
        );
        break;
      case 'tool-input-start':
        if (part.providerExecuted !== true) this.callSlot(part.id, part.toolName);
        break;
      case 'tool-call': {
        // Provider-executed calls (server-side tools) are answered by the provider itself; they
        // stay in the chunks and are not executed or sent back as calls.
        if (part.providerExecuted === true) break;
        const slot = this.callSlot(part.toolCallId, part.toolName);
        slot.name = part.toolName;
        slot.input = part.input;
        slot.metadata = mergeMetadata(slot.metadata, part.providerMetadata);
        break;
      }
      case 'file':
        if (part.mediaType.startsWith('image/')) {
          const data = typeof part.data === 'string' ? part.data : (toLogJson(part.data) as string);
          this.slots.push({ kind: 'image', mediaType: part.mediaType, data });
        }
        break;
      case 'finish':
        this.finishReason = part.finishReason.unified;
        this.rawFinishReason =
          typeof part.finishReason.raw === 'string' ? part.finishReason.raw : undefined;
        this.usage = mapUsage(part.usage);
        this.providerMetadata = mergeMetadata(undefined, part.providerMetadata);
        break;
      case 'error':
        if (this.streamError === undefined) this.streamError = part.error ?? 'stream error';
        break;
      default:
        break;
    }
  }

  /** Complete tool calls, in the order the model opened them. */
  toolCalls(): ToolCallBlock[] {
    const calls: ToolCallBlock[] = [];
    for (const slot of this.slots) {
      if (slot.kind === 'tool-call' && slot.input !== undefined) calls.push(callBlock(slot));
    }
    return calls;
  }

  /**
   * The assistant message content. An interrupted attempt keeps its non-empty text and
   * reasoning and drops every tool call: a call the loop will not execute must not reach the
   * surface, where it would stand unanswered.
   */
  content(interrupted: boolean): AssistantContentBlock[] {
    const content: AssistantContentBlock[] = [];
    for (const slot of this.slots) {
      switch (slot.kind) {
        case 'text':
          if (slot.text !== '')
            content.push(withMetadata({ type: 'text', text: slot.text }, slot.metadata));
          break;
        case 'reasoning':
          // Redacted reasoning has no text but must travel back (its payload is in the metadata).
          if (slot.text !== '' || slot.metadata !== undefined) {
            content.push(withMetadata({ type: 'reasoning', text: slot.text }, slot.metadata));
          }
          break;
        case 'tool-call':
          if (!interrupted && slot.input !== undefined) content.push(callBlock(slot));
          break;
        case 'image':
          content.push({ type: 'image', mediaType: slot.mediaType, data: slot.data });
          break;
      }
    }
    return content;
  }

  private textSlot(
    kind: 'text' | 'reasoning',
    id: string,
    metadata: unknown,
  ): Extract<Slot, { kind: 'text' | 'reasoning' }> {
    const last = this.lastText;
    let slot = last !== undefined && last.kind === kind && last.id === id ? last.slot : undefined;
    if (slot === undefined) {
      const key = `${kind}:${id}`;
      slot = this.open.get(key) as Extract<Slot, { kind: 'text' | 'reasoning' }> | undefined;
      if (slot === undefined) {
        slot = { kind, text: '', metadata: undefined };
        this.open.set(key, slot);
        this.slots.push(slot);
      }
      this.lastText = { kind, id, slot };
    }
    if (metadata !== undefined) slot.metadata = mergeMetadata(slot.metadata, metadata);
    return slot;
  }

  private callSlot(id: string, name: string): Extract<Slot, { kind: 'tool-call' }> {
    const key = `tool-call:${id}`;
    let slot = this.open.get(key) as Extract<Slot, { kind: 'tool-call' }> | undefined;
    if (slot === undefined) {
      slot = { kind: 'tool-call', id, name, input: undefined, metadata: undefined };
      this.open.set(key, slot);
      this.slots.push(slot);
    }
    return slot;
  }
}

function callBlock(slot: Extract<Slot, { kind: 'tool-call' }>): ToolCallBlock {
  return withMetadata(
    { type: 'tool-call', id: slot.id, name: slot.name, arguments: slot.input ?? '' },
    slot.metadata,
  );
}

function withMetadata<T extends object>(block: T, metadata: JsonObject | undefined): T {
  return metadata === undefined ? block : { ...block, providerMetadata: metadata };
}

/** Merges provider metadata per provider key (a signature can arrive on a later delta). */
function mergeMetadata(current: JsonObject | undefined, incoming: unknown): JsonObject | undefined {
  if (incoming === undefined || incoming === null) return current;
  const converted = toLogJson(incoming);
  if (typeof converted !== 'object' || converted === null || Array.isArray(converted))
    return current;
  const next: Record<string, JsonObject | JsonObject[keyof JsonObject]> = { ...current };
  for (const [provider, value] of Object.entries(converted as JsonObject)) {
    const previous = next[provider];
    next[provider] = isObject(previous) && isObject(value) ? { ...previous, ...value } : value;
  }
  return Object.keys(next).length === 0 ? undefined : (next as JsonObject);
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
