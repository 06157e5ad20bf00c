import { createAnthropic } from '@ai-sdk/anthropic';
import { createGoogleGenerativeAI } from '@ai-sdk/google';
import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import type { LanguageModelV4 } from '@ai-sdk/provider';
import { createOpenRouter } from '@openrouter/ai-sdk-provider';
import { createOllama } from 'ollama-ai-provider-v2';
import { UserError } from '../core/errors.ts';
import { DEFAULT_RETRY, type RetryPolicy, withRetryPolicy } from './retry.ts';

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
 * Providers are created once each, on first use, from the environment their own SDKs read.
 */
export function createModelResolver(options: ModelResolverOptions): (ref: string) => LanguageModelV4 {
  const { env } = options;
  const policy = options.retry ?? DEFAULT_RETRY;
  const cache = new Map<string, LanguageModelV4>();
  const fetchOption = options.fetch ? { fetch: options.fetch } : {};

  const build = (provider: ProviderName, modelId: string): LanguageModelV4 => {
    switch (provider) {
      case 'openai':
        return createOpenAI({ apiKey: requireKey(env, 'OPENAI_API_KEY', provider), ...fetchOption })(modelId);
      case 'anthropic':
        return createAnthropic({ apiKey: requireKey(env, 'ANTHROPIC_API_KEY', provider), ...fetchOption })(
          modelId,
        );
      case 'google':
        return createGoogleGenerativeAI({
          apiKey: requireKey(env, 'GOOGLE_GENERATIVE_AI_API_KEY', provider),
          ...fetchOption,
        })(modelId);
      case 'openrouter':
        return createOpenRouter({ apiKey: requireKey(env, 'OPENROUTER_API_KEY', provider), ...fetchOption })(
          modelId,
        ) as unknown as LanguageModelV4;
      case 'ollama': {
        const host = (env.OLLAMA_HOST ?? 'http://127.0.0.1:11434').replace(/\/+$/, '');
        const baseURL = `${/^https?:\/\//.test(host) ? host : `http://${host}`}/api`;
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
        return createOpenAICompatible({
          name: 'compatible',
          baseURL,
          ...(env.CADRE_COMPATIBLE_API_KEY ? { apiKey: env.CADRE_COMPATIBLE_API_KEY } : {}),
          ...fetchOption,
        })(modelId);
      }
    }
  };

  return (ref: string) => {
    const override = options.overrides?.[ref];
    if (override) return override;
    const cached = cache.get(ref);
    if (cached) return cached;
    const { provider, modelId } = parseModelRef(ref);
    const model = withRetryPolicy(build(provider, modelId), policy);
    cache.set(ref, model);
    return model;
  };
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
