/**
 * palimpsest/testing — a deterministic language model for offline demos and tests.
 *
 * @packageDocumentation
 */
export {
  type ScriptedError,
  ScriptedModel,
  type ScriptedModelOptions,
  type ScriptedResponse,
  type ScriptedToolCall,
  type ScriptStep,
  scriptedModel,
} from './scripted-model.js';
