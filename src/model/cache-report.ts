/**
 * Prompt-cache breaks, explained from the log. Providers cache the prefix of a request: the tool
 * definitions, then the system prompt, then the messages in order (Anthropic's documented order;
 * OpenAI caches the longest prefix of the prompt it saw before). A call's request normally
 * extends the previous call's, so all of the previous request can be read from the cache; when
 * something early changes (a compaction summary, a pruned tool result, an edited system prompt,
 * a reordered tool list), every token after it is sent uncached again. For each call this finds
 * the prefix it shares with the call before it and, where that prefix broke, the event that
 * broke it, in one pass over the log.
 */
import type { Message, RequestHeaderData, Session, TokenUsage } from '../core/index.js';
import { deriveEventMessage, estimateTokens } from '../core/index.js';
import { type CallStart, walkCalls } from './call-walk.js';
import { messageTokens } from './message-tokens.js';
import { canonicalJson, messageFacts, messageText } from './request-digest.js';

/** What made a request share less than the whole previous request. */
export type CacheBreakCause =
  /** The provider or the model changed: a cache belongs to one model, nothing is shared. */
  | 'model'
  /** The tool definitions changed. */
  | 'tools'
  /** The same tool definitions, in another order. */
  | 'tools-reordered'
  | 'system'
  /** A compaction summary replaced part of the history. */
  | 'compaction'
  /** A pruned tool result replaced the original. */
  | 'prune'
  /** Another replace rewrote the surface. */
  | 'replace';

/** Where and why a call's request stopped sharing the previous call's. */
export interface CacheBreak {
  readonly cause: CacheBreakCause;
  /** The event that broke the prefix: the `request/header` in effect, or the replacing event. */
  readonly seq?: number;
  /** For a break in the messages, the index of the first message the requests do not share. */
  readonly messageIndex?: number;
  /** Estimated tokens of the previous request that this one no longer shares. */
  readonly lostTokens: number;
}

/** One model call of a {@link CacheReport}. */
export interface CacheCall {
  /** The seq of the call's `assistant/message`. */
  readonly seq: number;
  /** The seq of the call's `step/start`. */
  readonly stepStartSeq: number;
  readonly turn: number;
  readonly step: number;
  /** The request's size: characters of its canonical form (tools, system prompt, messages). */
  readonly requestChars: number;
  /** The request's estimated tokens (core's `estimateTokens`, an over-estimate). */
  readonly requestTokens: number;
  /** The prefix it shares with the previous call's request, in characters and estimated tokens. */
  readonly sharedChars: number;
  readonly sharedTokens: number;
  /** What the provider reported, where the call's usage has it. */
  readonly usage?: Pick<TokenUsage, 'inputTokens' | 'cachedInputTokens' | 'cacheWriteTokens'>;
  /** Present when the request shares less than the whole previous request. */
  readonly break?: CacheBreak;
}

/** Every model call of a session with the prefix it shared, and the totals. */
export interface CacheReport {
  readonly calls: readonly CacheCall[];
  /** Estimated tokens of every request, and of the prefixes they shared with the call before. */
  readonly requestTokens: number;
  readonly sharedTokens: number;
  /** Sums of the provider-reported counts, over the calls that reported them. */
  readonly inputTokens?: number;
  readonly cachedInputTokens?: number;
  readonly cacheWriteTokens?: number;
  /** How many calls broke the prefix. */
  readonly breaks: number;
}

/**
 * For each model call of `session`, the prefix its request shares with the previous call's, in
 * characters and estimated tokens, beside the cached tokens the provider reported; where the
 * prefix broke, the event that broke it. One pass over the log: each call costs what it added.
 *
 * @example
 * ```ts
 * import { Session } from 'palimpsest';
 * import { cacheReport, runTurn } from 'palimpsest/agent';
 * import { scriptedModel } from 'palimpsest/testing';
 *
 * const session = Session.create({ id: 'cache-example' });
 * const model = scriptedModel([{ text: 'Hi!' }, { text: 'Still here.' }]);
 * await runTurn({ session, model, system: 'Be brief.', input: 'Hello' });
 * await runTurn({ session, model, system: 'Be very brief.', input: 'Again' });
 * const report = cacheReport(session);
 * console.log(report.calls.length); // 2
 * console.log(report.calls[1]?.break?.cause); // 'system'
 * ```
 */
export function cacheReport(session: Session): CacheReport {
  const reading = new CacheReading(session);
  walkCalls(session, {
    replace: (replacement) => reading.replaced(replacement.seq, replacement.shadowedSeqs),
    begin: (call) => reading.begin(call),
    answer: (seq, answer) => reading.answered(seq, answer.data.usage),
  });
  return reading.report();
}

