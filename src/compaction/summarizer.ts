/**
 * One summary request: the range's messages under the session's own system prompt and tool
 * schemas (so the request is a prefix of the conversation's last request and the provider's
 * prompt cache still hits), followed by the instructions as a final user message.
 */

import type { LanguageModelV3 } from '@ai-sdk/provider';
import { sleep } from '../agent/abort.js';
import { type AttemptFailure, backoffMs, classifyFailure } from '../agent/provider-failure.js';
import { buildCallOptions } from '../agent/request.js';
import { mapUsage } from '../agent/step-stream.js';
import type { Message, RequestHeaderData, TokenUsage } from '../core/index.js';

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
  | { readonly ok: false; readonly aborted: boolean; readonly failure: AttemptFailure['failure'] };

/** Requests a summary of `messages`, retrying retryable provider failures. */
export async function summarize(options: {
  readonly model: LanguageModelV3;
  readonly header: RequestHeaderData | undefined;
  readonly messages: readonly Message[];
  readonly instructions: string;
  readonly maxOutputTokens: number;
  readonly signal: AbortSignal;
  readonly maxRetries: number;
  readonly retryDelayMs: number;
}): Promise<SummaryOutcome> {
  const { model, signal } = options;
  const request: Message = {
    id: 'compaction-instructions',
    role: 'user',
    content: [{ type: 'text', text: options.instructions }],
    source: { kind: 'compaction-instructions' },
  };
  const header: RequestHeaderData = options.header ?? {
    provider: model.provider,
    model: model.modelId,
  };
  const callOptions = {
    ...buildCallOptions(header, [...options.messages, request]),
    maxOutputTokens: options.maxOutputTokens,
    abortSignal: signal,
  };
  if (callOptions.tools !== undefined) callOptions.toolChoice = { type: 'none' };
  let failure: AttemptFailure | undefined;
  for (let attempt = 1; attempt <= options.maxRetries + 1; attempt++) {
    if (signal.aborted) break;
    const outcome = await attemptSummary(model, callOptions, signal);
    if (outcome.ok || outcome.aborted) return outcome;
    failure = outcome.attempt;
    if (!failure.retryable || attempt > options.maxRetries) break;
    await sleep(backoffMs(attempt, options.retryDelayMs, 60_000, failure), signal);
  }
  if (signal.aborted) return aborted(signal);
  return {
    ok: false,
    aborted: false,
    failure: failure?.failure ?? { message: 'the summary request failed' },
  };
}

type Attempt =
  | { readonly ok: true; readonly text: string; readonly usage?: TokenUsage }
  | ({ readonly ok: false; readonly aborted: true } & {
      readonly failure: AttemptFailure['failure'];
    })
  | {
      readonly ok: false;
      readonly aborted: false;
      readonly failure: AttemptFailure['failure'];
      readonly attempt: AttemptFailure;
    };

async function attemptSummary(
  model: LanguageModelV3,
  callOptions: Parameters<LanguageModelV3['doStream']>[0],
  signal: AbortSignal,
): Promise<Attempt> {
  let text = '';
  let finish: string | undefined;
  let usage: TokenUsage | undefined;
  try {
    const { stream } = await model.doStream(callOptions);
    const reader = stream.getReader();
    const onAbort = (): void => {
      reader.cancel().catch(() => {});
    };
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      for (;;) {
        const next = await reader.read();
        if (next.done || signal.aborted) break;
        const part = next.value;
        if (part.type === 'text-delta') text += part.delta;
        else if (part.type === 'finish') {
          finish = part.finishReason.unified;
          usage = mapUsage(part.usage);
        } else if (part.type === 'error') return failed(classifyFailure(part.error));
      }
    } finally {
      signal.removeEventListener('abort', onAbort);
      reader.cancel().catch(() => {});
    }
  } catch (error) {
    if (signal.aborted) return aborted(signal);
    return failed(classifyFailure(error));
  }
  if (signal.aborted) return aborted(signal);
  if (finish === 'length') {
    return failed({
      failure: { message: 'the summary hit the output token limit', code: 'MAX_TOKENS' },
      retryable: false,
    });
  }
  if (text.trim() === '') {
    return failed({
      failure: { message: 'the model returned no summary text', code: 'EMPTY_SUMMARY' },
      retryable: false,
    });
  }
  return { ok: true, text: text.trim(), ...(usage === undefined ? {} : { usage }) };
}

function failed(attempt: AttemptFailure): Attempt {
  return { ok: false, aborted: false, failure: attempt.failure, attempt };
}

function aborted(signal: AbortSignal): {
  ok: false;
  aborted: true;
  failure: AttemptFailure['failure'];
} {
  const reason = signal.reason;
  const message = reason instanceof Error ? reason.message : String(reason ?? 'aborted');
  return { ok: false, aborted: true, failure: { message, code: 'ABORTED' } };
}
