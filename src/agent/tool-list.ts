/**
 * The tools of a turn: a list of loop tools, or a record by name as the AI SDK takes them, whose
 * values may be loop tools or AI SDK `tool()` objects.
 */
import type { Tool } from '../model/index.js';
import { type AiSdkTool, fromAiSdkTool } from './ai-sdk-tools.js';
import { AgentError } from './errors.js';

/**
 * What `tools` accepts: `[defineTool(...), ...]`, or `{ name: tool({...}), other: defineTool(...) }`
 * (in a record the key is the name the model calls).
 */
export type ToolList = readonly Tool[] | Readonly<Record<string, Tool | AiSdkTool>>;

/** Checks a turn's tools and indexes them by name; names must be unique. */
export function indexTools(tools: ToolList): ReadonlyMap<string, Tool> {
  const byName = new Map<string, Tool>();
  const add = (tool: Tool): void => {
    if (byName.has(tool.name)) {
      throw new AgentError(
        'INVALID_TOOL',
        `two tools are named '${tool.name}'; names must be unique`,
      );
    }
    byName.set(tool.name, tool);
  };
  if (Array.isArray(tools)) {
    for (const [index, tool] of (tools as readonly unknown[]).entries()) {
      if (isLoopTool(tool)) add(tool);
      else if (typeof tool === 'object' && tool !== null && 'inputSchema' in tool) {
        throw new AgentError(
          'INVALID_TOOL',
          `tools[${index}]: expected a tool made by defineTool(), found an AI SDK tool, which has no name of its own; pass tools as a record ({ name: tool(...) }) or wrap it with fromAiSdkTool(name, tool)`,
        );
      } else {
        throw new AgentError(
          'INVALID_TOOL',
          `tools[${index}]: expected a tool made by defineTool(), found ${describe(tool)}`,
        );
      }
    }
    return byName;
  }
  if (typeof tools !== 'object' || tools === null) {
    throw new AgentError(
      'INVALID_TOOL',
      `expected tools as an array or a record of tools by name, found ${describe(tools)}`,
    );
  }
  for (const [name, tool] of Object.entries(tools)) {
    if (!isLoopTool(tool)) {
      add(fromAiSdkTool(name, tool as AiSdkTool));
    } else if (tool.name !== name) {
      throw new AgentError(
        'INVALID_TOOL',
        `tools.${name}: expected the tool named '${name}', found the tool '${tool.name}' (in a record the key is the name)`,
      );
    } else add(tool);
  }
  return byName;
}

function isLoopTool(value: unknown): value is Tool {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { run?: unknown }).run === 'function' &&
    typeof (value as { name?: unknown }).name === 'string'
  );
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object that is not a tool' : typeof value;
}
