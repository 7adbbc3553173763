/**
 * A `doGenerate` result as the stream parts a `doStream` of the same response would have sent,
 * so a generated response is recorded by the same rules as a streamed one: chunks, then one
 * message citing them.
 */
import type { LanguageModelV3GenerateResult, LanguageModelV3StreamPart } from '@ai-sdk/provider';

/** The parts of `result`, in content order, ending with its `finish`. */
export function generatedParts(result: LanguageModelV3GenerateResult): LanguageModelV3StreamPart[] {
  const parts: LanguageModelV3StreamPart[] = [];
  for (const [index, content] of result.content.entries()) {
    const id = String(index);
    switch (content.type) {
      case 'text':
      case 'reasoning': {
        const metadata =
          content.providerMetadata === undefined
            ? {}
            : { providerMetadata: content.providerMetadata };
        if (content.type === 'text') {
          parts.push({ type: 'text-start', id, ...metadata });
          parts.push({ type: 'text-delta', id, delta: content.text });
          parts.push({ type: 'text-end', id });
        } else {
          parts.push({ type: 'reasoning-start', id, ...metadata });
          parts.push({ type: 'reasoning-delta', id, delta: content.text });
          parts.push({ type: 'reasoning-end', id });
        }
        break;
      }
      default:
        // Tool calls, files, sources, provider tool results and approvals share their shape.
        parts.push(content);
    }
  }
  parts.push({
    type: 'finish',
    finishReason: result.finishReason,
    usage: result.usage,
    ...(result.providerMetadata === undefined ? {} : { providerMetadata: result.providerMetadata }),
  });
  return parts;
}
