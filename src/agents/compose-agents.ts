import type { AgentDefinition } from '../core/agent-definition.ts';
import type { LoadedAgent } from './loader.ts';

export interface AgentSettings {
  enabled?: boolean;
  model?: string;
}

export interface Composition {
  catalog: ReadonlyMap<string, LoadedAgent>;
  /** Per-agent settings from config files and `PATCH /api/agents/:name`; later entries win. */
  settings?: Record<string, AgentSettings>;
  /** Instruction fragments for features that are on and relevant now (documents, workspace, ...). */
  fragments?: string[];
  /** Agents and main's direct tools that are not relevant now (e.g. docqa with no documents). */
  irrelevant?: ReadonlySet<string>;
}

/**
 * The definitions a runtime gets: settings applied, and `main` composed. Main's tools are its direct
 * tools plus every enabled, relevant sub-agent; its instructions are its base, routing guidance that names
 * only those sub-agents, and the fragments of features that are on. A disabled agent is in neither.
 */
export function composeAgents(composition: Composition): Map<string, AgentDefinition> {
  const definitions = new Map<string, AgentDefinition>();
  for (const [name, loaded] of composition.catalog) {
    const setting = composition.settings?.[name] ?? {};
    definitions.set(name, {
      ...loaded.definition,
      ...(setting.enabled !== undefined ? { enabled: setting.enabled } : {}),
      ...(setting.model ? { model: setting.model } : {}),
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

function routingGuidance(delegates: AgentDefinition[], directTools: string[]): string {
  const direct = directTools.length ? ` or use a direct tool (${directTools.join(', ')})` : '';
  const lines = ['## When to delegate', `- Simple questions and small talk: answer directly${direct}.`];
  if (!delegates.length) {
    lines.push('- No sub-agents are enabled: do the work yourself with your tools.');
    return lines.join('\n');
  }
  lines.push('- Focused work that needs research, several tool calls or a long read: delegate it.');
  lines.push('', '## Sub-agents (each is a tool taking a `task`)');
  for (const agent of delegates) {
    const extra = Object.keys(agent.inputs);
    lines.push(
      `- \`${agent.name}\`${extra.length ? ` (also takes ${extra.join(', ')})` : ''}: ${agent.description}`,
    );
  }
  return lines.join('\n');
}
