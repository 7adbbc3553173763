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

/** Four numbers per tenant, in one growing typed array: a ledger of a long session holds tens of thousands. */
class Quads {
  values = new Float64Array(4 * 64);

  grow(tenants: number): void {
    if (4 * tenants <= this.values.length) return;
    const values = new Float64Array(Math.max(4 * tenants, 2 * this.values.length));
    values.set(this.values);
    this.values = values;
  }

  /** Adds `vector × times` to tenant `t`'s four. */
  add(t: number, vector: Readonly<Vector>, times: number): void {
    const values = this.values;
    for (let k = 0; k < 4; k++)
      values[4 * t + k] = (values[4 * t + k] as number) + (vector[k] as number) * times;
  }
}

/** The rent an entry paid, in tokens of each kind and money, over how many calls. */
export interface EntryRentFigures extends RentFigures {
  /** Its estimated tokens. */
  readonly tokens: number;
  /** The billed calls whose request held it. */
  readonly calls: number;
}

const NO_RENT: RentFigures = { cacheRead: 0, cacheWrite: 0, input: 0, cost: 0 };

/**
 * The ledger the walk keeps: who is on the surface, and what each call billed them. A tenant
 * (an entry that was ever in a billed request) is an index into flat arrays, not an object: its
 * estimated tokens, the global sum and call count when it last entered the surface, what it was
 * billed beyond the global kind, and what it paid over stretches it has left.
 */
export class RentLedger {
  /** The running sum, per estimated token, of the kind each call billed most of its request as. */
  private readonly global: Vector = [0, 0, 0, 0];
  private callCount = 0;
  private readonly tenantOf = new Map<number, number>();
  private readonly seqOf: number[] = [];
  private readonly tokens: number[] = [];
  /** The call count when it entered the surface, -1 while it is off it. */
  private readonly callsSince: number[] = [];
  private readonly settledCalls: number[] = [];
  private readonly since = new Quads();
  private readonly own = new Quads();
  private readonly settled = new Quads();
  /** The request being billed: its length, cumulative tokens, the tenant at each position. */
  private length = 0;
  private readonly before: number[] = [0];
  private readonly tenantAt: number[] = [];
  /** What range additions added at each position since the positions last changed. */
  private readonly pending = new RangeAdd();
  private pendingPositions = 0;
  /** Scratch vectors, filled afresh for each use. */
  private readonly unitVector: Vector = [0, 0, 0, 0];
  private readonly deltaVector: Vector = [0, 0, 0, 0];
  private readonly gap: Vector = [0, 0, 0, 0];
  private readonly total: Vector = [0, 0, 0, 0];

  /** @param tokensOf Estimated tokens of the message a surface entry contributes. */
  constructor(private readonly tokensOf: (seq: number) => number) {}

  /** Entries a replace shadowed leave the surface: their rent stops. */
  leave(seqs: readonly number[]): void {
    for (const seq of seqs) {
      const t = this.tenantOf.get(seq);
      if (t === undefined || (this.callsSince[t] as number) < 0) continue;
      this.settled.add(t, this.sinceEntered(t), 1);
      this.settledCalls[t] =
        (this.settledCalls[t] as number) + (this.callCount - (this.callsSince[t] as number));
      this.callsSince[t] = -1;
    }
  }

  /**
   * Bills the call {@link admit} took last: its request is `head` estimated tokens of tools and
   * system, then the surface, of which `cacheRead` and `cacheWrite` reported tokens at the front
   * were cache reads and writes and the rest uncached input. Returns what the head cost.
   */
  bill(head: number, rates: CallRates, cacheRead: number, cacheWrite: number): RentFigures {
    const total = head + (this.before[this.length] as number);
    if (total <= 0 || rates.scale <= 0) return NO_RENT;
    // Region ends in estimated tokens: [0, read) cache reads, [read, written) writes, the rest input.
    const read = Math.min(total, cacheRead / rates.scale);
    const written = Math.min(total, read + cacheWrite / rates.scale);
    const starts = [0, read, written];
    const ends = [read, written, total];
    // The widest region's kind is billed to every entry at once, through the global sum.
    let widest = 0;
    for (let kind = 1; kind < 3; kind++) {
      if (
        (ends[kind] as number) - (starts[kind] as number) >
        (ends[widest] as number) - (starts[widest] as number)
      )
        widest = kind;
    }
    const globalUnit = this.unit(widest, rates, this.unitVector);
    for (let k = 0; k < 4; k++)
      this.global[k] = (this.global[k] as number) + (globalUnit[k] as number) * 1;
    this.callCount += 1;
    const headRent: Vector = [0, 0, 0, 0];
    for (let kind = 0; kind < 3; kind++) {
      const start = starts[kind] as number;
      const end = ends[kind] as number;
      if (end <= start) continue;
      const share = Math.max(0, Math.min(end, head) - start);
      const perToken = rates.scale * kindPrice(rates, kind);
      headRent[kind] = (headRent[kind] as number) + rates.scale * share;
      headRent[3] = (headRent[3] as number) + perToken * share;
      if (kind === widest || end <= head) continue;
      const delta = this.deltaVector;
      for (let k = 0; k < 4; k++)
        delta[k] = (k === kind ? rates.scale : 0) - (globalUnit[k] as number);
      delta[3] = perToken - (globalUnit[3] as number);
      this.billRange(Math.max(start, head) - head, end - head, delta);
    }
    const [r, w, i, cost] = headRent;
    return { cacheRead: r, cacheWrite: w, input: i, cost };
  }

  /** One estimated token of `kind` billed at `rates`, into `into`. */
  private unit(kind: number, rates: CallRates, into: Vector): Vector {
    into.fill(0);
    into[kind] = rates.scale;
    into[3] = rates.scale * kindPrice(rates, kind);
    return into;
  }

