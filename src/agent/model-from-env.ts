/**
 * Real models from environment variables. Two questions, answered apart: which provider is
 * configured (`detectProvider`), and the model of a named provider (`modelFor`). Provider
 * packages are optional peer dependencies, loaded only when a model of theirs is built. Nothing
 * here falls back on its own: with no provider configured `modelFromEnv` throws unless the
 * caller passes the model to use instead.
 */
import type { LanguageModelV3 } from '@ai-sdk/provider';
import { AgentError } from './errors.js';

/** The providers `modelFor` can build a model for. */
export type ProviderName = 'deepseek' | 'openai' | 'openai-compatible' | 'anthropic';

/** A provider, or a provider and a model name: `deepseek`, `openai:gpt-4o`. */
export type ModelSpec = ProviderName | `${ProviderName}:${string}`;

/** Environment variables as `process.env` holds them. */
export type Env = Readonly<Record<string, string | undefined>>;

/** The model picked, and why. */
export interface EnvModel {
  readonly model: LanguageModelV3;
  /** The provider configured; absent when the caller's fallback model was used. */
  readonly provider?: ProviderName;
  /** For example `deepseek:deepseek-chat`. */
  readonly description: string;
  /** Set when the fallback model was used: say it to the user. */
  readonly notice?: string;
}

/** Options of {@link modelFor}. */
export interface ModelForOptions {
  /** Variables to read (default `process.env`). */
  readonly env?: Env;
  /**
   * The model name when the spec has none; otherwise `PALIMPSEST_MODEL`, otherwise the
   * provider's default ({@link DEFAULT_MODELS}).
   */
  readonly model?: string;
}

/** Options of {@link modelFromEnv}. */
export interface ModelFromEnvOptions extends ModelForOptions {
  /**
   * The model to use when no provider is configured (an offline demo passes a scripted model).
   * Without it, no provider is an error.
   */
  readonly fallback?: LanguageModelV3;
}

/** Default model per provider; override with `PALIMPSEST_MODEL` or `options.model`. */
export const DEFAULT_MODELS = {
  deepseek: 'deepseek-chat',
  openai: 'gpt-4o-mini',
  anthropic: 'claude-sonnet-4-5',
} as const;

/** The variables each provider needs. */
export const PROVIDER_KEYS: Readonly<Record<ProviderName, readonly string[]>> = {
  deepseek: ['DEEPSEEK_API_KEY'],
  openai: ['OPENAI_API_KEY'],
  'openai-compatible': ['OPENAI_API_KEY', 'OPENAI_BASE_URL'],
  anthropic: ['ANTHROPIC_API_KEY'],
};

const OPENAI_URL = 'https://api.openai.com/v1';

const NO_KEY =
  'no provider key found (DEEPSEEK_API_KEY, OPENAI_API_KEY [+ OPENAI_BASE_URL], ANTHROPIC_API_KEY)';

/**
 * The first provider with a key: `DEEPSEEK_API_KEY`, then `OPENAI_API_KEY` (`openai-compatible`
 * when `OPENAI_BASE_URL` is set too: Ollama, vLLM, LM Studio), then `ANTHROPIC_API_KEY`;
 * `undefined` when none is set.
 */
export function detectProvider(env: Env = processEnv()): ProviderName | undefined {
  if (nonEmpty(env.DEEPSEEK_API_KEY) !== undefined) return 'deepseek';
  if (nonEmpty(env.OPENAI_API_KEY) !== undefined) {
    return nonEmpty(env.OPENAI_BASE_URL) === undefined ? 'openai' : 'openai-compatible';
  }
  if (nonEmpty(env.ANTHROPIC_API_KEY) !== undefined) return 'anthropic';
  return undefined;
}

/**
 * The model of a named provider, keyed from `env`. `openai` is OpenAI itself (`OPENAI_BASE_URL`
 * is ignored); `openai-compatible` needs `OPENAI_BASE_URL`.
 *
 * @throws AgentError `NO_PROVIDER` for an unknown provider or one whose variables are not set;
 *   `PROVIDER_NOT_INSTALLED` when its package is missing.
 */
