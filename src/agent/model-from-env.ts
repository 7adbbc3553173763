/**
 * Picks a real model from environment variables, falling back to the scripted model so that
 * demos and examples run offline. Provider packages are optional peer dependencies, loaded only
 * when their key is present.
 */
import type { LanguageModelV3 } from '@ai-sdk/provider';
import { type ScriptStep, scriptedModel } from '../testing/index.js';
import { AgentError } from './errors.js';

/** The model picked, and why. */
export interface EnvModel {
  readonly model: LanguageModelV3;
  /** Which provider was picked (`scripted` when no key was found). */
  readonly provider: 'deepseek' | 'openai' | 'openai-compatible' | 'anthropic' | 'scripted';
  /** For example `deepseek:deepseek-chat`. */
  readonly description: string;
  /** Set when falling back to the scripted model: say it to the user. */
  readonly notice?: string;
}

/** Options of {@link modelFromEnv}. */
export interface ModelFromEnvOptions {
  /** Variables to read (default `process.env`). */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** The model name; otherwise `PALIMPSEST_MODEL`, otherwise the provider's default. */
  readonly model?: string;
  /** Responses of the scripted fallback, repeated when they run out (default: one explanatory answer). */
  readonly fallback?: readonly ScriptStep[];
}

/** Default model per provider; override with `PALIMPSEST_MODEL` or `options.model`. */
export const DEFAULT_MODELS = {
  deepseek: 'deepseek-chat',
  openai: 'gpt-4o-mini',
  anthropic: 'claude-sonnet-4-5',
} as const;

const FALLBACK: readonly ScriptStep[] = [
  {
    text: 'This answer comes from palimpsest’s scripted model: no DEEPSEEK_API_KEY, OPENAI_API_KEY or ANTHROPIC_API_KEY was set, so nothing left this machine.',
  },
];

/**
 * The first provider with a key: `DEEPSEEK_API_KEY`, then `OPENAI_API_KEY` (with
 * `OPENAI_BASE_URL`, any OpenAI-compatible server: Ollama, vLLM, LM Studio), then
 * `ANTHROPIC_API_KEY`; else the scripted model, with a notice.
 *
 * @throws AgentError `PROVIDER_NOT_INSTALLED` when a key is set but its package is missing.
 */
export async function modelFromEnv(options: ModelFromEnvOptions = {}): Promise<EnvModel> {
  const env = options.env ?? processEnv();
  const name = (fallback: string): string =>
    options.model ?? nonEmpty(env.PALIMPSEST_MODEL) ?? fallback;
  const deepseekKey = nonEmpty(env.DEEPSEEK_API_KEY);
  if (deepseekKey !== undefined) {
    const { createDeepSeek } = await load('@ai-sdk/deepseek', () => import('@ai-sdk/deepseek'));
    const model = name(DEFAULT_MODELS.deepseek);
    return {
      model: createDeepSeek({ apiKey: deepseekKey })(model),
      provider: 'deepseek',
      description: `deepseek:${model}`,
    };
  }
  const openaiKey = nonEmpty(env.OPENAI_API_KEY);
  if (openaiKey !== undefined) {
    const baseURL = nonEmpty(env.OPENAI_BASE_URL);
    const model = name(DEFAULT_MODELS.openai);
    if (baseURL !== undefined) {
      const { createOpenAICompatible } = await load(
        '@ai-sdk/openai-compatible',
        () => import('@ai-sdk/openai-compatible'),
      );
      const provider = createOpenAICompatible({
        name: 'openai-compatible',
        baseURL,
        apiKey: openaiKey,
        includeUsage: true,
      });
      return {
        model: provider(model),
        provider: 'openai-compatible',
        description: `openai-compatible:${model} at ${baseURL}`,
      };
    }
    const { createOpenAI } = await load('@ai-sdk/openai', () => import('@ai-sdk/openai'));
    return {
      model: createOpenAI({ apiKey: openaiKey })(model),
      provider: 'openai',
      description: `openai:${model}`,
    };
  }
  const anthropicKey = nonEmpty(env.ANTHROPIC_API_KEY);
  if (anthropicKey !== undefined) {
    const { createAnthropic } = await load('@ai-sdk/anthropic', () => import('@ai-sdk/anthropic'));
    const model = name(DEFAULT_MODELS.anthropic);
    return {
      model: createAnthropic({ apiKey: anthropicKey })(model),
      provider: 'anthropic',
      description: `anthropic:${model}`,
    };
  }
  return {
    // A fallback keeps answering: the script starts over when it runs out.
    model: scriptedModel(options.fallback ?? FALLBACK, { loop: true }),
    provider: 'scripted',
    description: 'scripted:scripted-model',
    notice:
      'No provider key found (DEEPSEEK_API_KEY, OPENAI_API_KEY [+ OPENAI_BASE_URL], ANTHROPIC_API_KEY): using the offline scripted model.',
  };
}

async function load<T>(name: string, importer: () => Promise<T>): Promise<T> {
  try {
    return await importer();
  } catch (error) {
    throw new AgentError(
      'PROVIDER_NOT_INSTALLED',
      `a key for ${name} is set but the package is not installed: run npm install ${name}`,
      { cause: error },
    );
  }
}

function processEnv(): Readonly<Record<string, string | undefined>> {
  const process = (globalThis as { process?: { env?: Record<string, string | undefined> } })
    .process;
  return process?.env ?? {};
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}