  /** Settles what range additions owe each entry, and starts them afresh for `positions`. */
  private settlePending(positions: number): void {
    const owed: Vector = [0, 0, 0, 0];
    for (let position = 0; position < this.pendingPositions; position++) {
      owed.fill(0);
      this.pending.sumAt(position, owed);
      if (owed[0] === 0 && owed[1] === 0 && owed[2] === 0 && owed[3] === 0) continue;
      const t = this.tenantAt[position];
      if (t !== undefined) this.own.add(t, owed, 1);
    }
    this.pending.reset(positions);
    this.pendingPositions = 0;
  }

  /** Estimated tokens of the surface {@link admit} took last. */
  surfaceTokens(): number {
    return this.before[this.length] as number;
  }

  /**
   * Every entry that was ever in a billed request, with what it paid, in the order they entered.
   * `rent` is one object refilled for each entry: read it during the callback.
   */
  forEach(found: (seq: number, rent: EntryRentFigures) => void): void {
    for (let t = 0; t < this.seqOf.length; t++) {
      found(this.seqOf[t] as number, this.rentOf(t, this.figures));
    }
  }

  private readonly figures = {
    tokens: 0,
    calls: 0,
    cacheRead: 0,
    cacheWrite: 0,
    input: 0,
    cost: 0,
  } satisfies EntryRentFigures;

  /** Tenant `t`'s rent, into `into`. */
  private rentOf(
    t: number,
    into: { -readonly [K in keyof EntryRentFigures]: number },
  ): EntryRentFigures {
    if (this.pendingPositions > 0) this.settlePending(0);
    const total = this.total;
    for (let k = 0; k < 4; k++) {
      total[k] = 0 + (this.settled.values[4 * t + k] as number) * 1;
      total[k] = (total[k] as number) + (this.own.values[4 * t + k] as number) * 1;
    }
    let calls = this.settledCalls[t] as number;
    const callsSince = this.callsSince[t] as number;
    if (callsSince >= 0) {
      const gap = this.sinceEntered(t);
      for (let k = 0; k < 4; k++) total[k] = (total[k] as number) + (gap[k] as number) * 1;
      calls += this.callCount - callsSince;
    }
    const tokens = this.tokens[t] as number;
    into.tokens = tokens;
    into.calls = calls;
    into.cacheRead = (total[0] as number) * tokens;
    into.cacheWrite = (total[1] as number) * tokens;
    into.input = (total[2] as number) * tokens;
    into.cost = (total[3] as number) * tokens;
    return into;
  }

  /** Tenant `t` enters the surface: the global sum from now on is its. */
  private enter(t: number): void {
    const since = this.since.values;
    for (let k = 0; k < 4; k++) since[4 * t + k] = this.global[k] as number;
  }

  /** The global sum since tenant `t` entered the surface (a scratch vector). */
  private sinceEntered(t: number): Vector {
    const since = this.since.values;
    for (let k = 0; k < 4; k++)
      this.gap[k] = (this.global[k] as number) - (since[4 * t + k] as number);
    return this.gap;
  }

  /**
   * Takes a call's surface (the walk's array; entries before `changedFrom` are those of the call
   * admitted before): new entries start paying.
   */
  admit(order: readonly number[], changedFrom: number): void {
    const from = Math.min(changedFrom, this.before.length - 1, order.length);
    // Positions from the change on now hold other entries: what was added there is settled first.
    if (from < this.pendingPositions || order.length > this.pending.capacity) {
      this.settlePending(order.length);
    }
    for (let index = from; index < order.length; index++) {
      const seq = order[index] as number;
      let t = this.tenantOf.get(seq);
      if (t === undefined) {
        t = this.seqOf.length;
        this.tenantOf.set(seq, t);
        this.seqOf.push(seq);
        this.tokens.push(this.tokensOf(seq));
        this.callsSince.push(this.callCount);
        this.settledCalls.push(0);
        this.since.grow(t + 1);
        this.own.grow(t + 1);
        this.settled.grow(t + 1);
        this.enter(t);
      } else if ((this.callsSince[t] as number) < 0) {
        this.enter(t);
        this.callsSince[t] = this.callCount;
      }
      this.before[index + 1] = (this.before[index] as number) + (this.tokens[t] as number);
      this.tenantAt[index] = t;
    }
    this.before.length = order.length + 1;
    this.tenantAt.length = order.length;
    this.length = order.length;
  }

  /**
   * Adds `delta` (per estimated token) to the entries overlapping `[start, end)`, by overlap: the
   * two at the ends by their share, those between through the range additions.
   */
  private billRange(start: number, end: number, delta: Readonly<Vector>): void {
    const first = firstEndingAfter(this.before, start);
    const last = Math.min(firstEndingAfter(this.before, end), this.length - 1);
    for (let index = first; index <= last; index += Math.max(1, last - first)) {
      const t = this.tenantAt[index];
      const from = this.before[index] as number;
      const to = this.before[index + 1] as number;
      if (t !== undefined && to > from) {
        this.own.add(
          t,
          delta,
          Math.max(0, Math.min(to, end) - Math.max(from, start)) / (to - from),
        );
      }
    }
    if (last - first > 1) {
      this.pending.add(first + 1, last, delta);
      this.pendingPositions = Math.max(this.pendingPositions, this.length);
    }
  }
}

/** Money per reported token of kind 0 (cache read), 1 (cache write) or 2 (input). */
function kindPrice(rates: CallRates, kind: number): number {
  return kind === 0 ? rates.cacheRead : kind === 1 ? rates.cacheWrite : rates.input;
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
