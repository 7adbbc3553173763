/**
 * The AI SDK's own recordings of real provider streams (`test/fixtures/ai-sdk/`, carried from the
 * `vercel/ai` repository with its license), as replies for the wire server. A recording is the
 * data lines of one or more SSE responses, one JSON chunk per line; a multi-step run holds one
 * response after another, each beginning with its `response.created` chunk (Responses API).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseWireFixture, type WireFixture } from './wire-server.js';

/** The directory holding the AI SDK's recordings. */
export const sdkRecordingsDir: string = join(import.meta.dirname, '..', 'fixtures', 'ai-sdk');

/**
 * The responses of a recording under {@link sdkRecordingsDir}, each an SSE response the wire
 * server replays byte for byte: `data: <chunk>` events in the recorded order, then `data: [DONE]`
 * for a chat-completions stream (the recordings keep the chunks, not the terminator, which the
 * API sends and the SDK's own tests add back).
 */
export function sdkRecording(
  name: string,
  options: { readonly done?: boolean } = {},
): WireFixture[] {
  const lines = readFileSync(join(sdkRecordingsDir, name), 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '');
  const responses: string[][] = [];
  for (const line of lines) {
    const chunk = JSON.parse(line) as { type?: unknown };
    if (chunk.type === 'response.created' || responses.length === 0) responses.push([]);
    responses.at(-1)?.push(line);
  }
  return responses.map((chunks, index) =>
    parseWireFixture(
      [
        `# ${name}, response ${index + 1} of ${responses.length}`,
        'HTTP/1.1 200 OK',
        'content-type: text/event-stream; charset=utf-8',
        `x-request-id: req_recording_${index + 1}`,
        '',
        chunks.map((chunk) => `data: ${chunk}\n\n`).join('') +
          (options.done === true ? 'data: [DONE]\n\n' : ''),
      ].join('\n'),
      `${name}#${index + 1}`,
    ),
  );
}
