import type { LanguageModelV4 } from '@ai-sdk/provider';
import { UserError } from '../core/errors.ts';
import { guardedModelFetch } from './model-fetch.ts';
import { DEFAULT_RETRY, type RetryPolicy, withRetryPolicy } from './retry.ts';
import { detectingZeroDataRetention } from './zero-data-retention.ts';

export const PROVIDERS = ['openai', 'anthropic', 'google', 'openrouter', 'ollama', 'compatible'] as const;
export type ProviderName = (typeof PROVIDERS)[number];

export interface ModelResolverOptions {
  env: Record<string, string | undefined>;
  retry?: RetryPolicy;
  /** Models by full reference, checked first (tests, demos, `cadre/testing`). */
  overrides?: Record<string, LanguageModelV4>;
  /** Passed to every provider; tests use it to count requests. */
  fetch?: typeof fetch;
}

/** Splits "provider:model" and checks the provider is one Cadre knows. */
export function parseModelRef(ref: string): { provider: ProviderName; modelId: string } {
  const colon = ref.indexOf(':');
  const provider = ref.slice(0, colon);
  const modelId = ref.slice(colon + 1);
  if (colon < 1 || !modelId) {
    throw new UserError(
      'bad_model',
      `"${ref}" is not a model reference; write "provider:model", e.g. "openai:gpt-5-mini".`,
    );
  }
  if (!(PROVIDERS as readonly string[]).includes(provider)) {
    throw new UserError(
      'unknown_provider',
      `Unknown model provider "${provider}" in "${ref}". Known providers: ${PROVIDERS.join(', ')}.`,
    );
  }
  return { provider: provider as ProviderName, modelId };
}

/**
 * Returns a function from "provider:model" to an AI SDK model, with Cadre's retry policy around it.
 * Each model is built once, on first use, from the environment its provider's own SDK reads.
 */
export function createModelResolver(
  options: ModelResolverOptions,
): (ref: string) => LanguageModelV4 | Promise<LanguageModelV4> {
  const policy = options.retry ?? DEFAULT_RETRY;
  const cache = new Map<string, Promise<LanguageModelV4>>();
  return (ref: string) => {
    const override = options.overrides?.[ref];
    if (override) return override;
    let model = cache.get(ref);
    if (!model) {
      const { provider, modelId } = parseModelRef(ref);
      model = buildModel(provider, modelId, options).then((built) => withRetryPolicy(built, policy));
      // A failed build (a missing key) is not cached: the next run may have the key.
      model.catch(() => cache.delete(ref));
      cache.set(ref, model);
    }
    return model;
  };
}

/** The provider's model. Each provider's package loads when one of its models is first asked for. */
async function buildModel(
  provider: ProviderName,
  modelId: string,
  { env, fetch }: ModelResolverOptions,
): Promise<LanguageModelV4> {
  // Every provider reads through the guard: error bodies bounded, HTML pages named for what they are.
  const fetchOption = { fetch: guardedModelFetch(fetch ?? globalThis.fetch) };
  switch (provider) {
    case 'openai': {
      const { createOpenAI } = await import('@ai-sdk/openai');
      const apiKey = requireKey(env, 'OPENAI_API_KEY', provider);
      const openai = createOpenAI({ apiKey, ...baseUrlFrom(env, 'OPENAI_BASE_URL'), ...fetchOption });
      return detectingZeroDataRetention(openai(modelId));
    }
    case 'anthropic': {
      const { createAnthropic } = await import('@ai-sdk/anthropic');
      const apiKey = requireKey(env, 'ANTHROPIC_API_KEY', provider);
      return createAnthropic({ apiKey, ...baseUrlFrom(env, 'ANTHROPIC_BASE_URL'), ...fetchOption })(modelId);
    }
    case 'google': {
      const { createGoogleGenerativeAI } = await import('@ai-sdk/google');
      const apiKey = requireKey(env, 'GOOGLE_GENERATIVE_AI_API_KEY', provider);
      // Google's package reads no base URL from the environment; Cadre's variable names it as the others do.
      const baseURL = baseUrlFrom(env, 'GOOGLE_GENERATIVE_AI_BASE_URL');
      return createGoogleGenerativeAI({ apiKey, ...baseURL, ...fetchOption })(modelId);
    }
    case 'openrouter': {
      const { createOpenRouter } = await import('@openrouter/ai-sdk-provider');
      const apiKey = requireKey(env, 'OPENROUTER_API_KEY', provider);
      // Usage accounting in every response, streamed ones included (Cadre's budgets depend on it).
      return createOpenRouter({ apiKey, ...fetchOption })(modelId, {
        usage: { include: true },
      }) as unknown as LanguageModelV4;
    }
    case 'ollama': {
      const { createOllama } = await import('ollama-ai-provider-v2');
      const host = (env.OLLAMA_HOST ?? 'http://127.0.0.1:11434').replace(/\/+$/, '');
      const baseURL = `${/^https?:\/\//.test(host) ? host : `http://${host}`}/api`;
      checkBaseUrl(baseURL, 'OLLAMA_HOST');
      return createOllama({ baseURL, ...fetchOption })(modelId) as unknown as LanguageModelV4;
    }
    case 'compatible': {
      const baseURL = env.CADRE_COMPATIBLE_BASE_URL;
      if (!baseURL) {
        throw new UserError(
          'no_base_url',
          'The "compatible" provider needs CADRE_COMPATIBLE_BASE_URL, the base URL of an OpenAI-compatible ' +
            'server, e.g. export CADRE_COMPATIBLE_BASE_URL=http://127.0.0.1:8000/v1',
        );
      }
      checkBaseUrl(baseURL, 'CADRE_COMPATIBLE_BASE_URL');
      const { createOpenAICompatible } = await import('@ai-sdk/openai-compatible');
      return createOpenAICompatible({
        name: 'compatible',
        baseURL,
        // OpenAI-protocol servers (vLLM, llama.cpp, LM Studio, gateways) send usage in a streamed answer
        // only when asked (`stream_options.include_usage`); without it every run would count 0 tokens.
        includeUsage: true,
        ...(env.CADRE_COMPATIBLE_API_KEY ? { apiKey: env.CADRE_COMPATIBLE_API_KEY } : {}),
        ...fetchOption,
      })(modelId);
    }
  }
}

/**
 * A provider's base URL from Cadre's environment (`OPENAI_BASE_URL`, `ANTHROPIC_BASE_URL`,
 * `GOOGLE_GENERATIVE_AI_BASE_URL`): for gateways and proxies. Passed explicitly because a provider package
 * reads only the process's own environment, not the one a command or a test gives Cadre.
 */
function baseUrlFrom(env: Record<string, string | undefined>, variable: string): { baseURL?: string } {
  const value = env[variable];
  if (!value) return {};
  checkBaseUrl(value, variable);
  return { baseURL: value.replace(/\/+$/, '') };
}

/** A base URL from the environment must be an http(s) URL: else the mistake is the configuration's. */
function checkBaseUrl(value: string, variable: string): void {
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || !url.hostname) {
    throw new UserError(
      'config_invalid',
      `${variable}="${value}" is not an http(s) URL; write it like http://127.0.0.1:8000/v1`,
      { variable },
    );
  }
}

function requireKey(env: Record<string, string | undefined>, name: string, provider: string): string {
  const value = env[name];
  if (!value) {
    throw new UserError(
      'missing_key',
      `The ${provider} provider needs ${name}; export ${name}=... and try again.`,
      {
        variable: name,
      },
    );
  }
  return value;
}