/** The header's part of a request, as the cache sees it. */
interface HeaderPart {
  readonly model: string;
  readonly toolsText: string;
  /** Each tool's canonical JSON, sorted: equal for a reordered tool list. */
  readonly toolSet: string;
  readonly system: string;
  readonly toolsTokens: number;
  readonly systemTokens: number;
}

const headerParts = new WeakMap<RequestHeaderData, HeaderPart>();
const NO_HEADER: HeaderPart = {
  model: '',
  toolsText: '[]',
  toolSet: '',
  system: '',
  toolsTokens: 0,
  systemTokens: 0,
};

function headerPart(header: RequestHeaderData | undefined): HeaderPart {
  if (header === undefined) return NO_HEADER;
  let part = headerParts.get(header);
  if (part === undefined) {
    const tools = header.tools ?? [];
    const toolsText = canonicalJson(tools);
    const system = header.system ?? '';
    part = {
      model: `${header.provider}\u0000${header.model}`,
      toolsText,
      toolSet: tools
        .map((tool) => canonicalJson(tool))
        .sort()
        .join('\n'),
      system,
      toolsTokens: tools.length === 0 ? 0 : estimateTokens(toolsText),
      systemTokens: estimateTokens(system),
    };
    headerParts.set(header, part);
  }
  return part;
}

type Pending = Omit<CacheCall, 'seq' | 'usage'>;

/** The walk's state: the previous request as seqs with running sizes, and what changed since. */
class CacheReading {
  private readonly calls: CacheCall[] = [];
  /** The previous request's surface, and the characters and tokens before each of its entries. */
  private readonly previous: number[] = [];
  private readonly charsBefore: number[] = [0];
  private readonly tokensBefore: number[] = [0];
  private previousHeader: HeaderPart | undefined;
  /** Seqs shadowed since the previous call, with the seq of the event that replaced each. */
  private readonly replacedBy = new Map<number, number>();
  private pending: Pending | undefined;

  constructor(private readonly session: Session) {}

  replaced(seq: number, shadowed: readonly number[]): void {
    for (const old of shadowed) this.replacedBy.set(old, seq);
  }

  begin(call: CallStart): void {
    const header = headerPart(call.header);
    const order = call.order;
    const previous = this.previous;
    // Entries before the first change are the same events, hence the same messages.
    const unchanged = Math.min(call.changedFrom, previous.length, order.length);
    let same = unchanged;
    while (
      same < previous.length &&
      same < order.length &&
      this.facts(previous[same] as number).digest === this.facts(order[same] as number).digest
    ) {
      same++;
    }
    const shared = this.shared(header, call.headerSeq, order, same);
    for (let index = unchanged; index < order.length; index++) {
      const seq = order[index] as number;
      previous[index] = seq;
      const message = this.message(seq);
      this.charsBefore[index + 1] = (this.charsBefore[index] as number) + this.facts(seq).chars;
      this.tokensBefore[index + 1] =
        (this.tokensBefore[index] as number) + (message === null ? 0 : messageTokens(message));
    }
    previous.length = order.length;
    this.charsBefore.length = order.length + 1;
    this.tokensBefore.length = order.length + 1;
    this.previousHeader = header;
    this.replacedBy.clear();
    this.pending = {
      stepStartSeq: call.stepStartSeq,
      turn: call.turn,
      step: call.step,
      requestChars: headerChars(header) + (this.charsBefore[order.length] as number),
      requestTokens: headerTokens(header) + (this.tokensBefore[order.length] as number),
      ...shared,
    };
  }

  answered(seq: number, usage: TokenUsage | undefined): void {
    if (this.pending === undefined) return;
    const reported = reportedUsage(usage);
    this.calls.push({
      seq,
      ...this.pending,
      ...(reported === undefined ? {} : { usage: reported }),
    });
    this.pending = undefined;
  }

  report(): CacheReport {
    let requestTokens = 0;
    let sharedTokens = 0;
    let breaks = 0;
    const reported: { -readonly [K in keyof NonNullable<CacheCall['usage']>]?: number } = {};
    for (const call of this.calls) {
      requestTokens += call.requestTokens;
      sharedTokens += call.sharedTokens;
      if (call.break !== undefined) breaks++;
      for (const key of USAGE_KEYS) {
        const count = call.usage?.[key];
        if (count !== undefined) reported[key] = (reported[key] ?? 0) + count;
      }
    }
    return { calls: this.calls, requestTokens, sharedTokens, ...reported, breaks };
  }

