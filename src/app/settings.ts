import { z } from 'zod';
import type { AgentSettings } from '../agents/compose-agents.ts';
import { formatIssues } from '../config/format-issues.ts';
import { prefetchTrigger } from '../config/prefetch-trigger.ts';
import { configSchema } from '../config/schema.ts';
import { UserError } from '../core/errors.ts';
import { reasoningSchema } from '../core/model-options.ts';
import { unknownAgentError } from '../core/unknown-agent.ts';
import type { CadreParts } from './cadre-parts.ts';
import { OPERATOR } from './user-workspaces.ts';

/** What `PATCH /api/agents/:name` and friends may change about an agent, validated at the edge. */
export const agentSettingsPatch = z.strictObject({
  enabled: z.boolean().optional(),
  model: z
    .union([configSchema.shape.model.unwrap(), z.literal('inherit')])
    .nullable()
    .optional(),
  /** Seconds each run of the agent may take; null goes back to its definition's. */
  timeoutSeconds: z.number().positive().max(86_400).nullable().optional(),
  /** Reasoning effort or thinking budget; null goes back to its definition's (or the config's). */
  reasoning: reasoningSchema.nullable().optional(),
});
export type AgentSettingsPatch = z.infer<typeof agentSettingsPatch>;

const delegationSchema = configSchema.shape.delegation.unwrap();
export type DelegationSettings = z.infer<typeof delegationSchema>;

const agentScope = (userId: string) => `agent:${userId}`;

/** What of the operator's config for one agent a shared server's user cannot change: off, and a model. */
function ceiling(configured: AgentSettings | undefined): AgentSettings {
  return {
    ...(configured?.enabled === false ? { enabled: false } : {}),
    ...(configured?.model !== undefined ? { model: configured.model } : {}),
  };
}

/**
 * The longest run the operator allows an agent: its setting in the config, else the config's global limit,
 * else the agent definition's own `timeout` (the definitions a server loads are the operator's too).
 */
function operatorTimeout(
  config: CadreParts['config'],
  agent: string,
  definitionTimeout: number | undefined,
): number | undefined {
  return config.agents?.[agent]?.timeoutSeconds ?? config.limits?.timeoutSeconds ?? definitionTimeout;
}
const userScope = (userId: string) => `user:${userId}`;

/**
 * A user's settings over the configuration files: per-agent `enabled` and `model`, and the delegation
 * mode. Saved settings win over config files; each user has their own.
 */
export class SettingsUseCases {
  #parts: CadreParts;

  constructor(parts: CadreParts) {
    this.#parts = parts;
  }

