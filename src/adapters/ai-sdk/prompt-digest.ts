/**
 * The request digest of an AI SDK prompt, request after request. A client's prompt usually
 * extends its previous one, and palimpsest's loop sends the very same message objects again
 * (its provider messages are built once per message), so the hash of the header and of the
 * messages seen so far is kept, and a request that extends the previous one by the same objects
 * hashes only its new messages. Any other request is hashed whole; each message object's
 * conversion and digest are computed once either way.
 */
import type { LanguageModelV3 } from '@ai-sdk/provider';
import type { RequestHeaderData } from '../../core/index.js';
import { headText, messageFacts, RunningDigest } from '../../model/index.js';
import { convertMessages, type PromptMessage } from './from-model.js';

/** The digests of the messages one prompt message converts to, by prompt message. */
const promptDigests = new WeakMap<PromptMessage, readonly string[]>();

/** {@link requestDigest} of the messages `convertMessages` makes of a prompt, kept across calls. */
export class PromptDigester {
  private last: { prompt: readonly PromptMessage[]; running: RunningDigest } | undefined;

  constructor(private readonly model: Pick<LanguageModelV3, 'provider' | 'modelId'>) {}

  /** The digest of the request of `header` and `prompt` (the prompt without system messages). */
  digest(header: RequestHeaderData, prompt: readonly PromptMessage[]): string {
    const head = headText(header);
    const last = this.last;
    const extending =
      last !== undefined && last.running.head === head && extends_(prompt, last.prompt);
    const running = extending ? last.running : new RunningDigest(head);
    for (let index = extending ? last.prompt.length : 0; index < prompt.length; index++) {
      for (const digest of this.digestsOf(prompt[index] as PromptMessage, index)) {
        running.add(digest);
      }
    }
    this.last = { prompt: prompt.slice(), running };
    return running.value();
  }

  private digestsOf(message: PromptMessage, index: number): readonly string[] {
    let digests = promptDigests.get(message);
    if (digests === undefined) {
      digests = convertMessages([message], { model: this.model }, index).map(
        (converted) => messageFacts(converted).digest,
      );
      promptDigests.set(message, digests);
    }
    return digests;
  }
}

/** Whether `prompt` begins with the very objects of `previous`. */
function extends_(prompt: readonly PromptMessage[], previous: readonly PromptMessage[]): boolean {
  if (prompt.length < previous.length) return false;
  for (let index = 0; index < previous.length; index++) {
    if (prompt[index] !== previous[index]) return false;
  }
  return true;
}
