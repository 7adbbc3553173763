/**
 * Token rent: what each surface entry cost across every request it stayed in. A request is
 * billed as a whole; its reported input is spread over its parts in proportion to their
 * estimated tokens, in request order (tools and system, then the messages), and each part is
 * billed as the span of the request it occupies: the first cached tokens are cache reads, the
 * next written ones cache writes, the rest uncached input.
 *
 * One walk, and each call costs a few operations whatever the request holds: the kind most of
 * the request was billed as is added to every entry at once through a running total each entry
 * reads the difference of, from when it entered the surface to when it left; the other kinds'
 * stretches are range additions over the request's positions, settled into the entries when a
 * replace moves positions and at the end.
 */

import { RangeAdd } from './range-add.js';

/** How many tokens of each input kind, and what they cost. */
export interface RentFigures {
  readonly cacheRead: number;
  readonly cacheWrite: number;
  /** Uncached input. */
  readonly input: number;
  /** The money of the three, in the price table's currency (0 for unpriced calls). */
  readonly cost: number;
}

/** The per-token rates of one billed call: what one estimated token of each kind cost. */
export interface CallRates {
  /** Reported input tokens per estimated token of the request. */
  readonly scale: number;
  /** Money per reported token of each kind. */
  readonly cacheRead: number;
  readonly cacheWrite: number;
  readonly input: number;
}

type Vector = [cacheRead: number, cacheWrite: number, input: number, cost: number];

/** A running sum of billed vectors per estimated token. */
class Accumulator {
  readonly sum: Vector = [0, 0, 0, 0];
  add(vector: Readonly<Vector>, times: number): void {
    for (let i = 0; i < 4; i++)
      this.sum[i] = (this.sum[i] as number) + (vector[i] as number) * times;
  }
}

interface Tenant {
  readonly tokens: number;
  /** The global sum and call count when it entered the surface. */
  readonly since: Vector;
  callsSince: number;
  /** What it was billed beyond the global kind, per estimated token. */
  readonly own: Accumulator;
  /** Rent per estimated token and calls from stretches it is no longer on the surface. */
  readonly settled: Accumulator;
  settledCalls: number;
}

/** The rent an entry paid, in tokens of each kind and money, over how many calls. */
export interface EntryRentFigures extends RentFigures {
  /** Its estimated tokens. */
  readonly tokens: number;
  /** The billed calls whose request held it. */
  readonly calls: number;
}

/** The ledger the walk keeps: who is on the surface, and what each call billed them. */
export class RentLedger {
  private readonly global = new Accumulator();
  private callCount = 0;
  private readonly tenants = new Map<number, Tenant>();
  /** The request being billed: the walk's surface (read during `bill` only), cumulative tokens. */
  private order: readonly number[] = [];
  private readonly before: number[] = [0];
  /** The seq at each position as of the last admitted call, and what ranges added there since. */
  private readonly seqAt: number[] = [];
  private readonly pending = new RangeAdd();
  private pendingPositions = 0;

  /** @param tokensOf Estimated tokens of the message a surface entry contributes. */
  constructor(private readonly tokensOf: (seq: number) => number) {}

  /** Entries a replace shadowed leave the surface: their rent stops. */
  leave(seqs: readonly number[]): void {
    for (const seq of seqs) {
      const tenant = this.tenants.get(seq);
      if (tenant === undefined || tenant.callsSince < 0) continue;
      tenant.settled.add(difference(this.global.sum, tenant.since), 1);
      tenant.settledCalls += this.callCount - tenant.callsSince;
      tenant.callsSince = -1;
    }
  }

  /**
   * Bills the call {@link admit} took last: its request is `head` estimated tokens of tools and
   * system, then the surface, of which `cacheRead` and `cacheWrite` reported tokens at the front
   * were cache reads and writes and the rest uncached input. Returns what the head cost.
   */
  bill(head: number, rates: CallRates, cacheRead: number, cacheWrite: number): RentFigures {
    const total = head + (this.before[this.order.length] as number);
    if (total <= 0 || rates.scale <= 0) return { cacheRead: 0, cacheWrite: 0, input: 0, cost: 0 };
    // Region ends in estimated tokens: [0, read) cache reads, [read, written) writes, the rest input.
    const read = Math.min(total, cacheRead / rates.scale);
    const written = Math.min(total, read + cacheWrite / rates.scale);
    const prices = [rates.cacheRead, rates.cacheWrite, rates.input];
    const unit = (kind: number): Vector => {
      const vector: Vector = [0, 0, 0, 0];
      vector[kind] = rates.scale;
      vector[3] = rates.scale * (prices[kind] as number);
      return vector;
    };
    const regions: Array<[start: number, end: number, kind: number]> = [
      [0, read, 0],
      [read, written, 1],
      [written, total, 2],
    ];
    const widest = regions.reduce((best, region) =>
      region[1] - region[0] > best[1] - best[0] ? region : best,
    );
    const globalUnit = unit(widest[2]);
    this.global.add(globalUnit, 1);
    this.callCount += 1;
    const headRent = new Accumulator();
    for (const [start, end, kind] of regions) {
      if (end <= start) continue;
      headRent.add(unit(kind), Math.max(0, Math.min(end, head) - start));
      if (kind === widest[2] || end <= head) continue;
      this.billRange(Math.max(start, head) - head, end - head, difference(unit(kind), globalUnit));
    }
    this.order = [];
    const [r, w, i, cost] = headRent.sum;
    return { cacheRead: r, cacheWrite: w, input: i, cost };
  }

