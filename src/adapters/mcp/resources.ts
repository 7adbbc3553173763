/**
 * Sessions as MCP resources: `palimpsest://session/{id}/transcript`, one per session in scope,
 * for clients that attach context by resource rather than by tool call. The id is
 * percent-encoded in the URI (subagent ids hold `/`).
 */
import { type McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { PalimpsestError } from '../../core/index.js';
import { clip } from './results.js';
import type { ScopedSessions } from './scope.js';
import { entryOf, transcriptLine } from './tools/read-transcript.js';

/** Characters of one transcript resource at most; a longer one ends with a note. */
export const MAX_RESOURCE_CHARS = 200_000;

/** Sessions listed as resources at most (newest first); list_sessions pages through the rest. */
const MAX_LISTED = 500;

/** The URI of a session's transcript resource. */
export function transcriptUri(id: string): string {
  return `palimpsest://session/${encodeURIComponent(id)}/transcript`;
}

/** Registers the transcript resources of the sessions in scope. */
export function registerSessionResources(server: McpServer, sessions: ScopedSessions): void {
  const template = new ResourceTemplate('palimpsest://session/{id}/transcript', {
    list: async () => ({
      resources: (await sessions.list()).slice(0, MAX_LISTED).map(({ header }) => ({
        uri: transcriptUri(header.id),
        name: header.id,
        title: `Transcript of ${header.id}`,
        mimeType: 'text/plain',
      })),
    }),
  });
  server.registerResource(
    'session-transcript',
    template,
    {
      title: 'Session transcript',
      description: "A session's transcript in log order, as read_transcript shows it",
      mimeType: 'text/plain',
    },
    async (uri, variables) => {
      const raw = variables.id;
      const id = decodeId(typeof raw === 'string' ? raw : '');
      try {
        const session = await sessions.load(id);
        const text = session
          .transcript()
          .map((entry) => transcriptLine(entryOf(entry)))
          .join('\n');
        return {
          contents: [
            { uri: uri.href, mimeType: 'text/plain', text: clip(text, MAX_RESOURCE_CHARS) },
          ],
        };
      } catch (error) {
        if (!PalimpsestError.isInstance(error)) throw error;
        throw new McpError(ErrorCode.InvalidParams, `${error.code}: ${error.message}`);
      }
    },
  );
}

function decodeId(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    throw new McpError(
      ErrorCode.InvalidParams,
      'the session id in the URI is not valid percent-encoding',
    );
  }
}
