import { join } from 'node:path';
import type { LanguageModelV4 } from '@ai-sdk/provider';
import { type AgentSettings, composeAgents } from '../agents/compose-agents.ts';
import { type AgentCatalog, loadAgentCatalog } from '../agents/loader.ts';
import { type LoadedConfig, loadConfig } from '../config/load-config.ts';
import type { CadreConfig } from '../config/schema.ts';
import { type ApprovalSettings, DEFAULT_APPROVAL_TIMEOUT_MS } from '../core/approvals.ts';
import { EventBus } from '../core/events.ts';
import type { RuntimeLimits } from '../core/limits.ts';
import type { PrepareAgent } from '../core/run-agent.ts';
import { Runtime } from '../core/runtime.ts';
import type { ToolRegistry } from '../core/tool-registry.ts';
import { McpClients } from '../mcp/client/mcp-clients.ts';
import { createModelResolver } from '../models/resolve-model.ts';
import { DEFAULT_RETRY, type RetryPolicy } from '../models/retry.ts';
import { type Database, openDatabase } from '../store/database.ts';
import { SqliteResultMemory } from '../store/result-memory-store.ts';
import { RunStore } from '../store/run-store.ts';
import { SessionStore } from '../store/session-store.ts';
import { SqliteUserStore, type UserStore } from '../store/user-store.ts';
import { createToolRegistry } from '../tools/index.ts';
import { ApprovalSigner, PendingApprovals } from './approvals.ts';
import { instructionFragments, preparers } from './features.ts';
import { LiveRuns } from './live-runs.ts';
import { VERSION } from './version.ts';

export interface CadreOptions {
  env: Record<string, string | undefined>;
  cwd: string;
  configFile?: string;
  /** Command-line flags in config shape (e.g. `{ model }` from `--model`). */
  flags?: CadreConfig;
  /** Root for the workspace tools; defaults to `cwd`. */
  workspace?: string;
  /** Models by reference that bypass providers (tests, demos). */
  models?: Record<string, LanguageModelV4>;
  /** An open database; defaults to `$CADRE_HOME/cadre.db`. */
  db?: Database;
}

/**
 * The composition root: configuration, store, tool registry, agent catalog and model resolver, wired
 * once. The CLI, the server and the MCP server all start from here; nothing here knows about them.
 */
export class Cadre {
  readonly config: CadreConfig;
  /** Configuration that was read but not applied, and why; the CLI prints these. */
  readonly warnings: string[];
  readonly home: string;
  readonly db: Database;
  readonly bus = new EventBus();
  /** Trees running in this process: how to stop and follow them. */
  readonly live = new LiveRuns();
  readonly runs: RunStore;
  readonly sessions: SessionStore;
  /** Server users and their token hashes (`cadre users`). */
  readonly users: UserStore;
  readonly tools: ToolRegistry;
  /** The configured MCP servers; each starts when a run first needs its tools. */
  readonly mcp: McpClients;
  /** What the folder Cadre runs in asks to start, and whether the person trusts it (`cadre mcp trust`). */
  readonly project: LoadedConfig['project'];
  readonly catalog: AgentCatalog;
  readonly workspace: string;
  /** True when the caller named the workspace (`--workspace`); main then reads it with its own tools. */
  readonly workspaceGiven: boolean;
  readonly env: Record<string, string | undefined>;
  readonly resolveModel: (ref: string) => LanguageModelV4 | Promise<LanguageModelV4>;
  readonly retry: RetryPolicy;
  /** Tool calls waiting for a person, answered by the API, the web app or a prompt. */
  readonly approvals: PendingApprovals;
  #detachStore: () => void;

  constructor(options: CadreOptions) {
    const loaded = loadConfig({
      env: options.env,
      cwd: options.cwd,
      ...(options.configFile ? { configFile: options.configFile } : {}),
      ...(options.flags ? { flags: options.flags } : {}),
    });
    this.config = loaded.config;
    this.warnings = loaded.warnings;
    this.project = loaded.project;
    this.home = loaded.home;
    this.env = options.env;
    this.workspace = options.workspace ?? options.cwd;
    this.workspaceGiven = options.workspace !== undefined;
    this.db = options.db ?? openDatabase(join(this.home, 'cadre.db'));
    this.runs = new RunStore(this.db);
    this.sessions = new SessionStore(this.db);
    this.users = new SqliteUserStore(this.db);
    this.#detachStore = this.runs.attach(this.bus);
    this.tools = createToolRegistry({
      env: options.env,
      db: this.db,
      workspaceRoot: this.workspace,
      settings: (this.config.tools ?? {}) as Record<string, unknown>,
    });
    this.mcp = new McpClients(this.config.mcpServers ?? {}, { clientVersion: VERSION });
    this.tools.addSource(this.mcp);
    this.catalog = loadAgentCatalog({
      cadreHome: this.home,
      cwd: options.cwd,
      toolExists: (name) => this.tools.has(name),
    });
    this.retry = { ...DEFAULT_RETRY, ...(this.config.retry ?? {}) };
    this.approvals = new PendingApprovals(ApprovalSigner.forFile(join(this.home, 'approval.key')));
    this.resolveModel = createModelResolver({
      env: options.env,
      retry: this.retry,
      ...(options.models ? { overrides: options.models } : {}),
    });
  }

