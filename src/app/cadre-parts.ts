import type { AgentCatalog } from '../agents/loader.ts';
import type { CadreConfig } from '../config/schema.ts';
import type { EventBus } from '../core/events.ts';
import type { ToolRegistry } from '../core/tool-registry.ts';
import type { Store } from '../store/store.ts';
import type { McpClients } from '../tools/mcp/mcp-clients.ts';
import type { LiveRuns } from './live-runs.ts';

/** The tool registry and the agent catalog, validated against each other. */
export interface Wiring {
  tools: ToolRegistry;
  catalog: AgentCatalog;
}

/** What the use cases share: the wired parts of one Cadre. */
export interface CadreParts {
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