  /** The prefix shared with the previous request, whose messages match up to `same`. */
  private shared(
    header: HeaderPart,
    headerSeq: number | undefined,
    order: readonly number[],
    same: number,
  ): Pick<CacheCall, 'sharedChars' | 'sharedTokens' | 'break'> {
    const before = this.previousHeader;
    if (before === undefined) return { sharedChars: 0, sharedTokens: 0 };
    const previousTokens =
      headerTokens(before) + (this.tokensBefore[this.previous.length] as number);
    const broken = (
      cause: CacheBreakCause,
      sharedChars: number,
      sharedTokens: number,
      at: { seq?: number; messageIndex?: number },
    ) => ({
      sharedChars,
      sharedTokens,
      break: { cause, ...at, lostTokens: Math.max(0, previousTokens - sharedTokens) },
    });
    const headerAt = headerSeq === undefined ? {} : { seq: headerSeq };
    if (header.model !== before.model) return broken('model', 0, 0, headerAt);
    if (header.toolsText !== before.toolsText) {
      const chars = commonPrefix(before.toolsText, header.toolsText);
      const tokens = share(before.toolsTokens, chars, before.toolsText.length);
      const cause = header.toolSet === before.toolSet ? 'tools-reordered' : 'tools';
      return broken(cause, chars, tokens, headerAt);
    }
    const toolsChars = before.toolsTokens === 0 ? 0 : before.toolsText.length;
    if (header.system !== before.system) {
      const chars = commonPrefix(before.system, header.system);
      const tokens = before.toolsTokens + share(before.systemTokens, chars, before.system.length);
      return broken('system', toolsChars + chars, tokens, headerAt);
    }
    let chars = headerChars(before) + (this.charsBefore[same] as number);
    let tokens = headerTokens(before) + (this.tokensBefore[same] as number);
    if (same === this.previous.length) return { sharedChars: chars, sharedTokens: tokens };
    const old = this.previous[same] as number;
    if (same < order.length) {
      const oldMessage = this.message(old);
      const newMessage = this.message(order[same] as number);
      if (oldMessage !== null && newMessage !== null) {
        const partial = commonPrefix(messageText(oldMessage), messageText(newMessage));
        chars += partial;
        tokens += share(messageTokens(oldMessage), partial, this.facts(old).chars);
      }
    }
    const by = this.replacedBy.get(old) ?? order[same];
    return broken(by === undefined ? 'replace' : rewriteCause(this.session, by), chars, tokens, {
      ...(by === undefined ? {} : { seq: by }),
      messageIndex: same,
    });
  }

  private message(seq: number): Message | null {
    const event = this.session.event(seq);
    return event === undefined ? null : deriveEventMessage(event);
  }

  private facts(seq: number): { digest: string; chars: number } {
    const message = this.message(seq);
    return message === null ? NO_MESSAGE : messageFacts(message);
  }
}

const NO_MESSAGE = { digest: '', chars: 0 };
const USAGE_KEYS = ['inputTokens', 'cachedInputTokens', 'cacheWriteTokens'] as const;

function reportedUsage(usage: TokenUsage | undefined): CacheCall['usage'] {
  if (usage === undefined) return undefined;
  const picked: { -readonly [K in (typeof USAGE_KEYS)[number]]?: number } = {};
  for (const key of USAGE_KEYS) {
    const count = usage[key];
    if (count !== undefined) picked[key] = count;
  }
  return Object.keys(picked).length === 0 ? undefined : picked;
}

function headerChars(part: HeaderPart): number {
  return (part.toolsTokens === 0 ? 0 : part.toolsText.length) + part.system.length;
}

function headerTokens(part: HeaderPart): number {
  return part.toolsTokens + part.systemTokens;
}

/** The tokens of the first `chars` of a text of `total` characters and `tokens` tokens. */
function share(tokens: number, chars: number, total: number): number {
  return total === 0 ? 0 : Math.floor((tokens * chars) / total);
}

function commonPrefix(a: string, b: string): number {
  const end = Math.min(a.length, b.length);
  let index = 0;
  while (index < end && a.charCodeAt(index) === b.charCodeAt(index)) index++;
  return index;
}

/**
 * What wrote the replacing event at `seq`: a replace inside a compaction bracket says which kind
 * of compaction (a summary, a prune); anything else is a plain `replace`.
 */
export function rewriteCause(session: Session, seq: number): 'compaction' | 'prune' | 'replace' {
  for (let at = seq - 1; at >= 0; at--) {
    const type = session.eventType(at);
    if (type === 'compaction/start') {
      const kind = (session.event(at)?.data as { kind?: unknown } | undefined)?.kind;
      return kind === 'summary' ? 'compaction' : kind === 'prune' ? 'prune' : 'replace';
    }
    if (type !== 'tool/result' && type !== 'user/message' && type !== 'context/message') {
      return 'replace';
    }
  }
  return 'replace';
}

/** Estimated tokens of a request's header part: its tools' schemas and its system prompt. */
export function requestHeaderTokens(header: RequestHeaderData | undefined): number {
  return headerTokens(headerPart(header));
}
