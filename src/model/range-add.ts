/**
 * Adds to ranges of positions and reads one position's sum, each in O(log n): a Fenwick tree
 * over the differences, of vectors of four numbers. Token rent bills a stretch of a request's
 * parts through it, so a call costs the same however many parts the stretch holds.
 */

const WIDTH = 4;

/** Range additions over positions 0..n-1, each position's sum read back. */
export class RangeAdd {
  private tree = new Float64Array(WIDTH * 65);
  private size = 64;

  /** The positions it can hold. */
  get capacity(): number {
    return this.size;
  }

  /** Adds `vector × times` to every position in `[from, to)`; `to` ≤ {@link capacity}. */
  add(from: number, to: number, vector: readonly number[], times = 1): void {
    if (to <= from) return;
    this.point(from, vector, times);
    if (to < this.size) this.point(to, vector, -times);
  }

  /** The sum added at `position`, into `into` (its four numbers are added to). */
  sumAt(position: number, into: number[]): void {
    for (let index = position + 1; index > 0; index -= index & -index) {
      for (let k = 0; k < WIDTH; k++)
        into[k] = (into[k] as number) + (this.tree[index * WIDTH + k] as number);
    }
  }

  /** Forgets every addition and makes room for `positions` positions. */
  reset(positions: number): void {
    let size = this.size;
    while (size < positions) size *= 2;
    if (size !== this.size) {
      this.size = size;
      this.tree = new Float64Array(WIDTH * (size + 1));
    } else {
      this.tree.fill(0);
    }
  }

  private point(position: number, vector: readonly number[], times: number): void {
    for (let index = position + 1; index <= this.size; index += index & -index) {
      for (let k = 0; k < WIDTH; k++) {
        this.tree[index * WIDTH + k] =
          (this.tree[index * WIDTH + k] as number) + (vector[k] as number) * times;
      }
    }
  }
}
