import { SystemError } from '../core/errors.ts';
import { guardedModelFetch } from './model-fetch.ts';
import { PROVIDERS, type ProviderName } from './resolve-model.ts';

type Env = Record<string, string | undefined>;

/** The variable each provider cannot run without (ollama has a default host and needs none). */
const REQUIRED: Record<ProviderName, string | undefined> = {
  openai: 'OPENAI_API_KEY',
  anthropic: 'ANTHROPIC_API_KEY',
  google: 'GOOGLE_GENERATIVE_AI_API_KEY',
  openrouter: 'OPENROUTER_API_KEY',
  ollama: undefined,
  compatible: 'CADRE_COMPATIBLE_BASE_URL',
};

/** The variable `provider` needs and `env` lacks, or undefined when a run could reach it. */
export function missingProviderSetting(provider: ProviderName, env: Env): string | undefined {
  const variable = REQUIRED[provider];
  return variable && !env[variable] ? variable : undefined;
}

/**
 * The providers a person set up: those whose key (or base URL) is in `env`. Ollama counts once OLLAMA_HOST
 * names a server: its default (a local one) may not exist, and listing would wait on nothing.
 */
export function configuredProviders(env: Env): ProviderName[] {
  return PROVIDERS.filter((provider) =>
    provider === 'ollama' ? Boolean(env.OLLAMA_HOST) : !missingProviderSetting(provider, env),
  );
}

const trimmed = (url: string) => url.replace(/\/+$/, '');

function ollamaBase(env: Env): string {
  const host = trimmed(env.OLLAMA_HOST ?? 'http://127.0.0.1:11434');
  return /^https?:\/\//.test(host) ? host : `http://${host}`;
}

/** Where a provider lists its models, and how to read the ids from its answer. */
function listRequest(provider: ProviderName, env: Env): { url: string; headers: Record<string, string> } {
  switch (provider) {
    case 'openai':
      return {
        url: `${trimmed(env.OPENAI_BASE_URL ?? 'https://api.openai.com/v1')}/models`,
        headers: { authorization: `Bearer ${env.OPENAI_API_KEY}` },
      };
    case 'anthropic':
      return {
        url: `${trimmed(env.ANTHROPIC_BASE_URL ?? 'https://api.anthropic.com/v1')}/models?limit=100`,
        headers: { 'x-api-key': env.ANTHROPIC_API_KEY ?? '', 'anthropic-version': '2023-06-01' },
      };
    case 'google':
      return {
        url: `${trimmed(env.GOOGLE_GENERATIVE_AI_BASE_URL ?? 'https://generativelanguage.googleapis.com/v1beta')}/models?pageSize=1000`,
        headers: { 'x-goog-api-key': env.GOOGLE_GENERATIVE_AI_API_KEY ?? '' },
      };
    case 'openrouter':
      return {
        url: 'https://openrouter.ai/api/v1/models',
        headers: { authorization: `Bearer ${env.OPENROUTER_API_KEY}` },
      };
    case 'ollama':
      return { url: `${ollamaBase(env)}/api/tags`, headers: {} };
    case 'compatible':
      return {
        url: `${trimmed(env.CADRE_COMPATIBLE_BASE_URL ?? '')}/models`,
        headers: env.CADRE_COMPATIBLE_API_KEY
          ? { authorization: `Bearer ${env.CADRE_COMPATIBLE_API_KEY}` }
          : {},
      };
  }
}

/** Model ids out of a provider's list: `data[].id` (OpenAI, Anthropic, OpenRouter, compatible servers),
 * `models[].name` (Gemini's "models/…" for generating text; Ollama's tags). */
function modelIds(provider: ProviderName, body: unknown): string[] {
  const record = (body ?? {}) as {
    data?: Array<{ id?: unknown }>;
    models?: Array<{ name?: unknown; supportedGenerationMethods?: unknown }>;
  };
  if (provider === 'google') {
    return (record.models ?? [])
      .filter(
        (model) =>
          !Array.isArray(model.supportedGenerationMethods) ||
          model.supportedGenerationMethods.includes('generateContent'),
      )
      .map((model) => String(model.name ?? '').replace(/^models\//, ''))
      .filter(Boolean);
  }
  if (provider === 'ollama')
    return (record.models ?? []).map((model) => String(model.name ?? '')).filter(Boolean);
  return (record.data ?? []).map((model) => String(model.id ?? '')).filter(Boolean);
}

/** The ids of the models `provider` offers, asked of its own list endpoint within `timeoutMs`. */
export async function fetchProviderModels(
  provider: ProviderName,
  env: Env,
  options: { timeoutMs: number; fetch?: typeof fetch },
): Promise<string[]> {
  const { url, headers } = listRequest(provider, env);
  const guarded = guardedModelFetch(options.fetch ?? globalThis.fetch);
  const response = await guarded(url, { headers, signal: AbortSignal.timeout(options.timeoutMs) });
  if (!response.ok)
    throw new SystemError('provider_unavailable', `${url} answered ${response.status}`, {
      provider,
      status: response.status,
    });
  return [...new Set(modelIds(provider, await response.json()))].sort();
}
