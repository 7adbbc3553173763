/**
 * The request header of a call the AI SDK makes: the inverse of the model layer's
 * `buildCallOptions`, so the header logged for a call rebuilds the call's options.
 */
import type { LanguageModelV3, LanguageModelV3CallOptions } from '@ai-sdk/provider';
import type { JsonObject, JsonValue, RequestHeaderData, ToolSchema } from '../../core/index.js';
import { NUMBER_SETTINGS, toLogJson } from '../../model/index.js';
import { AiSdkError } from './errors.js';

/**
 * The header for `params` sent to `model`, and the system prompt it names.
 *
 * @throws AiSdkError `UNSUPPORTED_CALL` for what the header cannot record: provider-defined
 *   tools, per-tool provider options, strict mode or input examples, or system messages
 *   anywhere but first.
 */
export function callHeader(
  model: LanguageModelV3,
  params: LanguageModelV3CallOptions,
): RequestHeaderData {
  const system = systemPrompt(params);
  const tools: ToolSchema[] = [];
  for (const tool of params.tools ?? []) {
    if (tool.type !== 'function') {
      throw unsupported(`a provider-defined tool (${tool.id})`);
    }
    if (
      tool.providerOptions !== undefined ||
      tool.strict !== undefined ||
      tool.inputExamples !== undefined
    ) {
      throw unsupported(`provider options, strict mode or input examples on tool ${tool.name}`);
    }
    tools.push({
      name: tool.name,
      ...(tool.description === undefined ? {} : { description: tool.description }),
      parameters: schemaJson(tool.inputSchema),
    });
  }
  const settings: Record<string, JsonValue> = {};
  for (const key of NUMBER_SETTINGS) {
    const value = params[key];
    if (typeof value === 'number') settings[key] = value;
  }
  if (params.stopSequences !== undefined) settings.stopSequences = [...params.stopSequences];
  const choice = params.toolChoice;
  if (choice !== undefined) {
    settings.toolChoice =
      choice.type === 'tool' ? { type: 'tool', toolName: choice.toolName } : choice.type;
  }
  if (params.providerOptions !== undefined) {
    settings.providerOptions = toLogJson(params.providerOptions) as JsonObject;
  }
  if (params.responseFormat !== undefined) {
    settings.responseFormat = toLogJson(params.responseFormat) as JsonObject;
  }
  return {
    provider: model.provider,
    model: model.modelId,
    ...(system === undefined ? {} : { system }),
    ...(tools.length === 0 ? {} : { tools }),
    ...(Object.keys(settings).length === 0 ? {} : { settings }),
  };
}

/** A tool's input schema as log JSON; the SDK sends the same schema object call after call. */
const schemas = new WeakMap<object, JsonObject>();

function schemaJson(schema: object): JsonObject {
  let json = schemas.get(schema);
  if (json === undefined) {
    json = toLogJson(schema) as JsonObject;
    schemas.set(schema, json);
  }
  return json;
}

/** The system prompt: the prompt's one leading system message, without provider options. */
function systemPrompt(params: LanguageModelV3CallOptions): string | undefined {
  let system: string | undefined;
  const prompt = params.prompt;
  for (let index = 0; index < prompt.length; index++) {
    const message = prompt[index] as (typeof prompt)[number];
    if (message.role !== 'system') continue;
    if (index !== 0) throw unsupported(`a system message at position ${index} of the prompt`);
    if (message.providerOptions !== undefined) {
      throw unsupported('provider options on the system message');
    }
    system = message.content;
  }
  return system === '' ? undefined : system;
}

function unsupported(what: string): AiSdkError {
  return new AiSdkError(
    'UNSUPPORTED_CALL',
    `expected call options a palimpsest request header can record, found ${what}`,
  );
}
