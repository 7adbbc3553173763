/**
 * Reading the SDK's items back from the surface: the item each event carries, skipping the
 * markers that carry none (removals, crash-repair closers), with a cache that only grows until
 * a replace rewrites the surface.
 */
import {
  type JsonObject,
  type Session,
  type SessionEvent,
  TOOL_NOT_STARTED,
  TOOL_OUTCOME_UNKNOWN,
} from '../../core/index.js';
import { OpenAIAgentsSessionError } from './errors.js';

/** The items on one session's surface, in order. */
export class SurfaceItems {
  private cached: JsonObject[] = [];
  private cachedGeneration = -1;
  private cachedSize = 0;

  constructor(private readonly session: Session) {}

  /** The stored items on the surface, in order; rebuilt only when a replace changed it. */
  items(): readonly JsonObject[] {
    const surface = this.session.surface;
    if (surface.replaceGeneration !== this.cachedGeneration) {
      this.cached = [];
      this.cachedSize = 0;
      this.cachedGeneration = surface.replaceGeneration;
    }
    for (; this.cachedSize < surface.size; this.cachedSize++) {
      const event = this.eventAt(surface.at(this.cachedSize));
      const items = itemsOf(event);
      if (items !== undefined) this.cached.push(...items);
      else if (!isRemoval(event) && !isRepairCloser(event)) {
        throw new OpenAIAgentsSessionError(
          'FOREIGN_SURFACE_EVENT',
          `the surface holds seq ${event.seq} (${event.type}), which carries no OpenAI Agents item; this session was not written by PalimpsestSession alone`,
        );
      }
    }
    return this.cached;
  }

  /** The event on the surface at seq `seq`. */
  eventAt(seq: number | undefined): SessionEvent {
    return this.session.event(seq ?? -1) as SessionEvent;
  }
}

/**
 * The items an event carries, in order: its `item`, or the parallel calls of one model response
 * it carries as `items`; undefined for an event that carries none.
 */
export function itemsOf(event: SessionEvent): readonly JsonObject[] | undefined {
  const data = event.data as { item?: unknown; items?: unknown } | null;
  if (isItem(data?.item)) return [data.item];
  const items = data?.items;
  return Array.isArray(items) && items.length > 0 && items.every(isItem) ? items : undefined;
}

function isItem(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * A result crash repair appended for a call a crash left unanswered: it answers the model, not
 * the SDK, which has no item for it (and drops a call left without a result on its own).
 */
function isRepairCloser(event: SessionEvent): boolean {
  const code = (event.data as { error?: { code?: unknown } } | null)?.error?.code;
  return (
    event.type === 'tool/result' && (code === TOOL_NOT_STARTED || code === TOOL_OUTCOME_UNKNOWN)
  );
}

function isRemoval(event: SessionEvent): boolean {
  const data = event.data as { removed?: unknown } | null;
  return event.type === 'assistant/message' && typeof data?.removed === 'object';
}
