/**
 * Where the trace's bars go: each span's start and end times, in milliseconds, become a left edge
 * and a width as fractions of the group's time range. Pure, so the rules (a zero-length call,
 * a clock that ran backwards, spans that ran side by side) are tested without a browser.
 */

/** A span of time: a model call or a tool execution. `end` may precede `start` (clock skew). */
export interface TimeSpan {
  readonly start: number;
  readonly end: number;
}

/** Where one span's bar is drawn, as fractions (0 to 1) of the range. */
export interface Bar {
  readonly left: number;
  /** 0 for a span of no length, and for one whose end precedes its start. */
  readonly width: number;
  /** The span's length in milliseconds; negative when its end was recorded before its start. */
  readonly duration: number;
  /** Another span of the same list ran during part of this one. */
  readonly overlaps: boolean;
}

/** The time range `spans` cover: the earliest start to the latest start or end. */
export function rangeOf(spans: readonly TimeSpan[]): TimeSpan {
  let start = Number.POSITIVE_INFINITY;
  let end = Number.NEGATIVE_INFINITY;
  for (const span of spans) {
    start = Math.min(start, span.start);
    end = Math.max(end, span.start, span.end);
  }
  return spans.length === 0 ? { start: 0, end: 0 } : { start, end };
}

/**
 * The bars of `spans` within `range` (by default the range they cover). A span whose end was
 * recorded before its start is drawn as a mark at its start, never as a negative bar; a range of
 * no length puts every bar at the left edge.
 */
export function layoutBars(spans: readonly TimeSpan[], range: TimeSpan = rangeOf(spans)): Bar[] {
  const length = range.end - range.start;
  const fraction = (time: number): number =>
    length <= 0 ? 0 : Math.min(1, Math.max(0, (time - range.start) / length));
  const overlapping = overlaps(spans);
  return spans.map((span, index) => {
    const left = fraction(span.start);
    const right = Math.max(left, fraction(span.end));
    return {
      left,
      width: right - left,
      duration: span.end - span.start,
      overlaps: overlapping[index] === true,
    };
  });
}

/**
 * For each span, whether another ran during part of it: both have length and each starts before
 * the other ends. Spans that only touch (one ends as the next starts) do not overlap. Sorted by
 * start, each span is compared with the spans still open, so n spans cost n log n.
 */
export function overlaps(spans: readonly TimeSpan[]): boolean[] {
  const result = spans.map(() => false);
  const order = spans
    .map((span, index) => ({ start: span.start, end: Math.max(span.start, span.end), index }))
    .filter((span) => span.end > span.start)
    .sort((a, b) => a.start - b.start);
  let open: { end: number; index: number }[] = [];
  for (const span of order) {
    open = open.filter((other) => other.end > span.start);
    for (const other of open) {
      result[other.index] = true;
      result[span.index] = true;
    }
    open.push(span);
  }
  return result;
}

/** A duration for a person: `850 ms`, `3.2 s`, `4 min 05 s`. */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms)) return '?';
  const sign = ms < 0 ? '-' : '';
  const abs = Math.abs(ms);
  if (abs < 1000) return `${sign}${Math.round(abs)} ms`;
  if (abs < 60_000) return `${sign}${(abs / 1000).toFixed(abs < 10_000 ? 2 : 1)} s`;
  const minutes = Math.floor(abs / 60_000);
  const seconds = Math.round((abs % 60_000) / 1000);
  return `${sign}${minutes} min ${String(seconds).padStart(2, '0')} s`;
}
