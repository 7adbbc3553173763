/**
 * The shape of one server tool, so each tool is one small file: its name, its description for
 * the model, its input and output schemas (zod shapes the SDK publishes as JSON Schema), and
 * what it does. Every tool is read-only; a failure becomes a tool error carrying its code.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { ZodRawShapeCompat } from '@modelcontextprotocol/sdk/server/zod-compat.js';
import type { z } from 'zod';
import { failure } from './results.js';
import type { ScopedSessions } from './scope.js';

/** What a tool runs against. */
export interface ServerToolContext {
  readonly sessions: ScopedSessions;
  /** Characters of text one result holds at most. */
  readonly maxChars: number;
}

/** What a tool answers: the text for the model and the same content as structured data. */
export interface ServerToolAnswer<O extends z.ZodRawShape> {
  readonly text: string;
  readonly structured: z.infer<z.ZodObject<O>>;
}

/** One tool of the server, as its file defines it. */
export interface ServerToolSpec<I extends z.ZodRawShape, O extends z.ZodRawShape> {
  /** `snake_case`, what MCP clients show. */
  readonly name: string;
  readonly title: string;
  readonly description: string;
  readonly input: I;
  readonly output: O;
  run(args: z.infer<z.ZodObject<I>>, context: ServerToolContext): Promise<ServerToolAnswer<O>>;
}

/** A tool ready to be registered on a server; its schemas' types stay inside. */
export interface ServerTool {
  readonly name: string;
  register(server: McpServer, context: ServerToolContext): void;
}

/** Turns a tool's definition into a tool the server registers. */
export function serverTool<I extends z.ZodRawShape, O extends z.ZodRawShape>(
  spec: ServerToolSpec<I, O>,
): ServerTool {
  return {
    name: spec.name,
    register(server, context) {
      server.registerTool<ZodRawShapeCompat, ZodRawShapeCompat>(
        spec.name,
        {
          title: spec.title,
          description: spec.description,
          inputSchema: spec.input,
          outputSchema: spec.output,
          annotations: { readOnlyHint: true, openWorldHint: false },
        },
        async (args: Record<string, unknown>) => {
          try {
            // The SDK validated the arguments against `spec.input` before calling.
            const { text, structured } = await spec.run(args as z.infer<z.ZodObject<I>>, context);
            return { content: [{ type: 'text' as const, text }], structuredContent: structured };
          } catch (error) {
            return failure(error);
          }
        },
      );
    },
  };
}
