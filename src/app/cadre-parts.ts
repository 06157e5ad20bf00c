import type { AgentCatalog } from '../agents/loader.ts';
import type { CadreConfig } from '../config/schema.ts';
import type { AgentDefinition } from '../core/agent-definition.ts';
import type { EventBus } from '../core/events.ts';
import type { RuntimeLimits } from '../core/limits.ts';
import type { ToolRegistry } from '../core/tool-registry.ts';
import type { Store } from '../store/store.ts';
import type { McpClients } from '../tools/mcp/mcp-clients.ts';
import type { TreeModels } from './jobs/job-data.ts';
import type { LiveRuns } from './live-runs.ts';

/**
 * What one runtime is made for: the user, and what the asker composed besides the config (a request's
 * limits; a queued tree's limits and models, so its worker runs it as it was asked).
 */
export interface RuntimeOptions {
  userId: string;
  limits?: Partial<RuntimeLimits>;
  models?: TreeModels;
  /** The agents as a tree's asker composed them (carried by its job), over this process's own. */
  agents?: AgentDefinition[];
}

/** The tool registry and the agent catalog, validated against each other. */
export interface Wiring {
  tools: ToolRegistry;
  catalog: AgentCatalog;
}

/** What the use cases share: the wired parts of one Cadre. */
export interface CadreParts {
  /**
   * What composes `userId`'s runs changed (their settings, their documents): every process composes them
   * again at its next request. Awaited before the change is answered.
   */
  userChanged: (userId: string) => Promise<void>;
  config: CadreConfig;
  store: Store;
  /** The tools and agents, loaded once on first need. */
  wiring: () => Promise<Wiring>;
  workspace: string;
  bus: EventBus;
  /** Trees running in this process: how to stop and follow them. */
  live: LiveRuns;
  mcp: McpClients;
  /** Why no run could resolve a model reference (see `Cadre.unknownProvider`). */
  unknownProvider: (ref: string) => string | undefined;
}
