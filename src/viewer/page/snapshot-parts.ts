/**
 * The snapshot a session stream is delivering: its start line, then its parts, each parsed as
 * it arrives (while the next ones are still on their way), their events kept in order until the
 * last part completes the log the page seeds its session from. Says what is wrong when the lines
 * do not add up to the snapshot their start announced.
 */
import type { SessionEvent } from '../../core/index.js';
import type { SessionSnapshot, SnapshotPart, SnapshotStart } from '../protocol.js';

export class PendingSnapshot {
  private begun: SnapshotStart | undefined;
  private parts = 0;
  private events: SessionEvent[] = [];
  private bytes = 0;

  /** Whether a snapshot has begun and some of its parts have not arrived. */
  get waiting(): boolean {
    return this.begun !== undefined && this.parts < this.begun.parts;
  }

  /** Whether the next part is the snapshot's last. */
  get awaitsLast(): boolean {
    return this.begun !== undefined && this.parts === this.begun.parts - 1;
  }

  /** Whether every part of the snapshot has arrived, and {@link take} may run. */
  get complete(): boolean {
    return this.begun !== undefined && this.parts === this.begun.parts;
  }

  /** Begins a snapshot (one without events is complete at once); a problem, or `undefined`. */
  start(line: SnapshotStart, bytes: number): string | undefined {
    const { parts, eventCount } = line;
    if (!Number.isSafeInteger(parts) || parts < 0 || (parts === 0) !== (eventCount === 0)) {
      return `expected a snapshot's parts as a count, positive when it has events, found ${JSON.stringify(parts)} parts of ${JSON.stringify(eventCount)} events`;
    }
    this.begun = line;
    this.parts = 0;
    this.events = [];
    this.bytes = bytes;
    return undefined;
  }

  /**
   * Parses the next part (only while {@link waiting}) and keeps its events; a problem, or
   * `undefined`. A part that is not JSON throws, as `JSON.parse` does.
   */
  add(text: string): string | undefined {
    this.parts++;
    this.bytes += text.length;
    const part = JSON.parse(text) as SnapshotPart;
    if (!Array.isArray(part.events)) return 'expected a snapshot part to hold an events array';
    // One by one: a part may hold more events than a call's arguments can (`push(...part)`).
    for (const event of part.events) this.events.push(event);
    return undefined;
  }

  /** What the snapshot awaits next. */
  describe(): string {
    return `part ${this.parts + 1} of the snapshot's ${this.begun?.parts ?? 0}`;
  }

  /**
   * The parts of a {@link complete} snapshot as one, or what is wrong with them; either way the
   * next line begins anew.
   */
  take(): { snapshot: SessionSnapshot; bytes: number } | string {
    const begun = this.begun;
    const { parts, events } = this;
    this.begun = undefined;
    this.parts = 0;
    this.events = [];
    if (begun === undefined || parts !== begun.parts) {
      return `expected the snapshot's ${begun?.parts ?? 0} parts, found ${parts}`;
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
