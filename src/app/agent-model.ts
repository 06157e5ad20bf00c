import type { AgentDefinition } from '../core/agent-definition.ts';

/** The model an agent will run on, and why: what `cadre agents show` prints. */
export interface AgentModelChoice {
  /** "provider:model", or undefined when nothing names one (no CADRE_MODEL). */
  model: string | undefined;
  reason: string;
}

export interface ModelSources {
  /** The main agent's model (config `model`, CADRE_MODEL, --model). */
  mainModel: string | undefined;
  /** Sub-agents' model (config `subagentModel`, CADRE_SUBAGENT_MODEL). */
  subagentModel: string | undefined;
  /** The definition as its file says, before per-agent settings were applied. */
  declaredModel: string | undefined;
}

/**
 * The same rule the runtime applies (`Runtime.modelRefFor`), spelled out for a person. Sub-agents are
 * described as delegated to by `main`, which is how they run from `cadre ask`.
 */
export function agentModelChoice(definition: AgentDefinition, sources: ModelSources): AgentModelChoice {
  const own = definition.model;
  const fromSettings = own !== sources.declaredModel;
  if (own && own !== 'inherit') {
    return {
      model: own,
      reason: fromSettings
        ? `its own: agents.${definition.name}.model in config or saved settings`
        : 'its own: named in its definition',
    };
  }
  const main = sources.mainModel;
  const mainText = main ?? '(none set)';
  if (definition.name === 'main')
    return { model: main, reason: 'the main model: CADRE_MODEL, --model or "model" in config' };
  if (own === 'inherit')
    return {
      model: main,
      reason: `"model: inherit" in its definition: its parent's model, main's ${mainText}`,
    };
  if (sources.subagentModel)
    return {
      model: sources.subagentModel,
      reason: 'no model of its own: CADRE_SUBAGENT_MODEL or "subagentModel" in config',
    };
  return {
    model: main,
    reason: `no model of its own and no CADRE_SUBAGENT_MODEL: its parent's model, main's ${mainText}`,
  };
}
