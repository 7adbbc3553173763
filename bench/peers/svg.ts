/**
 * The per-turn cost plot: one line per system, turn number against the cost of that turn, both
 * axes logarithmic (costs span 10 µs to 100 ms, sessions 10 to 5,000 turns). Plain SVG, written
 * by hand: a plotting dependency would be the only one the page needed.
 */

export interface Series {
  readonly name: string;
  /** [turn (1-based), ns] points, in turn order. */
  readonly points: readonly (readonly [number, number])[];
  readonly dashed?: boolean;
}

const WIDTH = 900;
const HEIGHT = 520;
const MARGIN = { left: 70, right: 290, top: 30, bottom: 50 };
const COLORS = [
  '#1f77b4',
  '#ff7f0e',
  '#2ca02c',
  '#d62728',
  '#9467bd',
  '#8c564b',
  '#e377c2',
  '#7f7f7f',
  '#bcbd22',
  '#17becf',
  '#393b79',
  '#637939',
  '#8c6d31',
  '#843c39',
  '#7b4173',
];

function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function decades(min: number, max: number): number[] {
  const out: number[] = [];
  for (let e = Math.floor(Math.log10(min)); e <= Math.ceil(Math.log10(max)); e++) out.push(10 ** e);
  return out;
}

function nsLabel(ns: number): string {
  if (ns >= 1e9) return `${ns / 1e9} s`;
  if (ns >= 1e6) return `${ns / 1e6} ms`;
  if (ns >= 1e3) return `${ns / 1e3} µs`;
  return `${ns} ns`;
}

/**
 * Bins each series into about `bins` log-spaced turn ranges and keeps each range's median, so a
 * 5,000-turn line stays readable and one slow turn does not hide the trend.
 */
export function binned(
  points: readonly (readonly [number, number])[],
  bins = 80,
): [number, number][] {
  const last = points.at(-1)?.[0] ?? 1;
  const edges = Array.from({ length: bins + 1 }, (_, i) => last ** (i / bins));
  const out: [number, number][] = [];
  let at = 0;
  for (let b = 0; b < bins && at < points.length; b++) {
    const upper = edges[b + 1] ?? last;
    const values: number[] = [];
    let turnSum = 0;
    while (at < points.length && (points[at]?.[0] ?? 0) <= upper) {
      const point = points[at++] as readonly [number, number];
      values.push(point[1]);
      turnSum += point[0];
    }
    if (values.length === 0) continue;
    values.sort((a, b) => a - b);
    out.push([turnSum / values.length, values[values.length >> 1] as number]);
  }
  return out;
}

export function perTurnSvg(title: string, series: readonly Series[]): string {
  const all = series.flatMap((s) => s.points);
  const maxTurn = Math.max(...all.map((p) => p[0]), 10);
  const ys = all.map((p) => p[1]).filter((y) => y > 0);
  const minY = 10 ** Math.floor(Math.log10(Math.min(...ys)));
  const maxY = 10 ** Math.ceil(Math.log10(Math.max(...ys)));
  const plotW = WIDTH - MARGIN.left - MARGIN.right;
  const plotH = HEIGHT - MARGIN.top - MARGIN.bottom;
  const x = (turn: number): number =>
    MARGIN.left + (Math.log10(turn) / Math.log10(maxTurn)) * plotW;
  const y = (ns: number): number =>
    MARGIN.top + plotH - ((Math.log10(ns) - Math.log10(minY)) / Math.log10(maxY / minY)) * plotH;
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" viewBox="0 0 ${WIDTH} ${HEIGHT}" font-family="sans-serif" font-size="12">`,
    `<title>${escapeXml(title)}</title>`,
    `<rect width="${WIDTH}" height="${HEIGHT}" fill="white"/>`,
    `<text x="${MARGIN.left}" y="18" font-size="14">${escapeXml(title)}</text>`,
  ];
  for (const tick of decades(1, maxTurn).filter((t) => t <= maxTurn)) {
    parts.push(
      `<line x1="${x(tick)}" y1="${MARGIN.top}" x2="${x(tick)}" y2="${MARGIN.top + plotH}" stroke="#ddd"/>`,
      `<text x="${x(tick)}" y="${MARGIN.top + plotH + 16}" text-anchor="middle">${tick}</text>`,
    );
  }
  for (const tick of decades(minY, maxY)) {
    parts.push(
      `<line x1="${MARGIN.left}" y1="${y(tick)}" x2="${MARGIN.left + plotW}" y2="${y(tick)}" stroke="#ddd"/>`,
      `<text x="${MARGIN.left - 6}" y="${y(tick) + 4}" text-anchor="end">${nsLabel(tick)}</text>`,
    );
  }
  parts.push(
    `<text x="${MARGIN.left + plotW / 2}" y="${HEIGHT - 12}" text-anchor="middle">turn (log)</text>`,
    `<text x="16" y="${MARGIN.top + plotH / 2}" transform="rotate(-90 16 ${MARGIN.top + plotH / 2})" text-anchor="middle">cost of the turn (log)</text>`,
  );
  series.forEach((s, i) => {
    const color = COLORS[i % COLORS.length] ?? '#000';
    const path = s.points
      .filter((p) => p[1] > 0)
      .map((p, j) => `${j === 0 ? 'M' : 'L'}${x(p[0]).toFixed(1)},${y(p[1]).toFixed(1)}`)
      .join(' ');
    const dash = s.dashed === true ? ' stroke-dasharray="5 3"' : '';
    parts.push(
      `<path d="${path}" fill="none" stroke="${color}" stroke-width="1.6"${dash}/>`,
      `<line x1="${WIDTH - MARGIN.right + 14}" y1="${MARGIN.top + 10 + i * 18}" x2="${WIDTH - MARGIN.right + 38}" y2="${MARGIN.top + 10 + i * 18}" stroke="${color}" stroke-width="2"${dash}/>`,
      `<text x="${WIDTH - MARGIN.right + 44}" y="${MARGIN.top + 14 + i * 18}">${escapeXml(s.name)}</text>`,
    );
  });
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}
