/**
 * The snapshot a session stream is delivering: its start line, then its parts, kept as text until
 * the last arrives and parsed together then (the page seeds its session from the whole log at
 * once). Says what is wrong when the lines do not add up to the snapshot their start announced.
 */
import type { SessionEvent } from '../../core/index.js';
import type { SessionSnapshot, SnapshotPart, SnapshotStart } from '../protocol.js';

export class PendingSnapshot {
  private begun: SnapshotStart | undefined;
  private texts: string[] = [];
  private bytes = 0;

  /** Whether a snapshot has begun and some of its parts have not arrived. */
  get waiting(): boolean {
    return this.begun !== undefined && this.texts.length < this.begun.parts;
  }

  /** Whether every part of the snapshot has arrived, and {@link take} may run. */
  get complete(): boolean {
    return this.begun !== undefined && this.texts.length === this.begun.parts;
  }

  /** Begins a snapshot (one without events is complete at once); a problem, or `undefined`. */
  start(line: SnapshotStart, bytes: number): string | undefined {
    const { parts, eventCount } = line;
    if (!Number.isSafeInteger(parts) || parts < 0 || (parts === 0) !== (eventCount === 0)) {
      return `expected a snapshot's parts as a count, positive when it has events, found ${JSON.stringify(parts)} parts of ${JSON.stringify(eventCount)} events`;
    }
    this.begun = line;
    this.texts = [];
    this.bytes = bytes;
    return undefined;
  }

  /** Keeps the text of the next part (only while {@link waiting}). */
  add(text: string): void {
    this.texts.push(text);
    this.bytes += text.length;
  }

  /** What the snapshot awaits next. */
  describe(): string {
    return `part ${this.texts.length + 1} of the snapshot's ${this.begun?.parts ?? 0}`;
  }

  /**
   * Parses the parts of a {@link complete} snapshot into one, or says what is wrong with them;
   * either way the next line begins anew. A part that is not JSON throws, as `JSON.parse` does.
   */
  take(): { snapshot: SessionSnapshot; bytes: number } | string {
    const begun = this.begun;
    const texts = this.texts;
    this.begun = undefined;
    this.texts = [];
    if (begun === undefined || texts.length !== begun.parts) {
      return `expected the snapshot's ${begun?.parts ?? 0} parts, found ${texts.length}`;
    }
    const events: SessionEvent[] = [];
    for (const text of texts) {
      const part = JSON.parse(text) as SnapshotPart;
      if (!Array.isArray(part.events)) return 'expected a snapshot part to hold an events array';
      // One by one: a part may hold more events than a call's arguments can (`push(...part)`).
      for (const event of part.events) events.push(event);
    }
    if (events.length !== begun.eventCount) {
      return `expected the snapshot's ${begun.eventCount} events, found ${events.length} in its ${begun.parts} parts`;
    }
    const snapshot: SessionSnapshot = {
      kind: 'snapshot',
      header: begun.header,
      events,
      children: begun.children,
    };
    return { snapshot, bytes: this.bytes };
  }
}
