import type { AgentDefinition } from '../core/agent-definition.ts';
import type { ProviderOptionsSetting, ReasoningSetting } from '../core/model-options.ts';
import type { LoadedAgent } from './loader.ts';

/** Provider options of `over` merged into `base`, provider by provider. */
function mergeProviderOptions(
  base: ProviderOptionsSetting | undefined,
  over: ProviderOptionsSetting,
): ProviderOptionsSetting {
  const merged = { ...base };
  for (const [name, options] of Object.entries(over)) merged[name] = { ...merged[name], ...options };
  return merged;
}

export interface AgentSettings {
  enabled?: boolean;
  model?: string;
  /** Wall-clock limit for each run, over the definition's `timeout` (config or the agents panel). */
  timeoutSeconds?: number;
  /** Reasoning effort or thinking budget, over the definition's (config or the agents panel). */
  reasoning?: ReasoningSetting;
  /** Provider options merged over the definition's, by provider (config). */
  providerOptions?: ProviderOptionsSetting;
}

export interface Composition {
  catalog: ReadonlyMap<string, LoadedAgent>;
  /** Per-agent settings from config files and `PATCH /api/agents/:name`; later entries win. */
  settings?: Record<string, AgentSettings>;
  /** Instruction fragments for features that are on and relevant now (documents, workspace, ...). */
  fragments?: string[];
  /** Agents and main's direct tools that are not relevant now (e.g. docqa with no documents). */
  irrelevant?: ReadonlySet<string>;
  /** Tools that can do nothing for this person now (search_documents with no documents): in no agent's list. */
  idleTools?: ReadonlySet<string>;
  /** The person's location and profile, for agents whose definition sets `personContext`. */
  person?: { location?: string | undefined; profile?: string | undefined };
}

/**
 * The definitions a runtime gets: settings applied, and `main` composed. Main's tools are its direct
 * tools plus every enabled, relevant sub-agent; its instructions are its base, routing guidance that names
 * only those sub-agents, and the fragments of features that are on. A disabled agent is in neither.
 */
export function composeAgents(composition: Composition): Map<string, AgentDefinition> {
  const definitions = new Map<string, AgentDefinition>();
  const aboutPerson = personFragment(composition.person);
  for (const [name, loaded] of composition.catalog) {
    const setting = composition.settings?.[name] ?? {};
    const definition = loaded.definition;
    definitions.set(name, {
      ...definition,
      ...(setting.enabled !== undefined ? { enabled: setting.enabled } : {}),
      ...(setting.model ? { model: setting.model } : {}),
      ...(setting.timeoutSeconds ? { timeout: setting.timeoutSeconds } : {}),
      ...(setting.reasoning ? { reasoning: setting.reasoning } : {}),
      ...(setting.providerOptions
        ? { providerOptions: mergeProviderOptions(definition.providerOptions, setting.providerOptions) }
        : {}),
      ...(composition.idleTools?.size
        ? { tools: definition.tools.filter((tool) => !composition.idleTools?.has(tool)) }
        : {}),
      ...(aboutPerson && definition.personContext
        ? { instructions: [definition.instructions, aboutPerson].filter(Boolean).join('\n\n') }
        : {}),
    });
  }
  const main = definitions.get('main');
  if (!main) return definitions;
  const delegates = [...definitions.values()].filter(
    (agent) => agent.name !== 'main' && agent.enabled && !composition.irrelevant?.has(agent.name),
  );
  const directTools = main.tools.filter(
    (name) => !definitions.has(name) && !composition.irrelevant?.has(name),
  );
  definitions.set('main', {
    ...main,
    tools: [...directTools, ...delegates.map((agent) => agent.name)],
    instructions: [
      main.instructions,
      routingGuidance(delegates, directTools),
      ...(composition.fragments ?? []),
    ]
      .filter(Boolean)
      .join('\n\n'),
  });
  return definitions;
}

/**
 * When main uses its own tools and when it delegates (seed 002's routing, in Cadre's words): simple
 * lookups directly; one focused aspect per sub-agent call; the scope found first, then each item delegated
 * by name; a comparison split into one call per side.
 */
function routingGuidance(delegates: AgentDefinition[], directTools: string[]): string {
  const own = directTools.map((name) => `\`${name}\``).join(', ');
  // Without sub-agents (delegation off, or none enabled) nothing about them is said (seed 000: a
  // feature's instructions only when it is on).
  if (!delegates.length) {
    return directTools.length
      ? `## Your tools\n- Simple questions and small talk: answer directly. For facts, pages, files and sums, use your own tools (${own}).`
      : '';
  }
  const lines = [
    '## When to delegate',
    'You hand focused work to specialised sub-agents when that is better: they work in their own context and return short, cited results.',
  ];
  lines.push(
    directTools.length
      ? `- Simple questions and small talk: answer directly. Simple lookups (one fact, one page, one file, a sum): use your own tools (${own}) yourself; a sub-agent is not worth it.`
      : '- Simple questions and small talk: answer directly.',
  );
  lines.push(
    '- Delegate work that needs many searches, long reading or many files: the sub-agent does it in its own context and hands back only what matters.',
    '- Give each sub-agent one focused task with everything it needs: it sees none of this conversation.',
    '- One focused aspect per sub-agent call. A request with several parts gets one call per part, in the same step when they do not depend on each other (they run in parallel).',
    '- Find the scope before you delegate it: when you do not yet know which items there are, look first (a quick lookup of your own or one sub-agent call), then give each item, or small group of items, its own call that names them. A sub-agent sees none of this conversation, so never write a task like "the remaining items" or "the others".',
    '- Comparisons: one call per side ("the population of Lyon", "the population of Marseille"), then compare the results yourself.',
    '- Never ask the same agent the same task twice; build on what it returned.',
    '- A sub-agent\'s result has a status. If it is not "ok", say what is missing rather than guessing.',
    '- Keep the citations sub-agents give you (links, pages, file paths) in your answer.',
    '',
    '## Sub-agents (each is a tool taking a `task`)',
  );
  for (const agent of delegates) {
    const extra = Object.keys(agent.inputs);
    lines.push(
      `- \`${agent.name}\`${extra.length ? ` (also takes ${extra.join(', ')})` : ''}: ${agent.description}`,
    );
  }
  return lines.join('\n');
}

/** The person's own settings, for the agents that asked for them; undefined when none are set. */
function personFragment(person: Composition['person']): string | undefined {
  if (!person?.location && !person?.profile) return undefined;
  const lines = ['## About the person you work for (their own settings)'];
  if (person.location)
    lines.push(
      `- Location: ${person.location}. Use it for local questions (weather, prices, laws, "near me") unless they name another place.`,
    );
  if (person.profile) lines.push(`- Profile: ${person.profile}`);
  return lines.join('\n');
}
