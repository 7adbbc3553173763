/**
 * One summary request: the range's messages under the session's own system prompt and tool
 * schemas (so the request is a prefix of the conversation's last request and the provider's
 * prompt cache still hits), followed by the instructions as a final user message.
 */

import type { LanguageModelV3, LanguageModelV3StreamPart } from '@ai-sdk/provider';
import type { Message, ProviderFailure, RequestHeaderData, TokenUsage } from '../core/index.js';
import { buildCallOptions, callModel, mapUsage, type RetryPolicy } from '../model/index.js';

/** What the summarizer is asked for, unless the caller gives its own instructions. */
export const DEFAULT_INSTRUCTIONS = `Stop the task for a moment: the conversation above is about to be replaced by a summary you write now, and the agent will continue from that summary alone.

Write the summary as terse Markdown with these sections, writing "(none)" where a section is empty:
## Goal — what the user asked for, in their words where it matters, including corrections they made.
## Decisions — what was decided and why.
## Files and commands — every file read or changed and every command run that still matters, with exact paths, names and identifiers.
## Errors — errors met and how they were resolved, quoting exact messages.
## Open questions — what is unresolved or waiting on the user.
## Next step — what the agent was about to do.

If the conversation starts with an earlier summary, merge it into yours instead of copying it. Keep exact values (paths, ids, numbers, commands); drop pleasantries and anything already superseded. Do not call tools and do not mention that this is a summary.`;

/** The outcome of a summary request. */
export type SummaryOutcome =
  | { readonly ok: true; readonly text: string; readonly usage?: TokenUsage }
  | { readonly ok: false; readonly aborted: boolean; readonly failure: ProviderFailure };

/**
 * Requests a summary of `messages` through the model layer's call, which retries retryable
 * failures as `retry` says and settles promptly on abort, even for a model that ignores it.
 */
export async function summarize(options: {
  readonly model: LanguageModelV3;
  readonly header: RequestHeaderData | undefined;
  readonly messages: readonly Message[];
  readonly instructions: string;
  readonly maxOutputTokens: number;
  readonly signal: AbortSignal;
  readonly retry: RetryPolicy;
}): Promise<SummaryOutcome> {
  const { model, signal } = options;
  const instructions: Message = {
    id: 'compaction-instructions',
    role: 'user',
    content: [{ type: 'text', text: options.instructions }],
    source: { kind: 'compaction-instructions' },
  };
  const header: RequestHeaderData = options.header ?? {
    provider: model.provider,
    model: model.modelId,
  };
  const request = {
    ...buildCallOptions(header, [...options.messages, instructions]),
    maxOutputTokens: options.maxOutputTokens,
  };
  if (request.tools !== undefined) request.toolChoice = { type: 'none' };
  let text = '';
  let finish: string | undefined;
  let usage: TokenUsage | undefined;
  const onPart = (part: LanguageModelV3StreamPart): void => {
    if (part.type === 'text-delta') text += part.delta;
    else if (part.type === 'finish') {
      finish = part.finishReason.unified;
      usage = mapUsage(part.usage);
    }
  };
  const outcome = await callModel({
    model,
    request,
    signal,
    retry: options.retry,
    onPart,
    onRetry: () => {
      // What the failed attempt streamed is not part of the summary.
      text = '';
      finish = undefined;
      usage = undefined;
    },
  });
  if (outcome.kind === 'aborted') return aborted(signal);
  if (outcome.kind === 'failed') {
    return { ok: false, aborted: false, failure: outcome.failure.failure };
  }
  if (finish === 'length') {
    return failed({ message: 'the summary hit the output token limit', code: 'MAX_TOKENS' });
  }
  if (text.trim() === '') {
    return failed({ message: 'the model returned no summary text', code: 'EMPTY_SUMMARY' });
  }
  return { ok: true, text: text.trim(), ...(usage === undefined ? {} : { usage }) };
}

function failed(failure: ProviderFailure): SummaryOutcome {
  return { ok: false, aborted: false, failure };
}

function aborted(signal: AbortSignal): SummaryOutcome {
  const reason = signal.reason;
  const message = reason instanceof Error ? reason.message : String(reason ?? 'aborted');
  return { ok: false, aborted: true, failure: { message, code: 'ABORTED' } };
}
