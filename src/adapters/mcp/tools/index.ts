/**
 * The server's tools, one file each. A new tool is a file exporting a `serverTool(...)` and a
 * line here.
 */
import type { ServerTool } from '../server-tool.js';
import { diffSurfacesTool } from './diff-surfaces.js';
import { listSessionsTool } from './list-sessions.js';
import { readSurfaceTool } from './read-surface.js';
import { readTranscriptTool } from './read-transcript.js';
import { searchSessionsTool } from './search-sessions.js';
import { sessionCostTool } from './session-cost.js';
import { whyTool } from './why.js';

/** Every tool of the server, in the order clients list them. */
export const SERVER_TOOLS: readonly ServerTool[] = [
  listSessionsTool,
  searchSessionsTool,
  readTranscriptTool,
  readSurfaceTool,
  whyTool,
  sessionCostTool,
  diffSurfacesTool,
];
