/**
 * A local HTTP server speaking the OpenAI Responses API (`POST /v1/responses`), enough for the
 * real `@openai/agents` runner: each request takes the next scripted output, answered as one
 * JSON response or, when the request asks for `stream: true`, as the server-sent events the
 * SDK's Responses model reads (`response.created`, output items, text deltas,
 * `response.completed`). Every request body is recorded, so tests can check what the model was
 * sent.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One output item of a scripted response, in the Responses API's wire shape. */
export type WireOutputItem =
  | {
      readonly type: 'message';
      readonly id: string;
      readonly role: 'assistant';
      readonly status: 'completed';
      readonly content: readonly { type: 'output_text'; text: string; annotations: [] }[];
    }
  | {
      readonly type: 'function_call';
      readonly id: string;
      readonly call_id: string;
      readonly name: string;
      readonly arguments: string;
      readonly status: 'completed';
    }
  | { readonly type: 'compaction'; readonly id: string; readonly encrypted_content: string };

/** An assistant text message output item. */
export function textOutput(id: string, text: string): WireOutputItem {
  return {
    type: 'message',
    id,
    role: 'assistant',
    status: 'completed',
    content: [{ type: 'output_text', text, annotations: [] }],
  };
}

/** A function call output item. */
export function callOutput(callId: string, name: string, args: object): WireOutputItem {
  return {
    type: 'function_call',
    id: `fc_${callId}`,
    call_id: callId,
    name,
    arguments: JSON.stringify(args),
    status: 'completed',
  };
}

/** A compaction output item, as `responses.compact` and server-side compaction return it. */
export function compactionOutput(id: string): WireOutputItem {
  return { type: 'compaction', id, encrypted_content: `gAAAA-${id}` };
}

/**
 * A running server: its base URL (for `baseURL`), the bodies of the `/responses` and
 * `/responses/compact` requests it got, and `close`.
 */
export interface ResponsesServer {
  readonly baseURL: string;
  readonly requests: readonly Record<string, unknown>[];
  readonly compactRequests: readonly Record<string, unknown>[];
  close(): Promise<void>;
}

/**
 * Starts a server on 127.0.0.1 that answers request n to `/responses` with `script[n]`, and
 * every request to `/responses/compact` with `compacted` (one compaction item by default).
 */
export async function startResponsesServer(
  script: readonly (readonly WireOutputItem[])[],
  compacted: readonly WireOutputItem[] = [compactionOutput('cmp_1')],
): Promise<ResponsesServer> {
  const requests: Record<string, unknown>[] = [];
  const compactRequests: Record<string, unknown>[] = [];
  const server = createServer((request, response) => {
    void answer(request, response);
  });
  async function answer(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
    if (request.url === '/v1/responses/compact') {
      compactRequests.push(body);
      response.writeHead(200, { 'content-type': 'application/json' });
      const reply = responseObject(`cmp_${compactRequests.length}`, body, compacted);
      response.end(JSON.stringify({ ...reply, object: 'response.compaction' }));
      return;
    }
    const index = requests.length;
    requests.push(body);
    const output = script[index];
    if (request.url !== '/v1/responses' || output === undefined) {
      response.writeHead(500, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ error: { message: `unscripted request ${index}` } }));
      return;
    }
    const completed = responseObject(`resp_${index + 1}`, body, output);
    if (body.stream !== true) {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify(completed));
      return;
    }
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    let sequence = 0;
    const send = (type: string, data: Record<string, unknown>) => {
      const event = { type, sequence_number: sequence++, ...data };
      response.write(`event: ${type}\ndata: ${JSON.stringify(event)}\n\n`);
    };
    send('response.created', {
      response: { ...completed, status: 'in_progress', output: [], usage: null },
    });
    output.forEach((item, outputIndex) => {
      send('response.output_item.added', {
        output_index: outputIndex,
        item: {
          ...item,
          status: 'in_progress',
          ...(item.type === 'message' ? { content: [] } : {}),
          ...(item.type === 'function_call' ? { arguments: '' } : {}),
        },
      });
      if (item.type === 'function_call') {
        // As the API streams a call (recorded in the AI SDK's Responses fixtures): the
        // arguments arrive as deltas, then whole, before the item is done.
        send('response.function_call_arguments.delta', {
          item_id: item.id,
          output_index: outputIndex,
          delta: item.arguments,
        });
        send('response.function_call_arguments.done', {
          item_id: item.id,
          output_index: outputIndex,
          arguments: item.arguments,
        });
      }
      if (item.type === 'message') {
        for (const part of item.content) {
          for (const delta of part.text.match(/.{1,8}/gs) ?? []) {
            send('response.output_text.delta', {
              item_id: item.id,
              output_index: outputIndex,
              content_index: 0,
              delta,
              logprobs: [],
            });
          }
        }
      }
      send('response.output_item.done', { output_index: outputIndex, item });
    });
    send('response.completed', { response: completed });
    response.end();
  }
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    compactRequests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function responseObject(
  id: string,
  request: Record<string, unknown>,
  output: readonly WireOutputItem[],
): Record<string, unknown> {
  return {
    id,
    object: 'response',
    created_at: 1767225600,
    status: 'completed',
    model: typeof request.model === 'string' ? request.model : 'gpt-test',
    output,
    parallel_tool_calls: true,
    tool_choice: 'auto',
    tools: [],
    usage: {
      input_tokens: 20,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: 5,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 25,
    },
  };
}
