import { createHash, randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { composeAgents } from '../agents/compose-agents.ts';
import { formatIssues } from '../config/format-issues.ts';
import type { CadreConfig } from '../config/schema.ts';
import { type AgentDefinition, agentDefinitionSchema } from '../core/agent-definition.ts';
import type { ApprovalSettings } from '../core/approvals.ts';
import { SystemError } from '../core/errors.ts';
import type { EventBus } from '../core/events.ts';
import type { PrepareAgent } from '../core/run-agent.ts';
import { Runtime, type RuntimeOptions } from '../core/runtime.ts';
import { isPattern, type ToolRegistry } from '../core/tool-registry.ts';
import type { SettingsStore, Store } from '../store/store.ts';
import type { McpClients } from '../tools/mcp/mcp-clients.ts';
import type { Workspaces } from '../tools/workspace/workspaces.ts';
import type { RuntimeOptions as AppRuntimeOptions, Wiring } from './cadre-parts.ts';
import { instructionFragments, preparers } from './features.ts';
import { limitsFromConfig } from './limit-names.ts';
import type { DelegationSettings, SettingsUseCases } from './settings.ts';
import { OPERATOR } from './user-workspaces.ts';

/** The settings scope holding each user's revision: a token that changes whenever what composes them does. */
const REVISION_SCOPE = 'runtime-revision';
/** The most compositions kept per user (one per agent catalog a tree was asked with, usually one). */
const PER_USER = 4;
/** The most users whose compositions are kept at once; the least recently used goes first. */
const USERS = 256;

/**
 * Each user's composed agents (and whatever else is built from their settings, documents and the agent
 * catalog), built once and built again only when one of those changed. A change anywhere (this process,
 * a terminal on the same file, a server beside a worker on the same database) writes a new revision for the
 * user; every process reads that one value per request and rebuilds only when it differs from the one it
 * built with. A build fails without being kept: the next request tries again.
 */
export class UserCompositions<T> {
  readonly #settings: SettingsStore;
  readonly #build: (userId: string) => Promise<T>;
  readonly #users = new Map<string, { revision: string; built: Map<string, Promise<T>> }>();

  constructor(settings: SettingsStore, build: (userId: string) => Promise<T>) {
    this.#settings = settings;
    this.#build = build;
  }

  /**
   * The user's composition, built now only if it changed. `key` and `build` name another composition of
   * theirs (agents a tree's asker composed elsewhere), kept beside it under the same revision.
   */
  async get(userId: string, key = '', build = () => this.#build(userId)): Promise<T> {
    const catalogKey = key;
    const revision = String((await this.#settings.get(REVISION_SCOPE, userId)) ?? '');
    let entry = this.#users.get(userId);
    if (!entry || entry.revision !== revision) {
      entry = { revision, built: new Map() };
    }
    // Most recently used last: the first key of each map is the one to drop.
    this.#users.delete(userId);
    this.#users.set(userId, entry);
    if (this.#users.size > USERS) this.#users.delete(this.#users.keys().next().value as string);
    let built = entry.built.get(catalogKey);
    if (!built) {
      built = build();
      entry.built.set(catalogKey, built);
      if (entry.built.size > PER_USER) entry.built.delete(entry.built.keys().next().value as string);
      const kept = entry;
      built.catch(() => {
        if (kept.built.get(catalogKey) === built) kept.built.delete(catalogKey);
      });
    } else {
      entry.built.delete(catalogKey);
      entry.built.set(catalogKey, built);
    }
    return built;
  }

  /**
   * What composes `userId` changed (their settings, their documents): every process builds their runtime
   * again at its next request. Written before the change is answered, so the person's next question sees it.
   */
  async changed(userId: string): Promise<void> {
    this.#users.delete(userId);
    await this.#settings.put(REVISION_SCOPE, userId, randomUUID());
  }
}

/** What building a user's runtime takes of the Cadre it belongs to. */
export interface RuntimeParts {
  config: CadreConfig;
  store: Store;
  wiring: () => Promise<Wiring>;
  home: string;
  workspace: string;
  workspaceGiven: boolean;
  workspaces: Workspaces;
  mcp: McpClients;
  bus: EventBus;
  resolveModel: RuntimeOptions['resolveModel'];
  approvals: () => ApprovalSettings;
  settings: () => SettingsUseCases;
}

/** One user's agents as composed for their runs, and the runtimes built over them by limits and models. */
interface Composition {
  agents: Map<string, AgentDefinition>;
  tools: ToolRegistry;
  prepareAgent: PrepareAgent;
  delegation: DelegationSettings;
  runtimes: Map<string, Runtime>;
}

/** The most runtimes kept per composition (one per set of limits and models requests name). */
const RUNTIMES_PER_COMPOSITION = 16;

/**
 * Each user's runtime: their agents composed over the agent catalog, their settings, their documents and
 * their workspace, then a `Runtime` per set of limits and models over those agents. Composed once, and
 * again only when the user's settings or documents change (`UserCompositions`); a tree another process
 * asked for (a job) runs on the agents its asker composed, carried with it.
 */
export class UserRuntimes {
  readonly #parts: RuntimeParts;
  readonly #compositions: UserCompositions<Composition>;

  constructor(parts: RuntimeParts) {
    this.#parts = parts;
    this.#compositions = new UserCompositions(parts.store.settings, (userId) => this.#compose(userId));
  }

  /** The runtime for one request on behalf of `options.userId`. */
  async runtime(options: AppRuntimeOptions): Promise<Runtime> {
    const { userId, agents } = options;
    const composed = agents
      ? await this.#compositions.get(userId, agentsKey(agents), () => this.#carried(userId, agents))
      : await this.#compositions.get(userId);
    const key = JSON.stringify([options.limits ?? {}, options.models ?? {}]);
    let runtime = composed.runtimes.get(key);
    if (!runtime) {
      runtime = this.#newRuntime(composed, options);
      composed.runtimes.set(key, runtime);
      // A server whose requests each name their own limits must not keep one runtime per request.
      if (composed.runtimes.size > RUNTIMES_PER_COMPOSITION)
        composed.runtimes.delete(composed.runtimes.keys().next().value as string);
    }
    return runtime;
  }

  /** How the main agent delegates for `userId`, as their runtime was composed with. */
  async delegation(userId: string): Promise<DelegationSettings> {
    return (await this.#compositions.get(userId)).delegation;
  }

  /** What composes `userId` changed: every process composes them again at its next request. */
  changed(userId: string): Promise<void> {
    return this.#compositions.changed(userId);
  }

  /** What `userId`'s runs are composed of: their agents over their settings, documents and workspace. */
  async #compose(userId: string): Promise<Composition> {
    const { tools, catalog } = await this.#parts.wiring();
    const [delegation, agentSettings] = await Promise.all([
      this.#parts.settings().delegation(userId),
      this.#parts.settings().agentSettings(userId),
    ]);
    // Delegation off (seed 000's toggle): main answers alone, offered no sub-agent and told of none.
    const delegationOff = delegation.mode === 'off';
    const features = {
      documents: this.#parts.store.documents,
      userId,
      workspace: this.#parts.workspace,
      workspaceGiven: this.#parts.workspaceGiven,
      workspaces: this.#parts.workspaces,
      tools,
      delegationOff,
    };
    const fragments = await instructionFragments(features);
    const irrelevant = delegationOff
      ? new Set([...fragments.irrelevant, ...[...catalog.agents.keys()].filter((name) => name !== 'main')])
      : fragments.irrelevant;
    const agents = composeAgents({
      catalog: catalog.agents,
      settings: agentSettings,
      fragments: fragments.text,
      irrelevant,
      idleTools: fragments.idleTools,
      // Who the operator is (their location, their profile) is for the operator's runs, not their users'.
      ...(this.#parts.config.person && userId === OPERATOR ? { person: this.#parts.config.person } : {}),
    });
    return { agents, prepareAgent: this.#preparer(userId, agents), delegation, tools, runtimes: new Map() };
  }

  /** Readies what a run of one of `agents` needs before its first step (MCP servers, a document). */
  #preparer(userId: string, agents: Map<string, AgentDefinition>): PrepareAgent {
    const prepares = preparers({ documents: this.#parts.store.documents, userId });
    return async (request) => {
      // MCP servers start on first use: before the first run whose allow-list names their tools.
      await this.#parts.mcp.prepare(agents.get(request.agent)?.tools ?? []);
      for (const prepare of prepares) {
        const prepared = await prepare(request);
        if (prepared) return prepared;
      }
      return undefined;
    };
  }

  /**
   * The composition of a tree another process asked for (a job): the agents as its asker composed them,
   * checked against the tools here, with this process's preparers. A tool this worker lacks (an MCP server
   * or a key only the asker has) refuses the tree with that said, rather than running it without the tool.
   */
  async #carried(userId: string, carried: AgentDefinition[]): Promise<Composition> {
    const own = await this.#compositions.get(userId);
    const agents = new Map<string, AgentDefinition>();
    for (const value of carried) {
      const parsed = agentDefinitionSchema.safeParse(value);
      if (!parsed.success) {
        throw new SystemError(
          'job_invalid',
          `The tree's agent ${JSON.stringify((value as { name?: unknown })?.name)} is not a valid definition: ${formatIssues(parsed.error.issues)}`,
        );
      }
      agents.set(parsed.data.name, parsed.data);
    }
    for (const definition of agents.values()) {
      const missing = definition.tools.filter(
        (name) => !isPattern(name) && !agents.has(name) && !own.tools.has(name),
      );
      if (missing.length) {
        throw new SystemError(
          'worker_lacks_tool',
          `This worker has no tool ${missing.map((name) => `"${name}"`).join(', ')}, which agent "${definition.name}" of the tree uses: every worker needs the MCP servers and keys its askers have.`,
          { agent: definition.name, tools: missing },
        );
      }
    }
    return { ...own, agents, prepareAgent: this.#preparer(userId, agents), runtimes: new Map() };
  }

  #newRuntime(composed: Composition, options: AppRuntimeOptions): Runtime {
    return new Runtime({
      agents: composed.agents,
      tools: composed.tools,
      resolveModel: this.#parts.resolveModel,
      ...(options.models?.main || this.#parts.config.model
        ? { mainModel: options.models?.main ?? this.#parts.config.model }
        : {}),
      configPath: join(this.#parts.home, 'config.json'),
      ...(options.models?.subagent || this.#parts.config.subagentModel
        ? { subagentModel: options.models?.subagent ?? this.#parts.config.subagentModel }
        : {}),
      limits: { ...limitsFromConfig(this.#parts.config.limits ?? {}), ...options.limits },
      bus: this.#parts.bus,
      resultMemory: this.#parts.store.results,
      ...(this.#parts.config.delegation?.reuseTtlSeconds !== undefined
        ? { reuseTtlMs: this.#parts.config.delegation.reuseTtlSeconds * 1000 }
        : {}),
      prepareAgent: composed.prepareAgent,
      approvals: this.#parts.approvals(),
      beforeModelRequest: () => this.#parts.store.runs.secure(),
      modelSettings: {
        reasoning: this.#parts.config.reasoning,
        providerOptions: this.#parts.config.providerOptions,
        promptCaching: this.#parts.config.promptCaching,
        zeroDataRetention: this.#parts.config.zeroDataRetention,
      },
    });
  }
}

/** Names a set of carried agent definitions: the same definitions, the same key. */
function agentsKey(agents: AgentDefinition[]): string {
  return createHash('sha256').update(JSON.stringify(agents)).digest('base64url');
}
