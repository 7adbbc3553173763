/**
 * Checks of what a caller hands the loop, each refused with an `AgentError` that says what was
 * expected and what was found.
 */
import type { LanguageModelV3 } from '@ai-sdk/provider';
import type { UserContentBlock } from '../core/index.js';
import { countOption } from '../model/index.js';
import { AgentError } from './errors.js';
import type { TurnInput } from './types.js';

/** Refuses anything but an AI SDK language model of spec v3. */
export function checkModel(model: LanguageModelV3): void {
  const version = (model as { specificationVersion?: unknown } | undefined)?.specificationVersion;
  if (version !== 'v3' || typeof model.doStream !== 'function') {
    throw new AgentError(
      'UNSUPPORTED_MODEL',
      `expected an AI SDK language model with specificationVersion 'v3' (@ai-sdk/provider 3.x; AI SDK 6 providers), found ${version === undefined ? 'no specificationVersion' : `'${String(version)}'`}`,
    );
  }
}

/** The input as content blocks; refuses empty text and empty block lists. */
export function checkInput(input: TurnInput): readonly UserContentBlock[] {
  if (typeof input === 'string') {
    if (input === '')
      throw new AgentError('INVALID_INPUT', 'expected non-empty input text, found an empty string');
    return [{ type: 'text', text: input }];
  }
  if (!Array.isArray(input) || input.length === 0) {
    throw new AgentError(
      'INVALID_INPUT',
      `expected a string or a non-empty array of text and image blocks, found ${Array.isArray(input) ? 'an empty array' : typeof input}`,
    );
  }
  return input;
}

/** Builds the loop's error for a malformed option. */
export function invalidOption(message: string): AgentError {
  return new AgentError('INVALID_INPUT', message);
}

/** A non-negative integer option of the loop, or its default. */
export function countArg(name: string, value: number | undefined, fallback: number): number {
  return countOption(name, value, fallback, invalidOption);
}
