import type { JSONObject, SharedV4ProviderOptions } from '@ai-sdk/provider';
import type { ModelMessage } from 'ai';
import { z } from 'zod';

/**
 * What Cadre sends each provider besides the conversation: reasoning, prompt caching, Zero Data Retention
 * and a `providerOptions` pass-through, per agent over the configuration's defaults.
 */

/** Reasoning effort as AI SDK's portable `reasoning` names it, or a thinking budget in tokens. */
export const reasoningSchema = z.union(
  [
    z.enum(['none', 'minimal', 'low', 'medium', 'high', 'xhigh']),
    z.strictObject({ budgetTokens: z.number().int().min(1024).max(200_000) }),
  ],
  {
    error: 'an effort ("none", "minimal", "low", "medium", "high", "xhigh") or {budgetTokens: N} (N ≥ 1024)',
  },
);
export type ReasoningSetting = z.infer<typeof reasoningSchema>;

/** Provider options by provider name, passed through as AI SDK takes them (`{anthropic: {...}}`). */
export const providerOptionsSchema = z.record(
  z.string().regex(/^[a-z][a-zA-Z0-9-]*$/, 'a provider name such as "openai", "anthropic" or "google"'),
  z.record(z.string(), z.unknown()),
);
export type ProviderOptionsSetting = z.infer<typeof providerOptionsSchema>;

/** The configuration's defaults for every agent's model calls. */
export interface ModelSettings {
  reasoning?: ReasoningSetting | undefined;
  providerOptions?: ProviderOptionsSetting | undefined;
  /** Ask for prompt caching where the provider needs it asked (default true). */
  promptCaching?: boolean | undefined;
  /** The OpenAI organisation keeps nothing: send `store: false` with encrypted reasoning. */
  zeroDataRetention?: boolean | undefined;
}

/** What one agent's model calls carry. */
export interface CallSettings {
  reasoning?: 'none' | 'minimal' | 'low' | 'medium' | 'high' | 'xhigh';
  providerOptions?: SharedV4ProviderOptions;
  /** Output tokens to add to the agent's limit, so reasoning leaves room for the answer. */
  reasoningRoom: number;
  /** Anthropic: cache breakpoints on the instructions and tools, and on the conversation so far. */
  cacheBreakpoints: boolean;
}

/** Output tokens an effort is given besides the answer's own limit. */
const EFFORT_ROOM = { none: 0, minimal: 1024, low: 2048, medium: 8192, high: 16_384, xhigh: 32_768 } as const;

/** Model families that reason by default (OpenAI's gpt-5 and o-series, Gemini 2.5 and later). */
function reasonsByDefault(provider: string, modelId: string): boolean {
  if (provider === 'openai') return /^(gpt-5|o\d)/.test(modelId);
  if (provider === 'google') return /^gemini-(2\.5|[3-9])/.test(modelId);
  return false;
}

/** The settings of one agent's calls on `modelRef`: its own over the configuration's, mapped to the provider. */
export function callSettingsFor(
  modelRef: string,
  agent: {
    name: string;
    reasoning?: ReasoningSetting | undefined;
    providerOptions?: ProviderOptionsSetting | undefined;
  },
  settings: ModelSettings = {},
): CallSettings {
  const colon = modelRef.indexOf(':');
  const provider = modelRef.slice(0, colon);
  const modelId = modelRef.slice(colon + 1);
  const reasoning = agent.reasoning ?? settings.reasoning;
  const caching = settings.promptCaching !== false;
  const derived: Record<string, JSONObject> = {};
  const add = (name: string, options: JSONObject) => {
    derived[name] = { ...derived[name], ...options };
  };
  let reasoningRoom = reasonsByDefault(provider, modelId) ? EFFORT_ROOM.medium : 0;
  let effort: CallSettings['reasoning'];
  if (typeof reasoning === 'string') {
    effort = reasoning;
    reasoningRoom = EFFORT_ROOM[reasoning];
  } else if (reasoning) {
    reasoningRoom = reasoning.budgetTokens;
    if (provider === 'anthropic')
      add('anthropic', { thinking: { type: 'enabled', budgetTokens: reasoning.budgetTokens } });
    else if (provider === 'google')
      add('google', { thinkingConfig: { thinkingBudget: reasoning.budgetTokens, includeThoughts: true } });
    else effort = reasoning.budgetTokens <= 2048 ? 'low' : reasoning.budgetTokens <= 8192 ? 'medium' : 'high';
  }
  // Anthropic's package adds the thinking budget to max_tokens itself.
  if (provider === 'anthropic') reasoningRoom = 0;
  if (provider === 'openai') {
    // One cache key per agent: its requests share a prefix (instructions, tools), and the key routes them
    // to the same cache.
    if (caching) add('openai', { promptCacheKey: `cadre-${agent.name}` });
    if (settings.zeroDataRetention) add('openai', { store: false, include: ['reasoning.encrypted_content'] });
  }
  const own = { ...settings.providerOptions };
  for (const [name, options] of Object.entries(agent.providerOptions ?? {}))
    own[name] = { ...own[name], ...options };
  for (const [name, options] of Object.entries(own)) add(name, options as JSONObject);
  return {
    ...(effort ? { reasoning: effort } : {}),
    ...(Object.keys(derived).length ? { providerOptions: derived } : {}),
    reasoningRoom,
    cacheBreakpoints: caching && provider === 'anthropic',
  };
}

const EPHEMERAL = { anthropic: { cacheControl: { type: 'ephemeral' } } } as const;

/** Instructions as a system message carrying a cache breakpoint: it covers the tools before it too. */
export function cachedInstructions(instructions: string): {
  role: 'system';
  content: string;
  providerOptions: SharedV4ProviderOptions;
} {
  return { role: 'system', content: instructions, providerOptions: EPHEMERAL };
}

/**
 * The conversation with one cache breakpoint, on its last message: the next step reads everything up to
 * here from the cache (Anthropic looks back from a breakpoint for the longest prefix it stored). Earlier
 * breakpoints are taken off, so a long run never passes the four Anthropic allows. `held` (a forked run's
 * count of its parent's messages) keeps a second one on the last of those, where the parent's request had
 * its own: the fork's request is then the parent's byte for byte up to there, and reads it from the cache.
 */
export function withConversationBreakpoint(messages: ModelMessage[], held?: number): ModelMessage[] {
  return messages.map((message, index) => {
    const { anthropic, ...others } = (message.providerOptions ?? {}) as Record<
      string,
      JSONObject | undefined
    >;
    const { cacheControl: _, ...rest } = anthropic ?? {};
    const last = index === messages.length - 1 || (held !== undefined && index === held - 1);
    const options = {
      ...others,
      ...(last || Object.keys(rest).length
        ? { anthropic: last ? { ...rest, ...EPHEMERAL.anthropic } : rest }
        : {}),
    };
    const { providerOptions: __, ...bare } = message;
    return (Object.keys(options).length ? { ...bare, providerOptions: options } : bare) as ModelMessage;
  });
}
