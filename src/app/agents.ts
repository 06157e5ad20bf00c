import type { ContextPolicy } from '../core/agent-definition.ts';
import { UserError } from '../core/errors.ts';
import type { ReasoningSetting } from '../core/model-options.ts';
import { noModelError } from '../core/runtime.ts';
import { agentModelChoice } from './agent-model.ts';
import type { Cadre } from './create-cadre.ts';

/** One agent as the web app's panel shows it. */
export interface AgentView {
  name: string;
  description: string;
  tools: string[];
  /** What the definition or the saved settings name: "provider:model" or "inherit". */
  model: string;
  /** The model it would run on now, and why (as `cadre agents show` says). */
  effectiveModel: string | undefined;
  modelReason: string;
  enabled: boolean;
  /** Reasoning effort or thinking budget its runs ask for (its definition's, a setting's or the config's). */
  reasoning?: ReasoningSetting;
  /** Where the definition came from: built-in, user, project, claude. */
  source: string;
  /** What of its parent's conversation a run of it gets: isolated, last-N, full or fork. */
  context: ContextPolicy;
  /** `true`: every delegation to it runs in the background; `allowed`: its caller may choose to. */
  background: boolean | 'allowed';
  limits: {
    maxTurns?: number;
    timeout?: number;
    budget?: number;
    maxDepth?: number;
    maxConcurrency?: number;
    maxOutputTokens?: number;
    modelCallTimeout?: number;
    maxResultChars?: number;
    reuseTtl?: number;
  };
}

/** Every agent of the catalog with this user's composition applied (enabled, model), main first. */
export async function listAgents(cadre: Cadre, userId: string): Promise<AgentView[]> {
  const composed = (await cadre.runtime({ userId })).options.agents;
  const settings = await cadre.settings.agentSettings(userId);
  return [...cadre.catalog.agents.values()].map((loaded) => {
    const definition = composed.get(loaded.definition.name) ?? {
      ...loaded.definition,
      ...(settings[loaded.definition.name]?.enabled === false ? { enabled: false } : {}),
    };
    const choice = agentModelChoice(definition, {
      mainModel: cadre.config.model,
      subagentModel: cadre.config.subagentModel,
      declaredModel: loaded.definition.model,
    });
    const reasoning = definition.reasoning ?? cadre.config.reasoning;
    const limits: AgentView['limits'] = {};
    const keys = [
      'maxTurns',
      'timeout',
      'budget',
      'maxDepth',
      'maxConcurrency',
      'maxOutputTokens',
      'modelCallTimeout',
      'maxResultChars',
      'reuseTtl',
    ] as const;
    for (const key of keys) {
      const value = definition[key];
      if (typeof value === 'number') limits[key] = value;
    }
    return {
      name: definition.name,
      description: definition.description,
      tools: [...definition.tools],
      model: definition.model ?? 'inherit',
      effectiveModel: choice.model,
      modelReason: choice.reason,
      enabled: definition.enabled,
      ...(reasoning ? { reasoning } : {}),
      source: loaded.source.kind,
      context: definition.context,
      background: definition.background,
      limits,
    };
  });
}

const MODEL_REF = /^[a-z][a-z0-9-]*:.+$/;

/**
 * Saves a person's choice for one agent: offered to the main agent or not, and its model (`null` returns
 * to what its definition says). The next message composes the agents again, so it takes effect there.
 */
export async function updateAgent(
  cadre: Cadre,
  userId: string,
  name: string,
  patch: { enabled?: boolean; model?: string | null; timeoutSeconds?: number | null; reasoning?: unknown },
): Promise<void> {
  if (!(await cadre.wiring()).catalog.agents.has(name))
    throw new UserError('not_found', `There is no agent "${name}".`, { name });
  if (name === 'main' && patch.enabled === false)
    throw new UserError('bad_request', 'The main agent answers every message; it cannot be switched off.');
  if (typeof patch.model === 'string' && patch.model !== 'inherit') {
    if (!MODEL_REF.test(patch.model))
      throw new UserError(
        'bad_request',
        `model "${patch.model}": expected "inherit" or "provider:model", e.g. "openai:gpt-5-mini".`,
        { field: 'model' },
      );
    // A provider no run could use is refused now, not at the next message.
    const unknown = cadre.unknownProvider(patch.model);
    if (unknown) throw new UserError('bad_request', `model "${patch.model}": ${unknown}`, { field: 'model' });
    // So is one whose provider has no key (or base URL) here: the person learns it when choosing.
    cadre.models.checkUsable(patch.model);
  }
  await cadre.settings.updateAgent(userId, name, patch);
}

/** What the page needs to know before the first message: whether a model is set, and how to set one. */
export function modelStatus(cadre: Cadre): { model: string | null; noModelMessage?: string } {
  if (cadre.config.model) return { model: cadre.config.model };
  return { model: null, noModelMessage: noModelError(`${cadre.home}/config.json`).message };
}