  /** Settles what range additions owe each entry, and starts them afresh for `positions`. */
  private settlePending(positions: number): void {
    const owed: Vector = [0, 0, 0, 0];
    for (let position = 0; position < this.pendingPositions; position++) {
      owed.fill(0);
      this.pending.sumAt(position, owed);
      if (owed[0] === 0 && owed[1] === 0 && owed[2] === 0 && owed[3] === 0) continue;
      this.tenants.get(this.seqAt[position] as number)?.own.add(owed, 1);
    }
    this.pending.reset(positions);
    this.pendingPositions = 0;
  }

  /** Estimated tokens of the surface {@link admit} took last. */
  surfaceTokens(): number {
    return this.before[this.order.length] as number;
  }

  /** The rent `seq` paid so far. */
  rent(seq: number): EntryRentFigures | undefined {
    if (this.pendingPositions > 0) this.settlePending(0);
    const tenant = this.tenants.get(seq);
    if (tenant === undefined) return undefined;
    const total = new Accumulator();
    total.add(tenant.settled.sum, 1);
    total.add(tenant.own.sum, 1);
    let calls = tenant.settledCalls;
    if (tenant.callsSince >= 0) {
      total.add(difference(this.global.sum, tenant.since), 1);
      calls += this.callCount - tenant.callsSince;
    }
    const [cacheRead, cacheWrite, input, cost] = total.sum;
    return {
      tokens: tenant.tokens,
      calls,
      cacheRead: cacheRead * tenant.tokens,
      cacheWrite: cacheWrite * tenant.tokens,
      input: input * tenant.tokens,
      cost: cost * tenant.tokens,
    };
  }

  /** Every entry that was ever in a billed request, by seq. */
  seqs(): IterableIterator<number> {
    return this.tenants.keys();
  }

  /**
   * Takes a call's surface (the walk's array, read until {@link bill}; entries before
   * `changedFrom` are those of the call admitted before): new entries start paying.
   */
  admit(order: readonly number[], changedFrom: number): void {
    const from = Math.min(changedFrom, this.before.length - 1, order.length);
    // Positions from the change on now hold other entries: what was added there is settled first.
    if (from < this.pendingPositions || order.length > this.pending.capacity) {
      this.settlePending(order.length);
    }
    for (let index = from; index < order.length; index++) {
      const seq = order[index] as number;
      let tenant = this.tenants.get(seq);
      if (tenant === undefined) {
        tenant = {
          tokens: this.tokensOf(seq),
          since: [...this.global.sum],
          callsSince: this.callCount,
          own: new Accumulator(),
          settled: new Accumulator(),
          settledCalls: 0,
        };
        this.tenants.set(seq, tenant);
      } else if (tenant.callsSince < 0) {
        tenant.since.splice(0, 4, ...this.global.sum);
        tenant.callsSince = this.callCount;
      }
      this.before[index + 1] = (this.before[index] as number) + tenant.tokens;
      this.seqAt[index] = seq;
    }
    this.before.length = order.length + 1;
    this.seqAt.length = order.length;
    this.order = order;
  }

  /**
   * Adds `delta` (per estimated token) to the entries overlapping `[start, end)`, by overlap: the
   * two at the ends by their share, those between through the range additions.
   */
  private billRange(start: number, end: number, delta: Readonly<Vector>): void {
    const first = firstEndingAfter(this.before, start);
    const last = Math.min(firstEndingAfter(this.before, end), this.order.length - 1);
    for (const index of first === last ? [first] : [first, last]) {
      const tenant = this.tenants.get(this.order[index] as number);
      const from = this.before[index] as number;
      const to = this.before[index + 1] as number;
      if (tenant !== undefined && to > from) {
        tenant.own.add(delta, Math.max(0, Math.min(to, end) - Math.max(from, start)) / (to - from));
      }
    }
    if (last - first > 1) {
      this.pending.add(first + 1, last, delta);
      this.pendingPositions = Math.max(this.pendingPositions, this.order.length);
    }
  }
}

function difference(a: Readonly<Vector>, b: Readonly<Vector>): Vector {
  return [a[0] - b[0], a[1] - b[1], a[2] - b[2], a[3] - b[3]];
}

/** The first index whose part ends after `position` (binary search over cumulative tokens). */
function firstEndingAfter(before: readonly number[], position: number): number {
  let low = 0;
  let high = before.length - 1;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if ((before[middle + 1] as number) > position) high = middle;
    else low = middle + 1;
  }
  return low;
}
