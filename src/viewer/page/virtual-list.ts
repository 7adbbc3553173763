/**
 * A list that keeps only the rows in sight in the DOM: fixed-height rows positioned inside a
 * spacer as tall as the whole list, so 100,000 rows cost the DOM about forty elements. Updating
 * the rows (a live batch) keeps the scroll position: the spacer grows, `scrollTop` stays.
 */
import type { Row } from './state.js';

/** Height of one row in CSS pixels; the stylesheet's `.row` height must match. */
export const ROW_HEIGHT = 26;
const OVERSCAN = 8;

/** Draws one row's contents into its element. */
export type RowPainter = (element: HTMLElement, row: Row, index: number) => void;

/** A scrolling list of {@link Row}s of which only those in sight are in the DOM. */
export class VirtualList {
  private rows: readonly Row[] = [];
  private readonly spacer: HTMLElement;
  private readonly painted = new Map<number, HTMLElement>();
  private frame = 0;

  constructor(
    readonly viewport: HTMLElement,
    private readonly paint: RowPainter,
  ) {
    this.spacer = document.createElement('div');
    this.spacer.className = 'spacer';
    viewport.replaceChildren(this.spacer);
    viewport.addEventListener('scroll', () => this.schedule());
    new ResizeObserver(() => this.schedule()).observe(viewport);
  }

  get length(): number {
    return this.rows.length;
  }

  row(index: number): Row | undefined {
    return this.rows[index];
  }

  indexOf(key: string): number {
    return this.rows.findIndex((row) => row.key === key);
  }

  /** Shows `rows`; every painted row is repainted now (selection and highlights may differ). */
  setRows(rows: readonly Row[]): void {
    this.rows = rows;
    this.spacer.style.height = `${rows.length * ROW_HEIGHT}px`;
    this.render(true);
  }

  /** Repaints the rows in sight (after a selection or highlight change). */
  refresh(): void {
    this.render(true);
  }

  /** Scrolls just enough for row `index` to be in sight. */
  reveal(index: number): void {
    const top = index * ROW_HEIGHT;
    const view = this.viewport;
    if (top < view.scrollTop) view.scrollTop = top;
    else if (top + ROW_HEIGHT > view.scrollTop + view.clientHeight) {
      view.scrollTop = top + ROW_HEIGHT - view.clientHeight;
    }
    this.render(false);
  }

  private schedule(): void {
    if (this.frame !== 0) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      this.render(false);
    });
  }

  private render(repaint: boolean): void {
    const view = this.viewport;
    const height = view.clientHeight || 800;
    const first = Math.max(0, Math.floor(view.scrollTop / ROW_HEIGHT) - OVERSCAN);
    const last = Math.min(
      this.rows.length,
      Math.ceil((view.scrollTop + height) / ROW_HEIGHT) + OVERSCAN,
    );
    for (const [index, element] of this.painted) {
      if (index < first || index >= last || repaint) {
        element.remove();
        this.painted.delete(index);
      }
    }
    for (let index = first; index < last; index++) {
      if (this.painted.has(index)) continue;
      const row = this.rows[index] as Row;
      const element = document.createElement('div');
      element.className = 'row';
      element.dataset.index = String(index);
      element.style.transform = `translateY(${index * ROW_HEIGHT}px)`;
      this.paint(element, row, index);
      this.spacer.appendChild(element);
      this.painted.set(index, element);
    }
  }
}