  /** Per-agent settings: config files first, then what was saved through the API. */
  agentSettings(): Record<string, AgentSettings> {
    const saved = this.db.prepare("SELECT key, value FROM settings WHERE scope = 'agent'").all() as Array<{
      key: string;
      value: string;
    }>;
    const settings: Record<string, AgentSettings> = { ...(this.config.agents ?? {}) };
    for (const row of saved) settings[row.key] = { ...settings[row.key], ...JSON.parse(row.value) };
    return settings;
  }

  saveAgentSettings(name: string, patch: AgentSettings): void {
    const current = this.agentSettings()[name] ?? {};
    this.db
      .prepare(
        "INSERT INTO settings (scope, key, value) VALUES ('agent', ?, ?) ON CONFLICT DO UPDATE SET value = excluded.value",
      )
      .run(name, JSON.stringify({ ...current, ...patch }));
  }

  /** The runtime for one request on behalf of `userId`: agents composed for what is relevant to them. */
  runtime(options: { userId?: string; limits?: Partial<RuntimeLimits> } = {}): Runtime {
    const userId = options.userId ?? 'local';
    const features = {
      db: this.db,
      userId,
      workspace: this.workspace,
      workspaceGiven: this.workspaceGiven,
      tools: this.tools,
    };
    const fragments = instructionFragments(features);
    const agents = composeAgents({
      catalog: this.catalog.agents,
      settings: this.agentSettings(),
      fragments: fragments.text,
      irrelevant: fragments.irrelevant,
      idleTools: fragments.idleTools,
      ...(this.config.person ? { person: this.config.person } : {}),
    });
    const limits = this.config.limits ?? {};
    const prepareAgent: PrepareAgent = async (request) => {
      // MCP servers start on first use: before the first run whose allow-list names their tools.
      await this.mcp.prepare(agents.get(request.agent)?.tools ?? []);
      for (const prepare of preparers(features)) {
        const prepared = await prepare(request);
        if (prepared) return prepared;
      }
      return undefined;
    };
    return new Runtime({
      agents,
      tools: this.tools,
      resolveModel: this.resolveModel,
      ...(this.config.model ? { mainModel: this.config.model } : {}),
      configPath: join(this.home, 'config.json'),
      ...(this.config.subagentModel ? { subagentModel: this.config.subagentModel } : {}),
      limits: {
        maxTurns: limits.maxTurns,
        maxDepth: limits.maxDepth,
        timeoutMs: limits.timeoutSeconds === undefined ? undefined : limits.timeoutSeconds * 1000,
        runBudget: limits.runBudget,
        treeBudget: limits.treeBudget,
        maxConcurrency: limits.maxConcurrency,
        maxFanOut: limits.maxFanOut,
        maxToolOutputChars: limits.maxToolOutputChars,
        maxOutputTokens: limits.maxOutputTokens,
        modelCallTimeoutMs:
          limits.modelCallTimeoutSeconds === undefined ? undefined : limits.modelCallTimeoutSeconds * 1000,
        maxResultChars: limits.maxResultChars,
        maxToolCallsPerStep: limits.maxToolCallsPerStep,
        maxToolInputChars: limits.maxToolInputChars,
        maxToolInputDepth: limits.maxToolInputDepth,
        ...options.limits,
      } as Partial<RuntimeLimits>,
      bus: this.bus,
      resultMemory: new SqliteResultMemory(this.db),
      ...(this.config.delegation?.reuseTtlSeconds !== undefined
        ? { reuseTtlMs: this.config.delegation.reuseTtlSeconds * 1000 }
        : {}),
      prepareAgent,
      approvals: this.approvalSettings(),
    });
  }

  /** The configured approval rules, with the pending list as the approver unless a request brings its own. */
  approvalSettings(): ApprovalSettings {
    const approvals = this.config.approvals ?? {};
    return {
      rules: { allow: approvals.allow ?? [], ask: approvals.ask ?? [], deny: approvals.deny ?? [] },
      approver: this.approvals,
      timeoutMs:
        approvals.timeoutSeconds === undefined
          ? DEFAULT_APPROVAL_TIMEOUT_MS
          : approvals.timeoutSeconds * 1000,
    };
  }

  /** The prefetch request for a question, when prefetch mode is on and its trigger matches. */
  prefetchFor(question: string): { agent: string } | undefined {
    const delegation = this.config.delegation;
    if (delegation?.mode !== 'prefetch' || !delegation.prefetch) return undefined;
    return new RegExp(delegation.prefetch.trigger, 'i').test(question)
      ? { agent: delegation.prefetch.agent }
      : undefined;
  }

  /** Writes pending events and detaches the store. */
  close(): void {
    // Stopping a stdio server closes its stdin; the process exits after it has (or is killed 2-4 s on).
    void this.mcp.close();
    this.runs.close();
    this.#detachStore();
  }
}
