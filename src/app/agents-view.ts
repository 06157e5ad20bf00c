import { type AgentSourceKind, loadAgentFile } from '../agents/loader.ts';
import type { AgentDefinition } from '../core/agent-definition.ts';
import type { RuntimeLimits } from '../core/limits.ts';
import type { Runtime } from '../core/runtime.ts';
import { unknownAgentError } from '../core/unknown-agent.ts';
import { serverOf } from '../tools/mcp/mcp-clients.ts';
import { type AgentModelChoice, agentModelChoice } from './agent-model.ts';
import type { CadreParts } from './cadre-parts.ts';
import type { SettingsUseCases } from './settings.ts';

/** One agent as listed: where it came from and whether it is on for this user. */
export interface AgentListing {
  name: string;
  enabled: boolean;
  description: string;
  model?: string;
  source: AgentSourceKind;
  path: string;
  overrides?: string;
  notes: string[];
}

export interface AgentToolListing {
  name: string;
  kind: 'agent' | 'tool' | 'mcp';
  available: boolean;
  reason?: string;
  enableWith?: string;
}

/** One agent in full, as this user's runs would get it (settings applied, `main` composed). */
export interface AgentDetails {
  definition: AgentDefinition;
  tools: AgentToolListing[];
  source: { kind: AgentSourceKind; path: string };
  notes: string[];
  limits: RuntimeLimits;
  /** The model its runs use, and why. */
  model: AgentModelChoice;
  /** The model its definition file names, before settings. */
  declaredModel: string | undefined;
}

export interface AgentFileCheck {
  path: string;
  ok: boolean;
  name?: string;
  notes?: string[];
  error?: string;
}

/** The agents view: list, show, check definition files, for one user. */
export class AgentsView {
  #parts: CadreParts;
  #settings: SettingsUseCases;
  #runtime: (userId: string) => Promise<Runtime>;

  constructor(parts: CadreParts, settings: SettingsUseCases, runtime: (userId: string) => Promise<Runtime>) {
    this.#parts = parts;
    this.#settings = settings;
    this.#runtime = runtime;
  }

  /** Every loaded agent with this user's settings applied, and the files that were skipped. */
  async list(
    userId: string,
  ): Promise<{ agents: AgentListing[]; problems: Array<{ path: string; message: string }> }> {
    const { catalog } = await this.#parts.wiring();
    const agents = (await this.#runtime(userId)).options.agents;
    const settings = await this.#settings.agentSettings(userId);
    const rows = [...catalog.agents.values()].map((loaded) => {
      const definition = agents.get(loaded.definition.name) ?? loaded.definition;
      const model = settings[definition.name]?.model ?? definition.model;
      return {
        name: definition.name,
        enabled: definition.enabled,
        description: definition.description,
        ...(model ? { model } : {}),
        source: loaded.source.kind,
        path: loaded.source.path,
        ...(loaded.overrides ? { overrides: loaded.overrides.path } : {}),
        notes: loaded.notes,
      };
    });
    return { agents: rows, problems: catalog.problems.map(({ path, message }) => ({ path, message })) };
  }

  /** One agent as this user's runs get it; `UserError('unknown_agent')` when there is none by that name. */
  async show(userId: string, name: string): Promise<AgentDetails> {
    const { catalog, tools } = await this.#parts.wiring();
    const loaded = catalog.agents.get(name);
    const runtime = await this.#runtime(userId);
    const definition = runtime.options.agents.get(name);
    if (!loaded || !definition) throw unknownAgentError(name, catalog.agents.keys());
    // The agent's MCP servers start here, as they would for its first run, so their tools can be listed.
    const { mcp } = this.#parts;
    await mcp.prepare(definition.tools);
    // An allow-list entry as the tools it stands for (`mcp__x__*`: the server's tools, or itself if none).
    const entries = definition.tools.flatMap((entry) => {
      const expanded = tools.expand(entry);
      return expanded.length ? expanded : [entry];
    });
    const toolListings = entries.map((tool): AgentToolListing => {
      if (catalog.agents.has(tool)) return { name: tool, kind: 'agent', available: true };
      const server = serverOf(tool);
      if (server) {
        const failed = mcp.server(server)?.lastError;
        return failed
          ? { name: tool, kind: 'mcp', available: false, reason: `MCP server "${server}" ${failed}` }
          : { name: tool, kind: 'mcp', available: true };
      }
      const unavailable = tools.unavailable(tool);
      return {
        name: tool,
        kind: 'tool',
        available: !unavailable,
        ...(unavailable ? { reason: unavailable.reason } : {}),
        ...(unavailable?.enableWith ? { enableWith: unavailable.enableWith } : {}),
      };
    });
    return {
      definition,
      tools: toolListings,
      source: loaded.source,
      notes: loaded.notes,
      limits: runtime.limits,
      model: agentModelChoice(definition, {
        mainModel: runtime.options.mainModel,
        subagentModel: runtime.options.subagentModel,
        declaredModel: loaded.definition.model,
      }),
      declaredModel: loaded.definition.model,
    };
  }

  /** Validates definition files (every loaded one when none are named) against the known tools and agents. */
  async check(files: string[] = []): Promise<AgentFileCheck[]> {
    const { catalog, tools } = await this.#parts.wiring();
    const targets: Array<{ path: string; kind: AgentSourceKind }> = files.length
      ? files.map((path) => ({ path, kind: path.includes('.claude/') ? 'claude' : 'project' }))
      : [...catalog.agents.values()]
          .map((loaded) => loaded.source)
          .concat(catalog.problems.map((problem) => ({ path: problem.path, kind: 'project' as const })));
    const names = new Set(catalog.agents.keys());
    return targets.map(({ path, kind }) => {
      try {
        const loaded = loadAgentFile(
          path,
          kind,
          (tool) => names.has(tool) || tools.has(tool),
          this.#parts.config.limits?.maxDefinitionBytes,
        );
        // A model no run could resolve fails only when the agent runs; the check is where to hear it.
        const { model } = loaded.definition;
        const unknown = model && model !== 'inherit' ? this.#parts.unknownProvider(model) : undefined;
        if (unknown) return { path, ok: false, error: `${path}: model: ${unknown}` };
        return { path, ok: true, name: loaded.definition.name, notes: loaded.notes };
      } catch (error) {
        return { path, ok: false, error: (error as Error).message };
      }
    });
  }
}
