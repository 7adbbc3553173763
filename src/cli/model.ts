/**
 * Which model a command uses: `--model provider:name`, else the environment (`modelFromEnv`),
 * else the offline scripted model with a notice.
 */
import type { LanguageModelV3 } from '@ai-sdk/provider';
import { type EnvModel, modelFromEnv } from '../agent/index.js';
import type { ScriptStep } from '../testing/index.js';
import { CliError, EXIT } from './failure.js';

const KEYS: Record<string, readonly string[]> = {
  deepseek: ['DEEPSEEK_API_KEY'],
  openai: ['OPENAI_API_KEY'],
  'openai-compatible': ['OPENAI_API_KEY', 'OPENAI_BASE_URL'],
  anthropic: ['ANTHROPIC_API_KEY'],
  scripted: [],
};
const ALL_KEYS = ['DEEPSEEK_API_KEY', 'OPENAI_API_KEY', 'OPENAI_BASE_URL', 'ANTHROPIC_API_KEY'];

/** Resolves `--model` (or the environment) to a model. */
export async function resolveModel(
  spec: string | undefined,
  fallback?: readonly ScriptStep[],
): Promise<EnvModel> {
  const options = fallback === undefined ? {} : { fallback };
  if (spec === undefined) return modelFromEnv(options);
  const colon = spec.indexOf(':');
  const provider = colon === -1 ? spec : spec.slice(0, colon);
  const name = colon === -1 ? undefined : spec.slice(colon + 1);
  const keys = KEYS[provider];
  if (keys === undefined) {
    throw new CliError(
      `--model expects provider:name with provider one of ${Object.keys(KEYS).join(', ')}; found '${spec}'`,
      EXIT.usage,
    );
  }
  // Only the chosen provider's variables are visible, so the choice is exactly what was asked.
  const env: Record<string, string | undefined> = { ...process.env };
  for (const key of ALL_KEYS) if (!keys.includes(key)) delete env[key];
  if (provider === 'openai') delete env.OPENAI_BASE_URL;
  const missing = keys.filter((key) => (env[key] ?? '') === '');
  if (missing.length > 0) {
    throw new CliError(
      `--model ${spec} needs ${missing.join(' and ')} in the environment`,
      EXIT.usage,
    );
  }
  return modelFromEnv({
    ...options,
    env,
    ...(name === undefined || name === '' ? {} : { model: name }),
  });
}

/** The model of an {@link EnvModel}, after printing its notice. */
export function announce(model: EnvModel, note: (text: string) => void): LanguageModelV3 {
  if (model.notice !== undefined) note(`note: ${model.notice}`);
  return model.model;
}