export async function modelFor(spec: ModelSpec, options: ModelForOptions = {}): Promise<EnvModel> {
  const env = options.env ?? processEnv();
  const colon = spec.indexOf(':');
  const provider = (colon === -1 ? spec : spec.slice(0, colon)) as ProviderName;
  const keys = Object.hasOwn(PROVIDER_KEYS, provider) ? PROVIDER_KEYS[provider] : undefined;
  if (keys === undefined) {
    throw new AgentError(
      'NO_PROVIDER',
      `expected a provider among ${Object.keys(PROVIDER_KEYS).join(', ')}, found '${provider}'`,
    );
  }
  const missing = keys.filter((key) => nonEmpty(env[key]) === undefined);
  if (missing.length > 0) {
    throw new AgentError(
      'NO_PROVIDER',
      `provider ${provider} needs ${missing.join(' and ')} in the environment`,
    );
  }
  const named = colon === -1 ? undefined : nonEmpty(spec.slice(colon + 1));
  const name = (fallback: string): string =>
    named ?? options.model ?? nonEmpty(env.PALIMPSEST_MODEL) ?? fallback;
  const key = nonEmpty(env[keys[0] ?? '']) ?? '';
  switch (provider) {
    case 'deepseek': {
      const { createDeepSeek } = await load('@ai-sdk/deepseek', () => import('@ai-sdk/deepseek'));
      const model = name(DEFAULT_MODELS.deepseek);
      return {
        model: createDeepSeek({ apiKey: key })(model),
        provider,
        description: `deepseek:${model}`,
      };
    }
    case 'openai-compatible': {
      const baseURL = nonEmpty(env.OPENAI_BASE_URL) ?? '';
      const model = name(DEFAULT_MODELS.openai);
      const { createOpenAICompatible } = await load(
        '@ai-sdk/openai-compatible',
        () => import('@ai-sdk/openai-compatible'),
      );
      const create = createOpenAICompatible({
        name: 'openai-compatible',
        baseURL,
        apiKey: key,
        includeUsage: true,
      });
      return {
        model: create(model),
        provider,
        description: `openai-compatible:${model} at ${baseURL}`,
      };
    }
    case 'openai': {
      const { createOpenAI } = await load('@ai-sdk/openai', () => import('@ai-sdk/openai'));
      const model = name(DEFAULT_MODELS.openai);
      return {
        // The provider package would read OPENAI_BASE_URL from process.env by itself: `openai`
        // means OpenAI, and `env` is the only environment modelFor reads.
        model: createOpenAI({ apiKey: key, baseURL: OPENAI_URL })(model),
        provider,
        description: `openai:${model}`,
      };
    }
    case 'anthropic': {
      const { createAnthropic } = await load(
        '@ai-sdk/anthropic',
        () => import('@ai-sdk/anthropic'),
      );
      const model = name(DEFAULT_MODELS.anthropic);
      return {
        model: createAnthropic({ apiKey: key })(model),
        provider,
        description: `anthropic:${model}`,
      };
    }
  }
}

/**
 * The model of the provider {@link detectProvider} finds; with none, `options.fallback` and a
 * notice to show the user.
 *
 * @throws AgentError `NO_PROVIDER` when no provider is configured and no fallback is given;
 *   `PROVIDER_NOT_INSTALLED` when a key is set but its package is missing.
 */
export async function modelFromEnv(options: ModelFromEnvOptions = {}): Promise<EnvModel> {
  const env = options.env ?? processEnv();
  const provider = detectProvider(env);
  if (provider !== undefined) {
    return modelFor(provider, {
      env,
      ...(options.model === undefined ? {} : { model: options.model }),
    });
  }
  const { fallback } = options;
  if (fallback === undefined) {
    throw new AgentError(
      'NO_PROVIDER',
      `expected a provider to be configured, found ${NO_KEY}; set one, or pass a fallback model`,
    );
  }
  return {
    model: fallback,
    description: `${fallback.provider}:${fallback.modelId}`,
    notice: `${NO_KEY[0]?.toUpperCase()}${NO_KEY.slice(1)}: using the fallback model ${fallback.provider}:${fallback.modelId}.`,
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

function processEnv(): Env {
  const process = (globalThis as { process?: { env?: Record<string, string | undefined> } })
    .process;
  return process?.env ?? {};
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}
