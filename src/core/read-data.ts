/**
 * Defensive readers for event data, for code that must not trust a log's data shapes (repair,
 * the invariant checker): they return `undefined` instead of throwing.
 */
import { dataAsJson, type SessionEvent } from './events.js';
import type { JsonValue } from './json.js';
import { asObject } from './messages.js';

/** An integer field of the event's data, or `undefined`. */
export function intField(event: SessionEvent, field: string): number | undefined {
  const value = asObject(dataAsJson(event))?.[field];
  return typeof value === 'number' && Number.isSafeInteger(value) ? value : undefined;
}

/** A string field of the event's data, or `undefined`. */
export function stringField(event: SessionEvent, field: string): string | undefined {
  const value = asObject(dataAsJson(event))?.[field];
  return typeof value === 'string' ? value : undefined;
}

/** The tool calls (`id`, `name`) an assistant/message requested, in order. */
export function requestedToolCalls(event: SessionEvent): { id: string; name: string }[] {
  const message = asObject(asObject(dataAsJson(event))?.message);
  const content = message?.content;
  if (!Array.isArray(content)) return [];
  const calls: { id: string; name: string }[] = [];
  for (const block of content) {
    const record = asObject(block as JsonValue);
    if (record?.type === 'tool-call' && typeof record.id === 'string') {
      calls.push({ id: record.id, name: typeof record.name === 'string' ? record.name : '' });
    }
  }
  return calls;
}

/** The call id a tool/result answers, or `undefined`. */
export function resultCallId(event: SessionEvent): string | undefined {
  const message = asObject(asObject(dataAsJson(event))?.message);
  const content = message?.content;
  const block = Array.isArray(content) ? asObject(content[0] as JsonValue) : undefined;
  return typeof block?.toolCallId === 'string' ? block.toolCallId : undefined;
}
