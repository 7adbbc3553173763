/**
 * The trace's bars from times: positions within the group's range, overlap of spans that ran side
 * by side, a span of no length, and a clock that ran backwards (never a negative bar).
 */
import { describe, expect, it } from 'vitest';
import {
  formatDuration,
  layoutBars,
  overlaps,
  rangeOf,
} from '../../src/viewer/page/trace-layout.js';

describe('the trace layout', () => {
  it('places each bar by its start and end within the range the spans cover', () => {
    const bars = layoutBars([
      { start: 1000, end: 1600 },
      { start: 1600, end: 2000 },
    ]);
    expect(bars.map(({ left, width }) => [left, width])).toEqual([
      [0, 0.6],
      [0.6, 0.4],
    ]);
    expect(bars.map((bar) => bar.duration)).toEqual([600, 400]);
  });

  it('places bars in a range it is given, clamping what lies outside it', () => {
    const [inside, before] = layoutBars(
      [
        { start: 150, end: 200 },
        { start: 0, end: 120 },
      ],
      { start: 100, end: 300 },
    );
    expect(inside).toMatchObject({ left: 0.25, width: 0.25 });
    expect(before).toMatchObject({ left: 0, width: 0.1 });
  });

  it('marks spans that ran side by side, and not spans that only touch', () => {
    const spans = [
      { start: 0, end: 10 },
      { start: 10, end: 20 },
      { start: 12, end: 18 },
      { start: 30, end: 40 },
    ];
    expect(overlaps(spans)).toEqual([false, true, true, false]);
    expect(layoutBars(spans).map((bar) => bar.overlaps)).toEqual([false, true, true, false]);
  });

  it('draws a span of no length as a mark at its time, and a range of no length at the left', () => {
    const [point, span] = layoutBars([
      { start: 50, end: 50 },
      { start: 0, end: 100 },
    ]);
    expect(point).toMatchObject({ left: 0.5, width: 0, duration: 0, overlaps: false });
    expect(span).toMatchObject({ left: 0, width: 1 });
    const [only] = layoutBars([{ start: 7, end: 7 }]);
    expect(only).toMatchObject({ left: 0, width: 0 });
    expect(rangeOf([])).toEqual({ start: 0, end: 0 });
  });

  it('never draws a negative bar when an end was logged before its start (clock skew)', () => {
    const [skewed, normal] = layoutBars([
      { start: 80, end: 20 },
      { start: 0, end: 100 },
    ]);
    expect(skewed).toMatchObject({ left: 0.8, width: 0, duration: -60 });
    expect(normal).toMatchObject({ left: 0, width: 1 });
    expect(
      overlaps([
        { start: 80, end: 20 },
        { start: 0, end: 100 },
      ]),
    ).toEqual([false, false]);
  });

  it('writes durations for a person', () => {
    expect(formatDuration(850)).toBe('850 ms');
    expect(formatDuration(3_210)).toBe('3.21 s');
    expect(formatDuration(42_500)).toBe('42.5 s');
    expect(formatDuration(245_000)).toBe('4 min 05 s');
    expect(formatDuration(-60)).toBe('-60 ms');
  });
});
