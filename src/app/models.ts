import { UserError } from '../core/errors.ts';
import {
  configuredProviders,
  fetchProviderModels,
  missingProviderSetting,
} from '../models/provider-models.ts';
import { PROVIDERS, type ProviderName, parseModelRef } from '../models/resolve-model.ts';
import type { CadreParts } from './cadre-parts.ts';
import type { SettingsUseCases } from './settings.ts';

/** One set-up provider's models, as "provider:model" references. */
export interface ProviderModels {
  provider: ProviderName;
  models: string[];
  /** `provider`: its own list endpoint answered; `config`: it did not (see `error`), these are the named ones. */
  source: 'provider' | 'config';
  error?: string;
}

/** What `GET /api/models` answers. */
export interface ModelList {
  providers: ProviderModels[];
  /** Providers not set up, with the variable each needs: their models are refused when chosen. */
  unconfigured: Array<{ provider: ProviderName; variable: string }>;
}

export interface ModelsOptions {
  env: Record<string, string | undefined>;
  /** Models this Cadre was given by reference (tests, demos): always usable. */
  overrides?: Record<string, unknown>;
  fetch?: typeof fetch;
  /** How long a provider's list may take (default 4 s). */
  timeoutMs?: number;
  /** How long a provider's answer is kept (default 10 minutes); a failure is asked again after 30 s. */
  cacheMs?: number;
}

const FAILURE_CACHE_MS = 30_000;

/**
 * The models a person can choose: each set-up provider's own list (its `/models` endpoint, asked with a
 * short timeout and kept a while), else the models the config and this user's settings name.
 */
export class ModelsUseCases {
  #parts: CadreParts;
  #settings: SettingsUseCases;
  #options: ModelsOptions;
  #cache = new Map<ProviderName, { until: number; result: Promise<{ models: string[]; error?: string }> }>();

  constructor(parts: CadreParts, settings: SettingsUseCases, options: ModelsOptions) {
    this.#parts = parts;
    this.#settings = settings;
    this.#options = options;
  }

  /** Every set-up provider's models for `userId`, and the providers that are not set up. */
  async list(userId: string): Promise<ModelList> {
    const named = await this.#namedModels(userId);
    const providers = await Promise.all(
      configuredProviders(this.#options.env).map(async (provider): Promise<ProviderModels> => {
        const listed = await this.#providerModels(provider);
        const own = named.filter((ref) => ref.startsWith(`${provider}:`));
        if (listed.error !== undefined)
          return { provider, models: own.sort(), source: 'config', error: listed.error };
        const models = [...new Set([...listed.models.map((id) => `${provider}:${id}`), ...own])].sort();
        return { provider, models, source: 'provider' };
      }),
    );
    const unconfigured = PROVIDERS.flatMap((provider) => {
      const variable = missingProviderSetting(provider, this.#options.env);
      return variable ? [{ provider, variable }] : [];
    });
    return { providers, unconfigured };
  }

  /**
   * Refuses a model no run could use: a provider whose key (or base URL) is missing, named with the
   * variable to set. A model this Cadre was given by reference is always usable.
   */
  checkUsable(ref: string): void {
    if (this.#options.overrides?.[ref]) return;
    const { provider } = parseModelRef(ref);
    const variable = missingProviderSetting(provider, this.#options.env);
    if (variable) {
      throw new UserError(
        'model_unavailable',
        `model "${ref}": the ${provider} provider needs ${variable}, which is not set on this server; ` +
          `set ${variable} where Cadre runs, or choose a model of a provider that is set up.`,
        { field: 'model', variable },
      );
    }
  }

  #providerModels(provider: ProviderName): Promise<{ models: string[]; error?: string }> {
    const now = Date.now();
    const cached = this.#cache.get(provider);
    if (cached && cached.until > now) return cached.result;
    const result = fetchProviderModels(provider, this.#options.env, {
      timeoutMs: this.#options.timeoutMs ?? 4_000,
      ...(this.#options.fetch ? { fetch: this.#options.fetch } : {}),
    }).then(
      (models) => ({ models }),
      (error: unknown) => {
        const entry = this.#cache.get(provider);
        if (entry) entry.until = Math.min(entry.until, Date.now() + FAILURE_CACHE_MS);
        const message = error instanceof Error ? error.message : String(error);
        return { models: [], error: `${provider} did not list its models: ${message}` };
      },
    );
    this.#cache.set(provider, { until: now + (this.#options.cacheMs ?? 600_000), result });
    return result;
  }

  /** Models the config and this user's saved settings name: the fallback when a provider does not list. */
  async #namedModels(userId: string): Promise<string[]> {
    const config = this.#parts.config;
    const agents = await this.#settings.agentSettings(userId);
    const refs = [
      config.model,
      config.subagentModel,
      ...Object.values(agents).map((settings) => settings.model),
      ...Object.keys(config.pricing ?? {}),
    ];
    return [...new Set(refs.filter((ref): ref is string => Boolean(ref) && ref !== 'inherit'))];
  }
}
