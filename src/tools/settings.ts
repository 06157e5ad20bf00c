import { z } from 'zod';
import { lspSettingsSchema } from './lsp/settings.ts';
import { SEARCH_PROVIDERS } from './web/search-providers.ts';

const providerNames = Object.keys(SEARCH_PROVIDERS) as [string, ...string[]];

/**
 * The `tools` section of Cadre's config: what the tool families read. Strict, so a misspelt key is an
 * error naming the file and the field rather than a setting silently ignored.
 *
 *   "tools": { "searchProvider": "brave", "searchApiKey": "...", "cacheTtl": { "web_search": 600 },
 *              "lsp": { "idleSeconds": 300 } }
 */
export const toolSettingsSchema = z.strictObject({
  /** Seconds each tool's responses stay cached; 0 turns the cache off for that tool. */
  cacheTtl: z.record(z.string(), z.number().min(0)).optional(),
  lsp: lspSettingsSchema.partial().optional(),
  /** The web_search back-end (CADRE_SEARCH_PROVIDER wins when both are set). */
  searchProvider: z.enum(providerNames).optional(),
  /** The search provider's API key (its own variable, e.g. BRAVE_API_KEY, wins when both are set). */
  searchApiKey: z.string().min(1).optional(),
  /** The search provider's base URL: a SearXNG instance, a mirror (CADRE_ENDPOINT_<API> wins). */
  searchEndpoint: z.url({ protocol: /^https?$/ }).optional(),
});

export type ToolSettings = z.infer<typeof toolSettingsSchema>;

/**
 * The environment the tools see: the search settings from config written as the variables the tools
 * already read, under the real environment (which wins, as it does for every other setting).
 */
export function toolEnvironment(
  env: Record<string, string | undefined>,
  settings: ToolSettings | undefined,
): Record<string, string | undefined> {
  if (!settings?.searchProvider && !settings?.searchApiKey && !settings?.searchEndpoint) return env;
  const name = (env.CADRE_SEARCH_PROVIDER?.trim() || settings.searchProvider || 'duckduckgo').toLowerCase();
  const provider = SEARCH_PROVIDERS[name];
  const fromConfig: Record<string, string> = {};
  if (settings.searchProvider) fromConfig.CADRE_SEARCH_PROVIDER = settings.searchProvider;
  if (provider?.keyEnv && settings.searchApiKey) fromConfig[provider.keyEnv] = settings.searchApiKey;
  if (provider && settings.searchEndpoint)
    fromConfig[`CADRE_ENDPOINT_${provider.api}`] = settings.searchEndpoint;
  const merged: Record<string, string | undefined> = { ...fromConfig };
  for (const [key, value] of Object.entries(env)) if (value) merged[key] = value;
  return merged;
}