  /** Per-agent settings for `userId`: config files first, then what the user saved. */
  async agentSettings(userId: string): Promise<Record<string, AgentSettings>> {
    const saved = (await this.#parts.store.settings.list(agentScope(userId))) as Record<
      string,
      AgentSettings
    >;
    const configured = this.#parts.config.agents ?? {};
    const settings: Record<string, AgentSettings> = { ...configured };
    const definitions = userId === OPERATOR ? undefined : (await this.#parts.wiring()).catalog.agents;
    for (const [name, value] of Object.entries(saved)) {
      settings[name] = { ...settings[name], ...value };
      // For a shared server's users the operator's config is the ceiling: what it disabled stays off,
      // and a model it pinned (and pays for) stays pinned, whatever they saved.
      if (userId !== OPERATOR) {
        settings[name] = { ...settings[name], ...ceiling(configured[name]) };
        // A time limit the operator set is the longest a user's run may take, whatever they saved.
        const longest = operatorTimeout(this.#parts.config, name, definitions?.get(name)?.definition.timeout);
        const own = settings[name]?.timeoutSeconds;
        if (longest !== undefined && own !== undefined && own > longest)
          settings[name] = { ...settings[name], timeoutSeconds: longest };
      }
    }
    return settings;
  }

  /** Changes one agent's settings for `userId`; `model: null` goes back to the definition's model. */
  async updateAgent(userId: string, name: string, patch: unknown): Promise<AgentSettings> {
    const parsed = agentSettingsPatch.safeParse(patch);
    if (!parsed.success) {
      throw new UserError(
        'invalid_settings',
        `Settings for agent "${name}": ${formatIssues(parsed.error.issues)}`,
        {
          agent: name,
        },
      );
    }
    const { agents } = (await this.#parts.wiring()).catalog;
    if (!agents.has(name)) throw unknownAgentError(name, agents.keys());
    if (name === 'main' && parsed.data.enabled === false) {
      throw new UserError('invalid_settings', 'The main agent cannot be disabled.', { agent: name });
    }
    const pinned = userId === OPERATOR ? {} : ceiling(this.#parts.config.agents?.[name]);
    if (pinned.enabled === false && parsed.data.enabled === true) {
      throw new UserError('operator_setting', `The operator has disabled agent "${name}" on this server.`, {
        agent: name,
      });
    }
    if (pinned.model !== undefined && parsed.data.model !== undefined) {
      throw new UserError(
        'operator_setting',
        `The operator has set the model of agent "${name}" on this server (${pinned.model}).`,
        { agent: name },
      );
    }
    const longest =
      userId === OPERATOR
        ? undefined
        : operatorTimeout(this.#parts.config, name, agents.get(name)?.definition.timeout);
    if (longest !== undefined && (parsed.data.timeoutSeconds ?? 0) > longest) {
      throw new UserError(
        'operator_setting',
        `The operator allows runs of agent "${name}" at most ${longest} s on this server.`,
        { agent: name },
      );
    }
    const current = ((await this.#parts.store.settings.get(agentScope(userId), name)) ?? {}) as AgentSettings;
    const next: AgentSettings = { ...current };
    if (parsed.data.enabled !== undefined) next.enabled = parsed.data.enabled;
    if (parsed.data.model === null) delete next.model;
    else if (parsed.data.model !== undefined) next.model = parsed.data.model;
    if (parsed.data.timeoutSeconds === null) delete next.timeoutSeconds;
    else if (parsed.data.timeoutSeconds !== undefined) next.timeoutSeconds = parsed.data.timeoutSeconds;
    if (parsed.data.reasoning === null) delete next.reasoning;
    else if (parsed.data.reasoning !== undefined) next.reasoning = parsed.data.reasoning;
    await this.#parts.store.settings.put(agentScope(userId), name, next);
    await this.#parts.userChanged(userId);
    return (await this.agentSettings(userId))[name] ?? {};
  }

  /** How the main agent delegates for `userId`: config files, then the user's saved choice. */
  async delegation(userId: string): Promise<DelegationSettings> {
    const saved = (await this.#parts.store.settings.get(userScope(userId), 'delegation')) as
      | DelegationSettings
      | undefined;
    const merged = { ...(this.#parts.config.delegation ?? {}), ...(saved ?? {}) };
    // Saved before the mode took the API's name: `on-demand` is `delegate`.
    if ((merged.mode as string | undefined) === 'on-demand') merged.mode = 'delegate';
    // Delegation the operator turned off stays off for a shared server's users, whatever they saved.
    if (userId !== OPERATOR && this.#parts.config.delegation?.mode === 'off') merged.mode = 'off';
    return merged;
  }

  async updateDelegation(userId: string, value: unknown): Promise<DelegationSettings> {
    const parsed = delegationSchema.safeParse(value);
    if (!parsed.success) {
      throw new UserError('invalid_settings', `Delegation settings: ${formatIssues(parsed.error.issues)}`);
    }
    if (
      userId !== OPERATOR &&
      this.#parts.config.delegation?.mode === 'off' &&
      parsed.data.mode !== undefined &&
      parsed.data.mode !== 'off'
    ) {
      throw new UserError('operator_setting', 'The operator has turned delegation off on this server.', {});
    }
    const merged = { ...(await this.delegation(userId)), ...parsed.data };
    if (merged.mode === 'prefetch' && !merged.prefetch) {
      throw new UserError('invalid_settings', 'Prefetch mode needs "prefetch": {agent, trigger}.');
    }
    if (merged.prefetch) prefetchTrigger(merged.prefetch.trigger);
    const agent = parsed.data.prefetch?.agent;
    if (agent !== undefined) {
      const known = (await this.#parts.wiring()).catalog.agents;
      if (!known.has(agent)) {
        throw new UserError(
          'invalid_settings',
          `prefetch.agent: there is no agent named "${agent}". Known agents: ${[...known.keys()].sort().join(', ')}.`,
          { agent },
        );
      }
    }
    await this.#parts.store.settings.put(userScope(userId), 'delegation', merged);
    await this.#parts.userChanged(userId);
    return merged;
  }
}
