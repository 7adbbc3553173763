/**
 * Which model a command uses: `--model provider:name`, else the provider the environment
 * configures, else the offline scripted model with a notice. The offline fallback is the CLI's
 * choice, made here; the library never substitutes a test double on its own.
 */
import type { LanguageModelV3 } from '@ai-sdk/provider';
import {
  AgentError,
  detectProvider,
  type Env,
  type EnvModel,
  type ModelSpec,
  modelFor,
  PROVIDER_KEYS,
} from '../agent/index.js';
import { type ScriptStep, scriptedModel } from '../testing/index.js';
import { CliError, EXIT } from './failure.js';

const OFFLINE: readonly ScriptStep[] = [
  {
    text: 'This answer comes from palimpsest’s scripted model: no DEEPSEEK_API_KEY, OPENAI_API_KEY or ANTHROPIC_API_KEY was set, so nothing left this machine.',
  },
];

const OFFLINE_NOTICE =
  'No provider key found (DEEPSEEK_API_KEY, OPENAI_API_KEY [+ OPENAI_BASE_URL], ANTHROPIC_API_KEY): using the offline scripted model.';

/**
 * Resolves `--model` (or the environment) to a model; `script` is what the offline model says.
 * With `offline: 'explicit'` the scripted model is used only when `--model scripted` asks for
 * it: a command whose output replaces real history must not fall back to canned text.
 */
export async function resolveModel(
  spec: string | undefined,
  script: readonly ScriptStep[] = OFFLINE,
  options: {
    readonly offline?: 'fallback' | 'explicit';
    readonly purpose?: string;
    /** The environment to read (default `process.env`). */
    readonly env?: Env;
  } = {},
): Promise<EnvModel> {
  const env = options.env ?? process.env;
  if (spec === undefined) {
    const provider = detectProvider(env);
    if (provider !== undefined) return modelFor(provider, { env });
    if (options.offline === 'explicit') {
      throw new CliError(
        `${options.purpose ?? 'this command'} needs a model: expected a provider key (DEEPSEEK_API_KEY, OPENAI_API_KEY [+ OPENAI_BASE_URL], ANTHROPIC_API_KEY) or --model provider:name, found neither; --model scripted writes an offline placeholder instead`,
        EXIT.usage,
      );
    }
    return offline(script, OFFLINE_NOTICE);
  }
  const colon = spec.indexOf(':');
  const provider = colon === -1 ? spec : spec.slice(0, colon);
  if (provider === 'scripted')
    return offline(script, '--model scripted: using the offline scripted model.');
  if (!Object.hasOwn(PROVIDER_KEYS, provider)) {
    throw new CliError(
      `--model expects provider:name with provider one of ${[...Object.keys(PROVIDER_KEYS), 'scripted'].join(', ')}; found '${spec}'`,
      EXIT.usage,
    );
  }
  const baseURL = env.OPENAI_BASE_URL;
  if (provider === 'openai' && baseURL !== undefined && baseURL !== '') {
    // OpenAI's own client speaks its Responses API, which chat-completions servers answer 404.
    throw new CliError(
      `--model ${spec} talks to OpenAI itself, but OPENAI_BASE_URL is set (${baseURL}); for that server use --model openai-compatible:${colon === -1 ? 'NAME' : spec.slice(colon + 1) || 'NAME'}, or unset OPENAI_BASE_URL`,
      EXIT.usage,
    );
  }
  try {
    return await modelFor(spec as ModelSpec, { env });
  } catch (error) {
    // A named provider without its variables is a usage error of this command line.
    if (AgentError.isInstance(error) && error.code === 'NO_PROVIDER') {
      throw new CliError(`--model ${spec}: ${error.message}`, EXIT.usage);
    }
    throw error;
  }
}

/** The model of an {@link EnvModel}, after printing its notice. */
export function announce(model: EnvModel, note: (text: string) => void): LanguageModelV3 {
  if (model.notice !== undefined) note(`note: ${model.notice}`);
  return model.model;
}

function offline(script: readonly ScriptStep[], notice: string | undefined): EnvModel {
  // The offline model keeps answering: the script starts over when it runs out.
  const model = scriptedModel(script, { loop: true });
  return {
    model,
    description: 'scripted:scripted-model',
    ...(notice === undefined ? {} : { notice }),
  };
}
