import { UserError } from '../core/errors.ts';
import type { HttpCacheStore } from '../core/http-cache.ts';
import type { CadreTool } from '../core/tool.ts';
import { ToolRegistry } from '../core/tool-registry.ts';
import type { DocumentStore } from '../documents/document-store.ts';
import { type CommandSandbox, codingTools, sandboxRuntime } from './coding/index.ts';
import { calculateTool } from './compute/calculate.ts';
import { vaultGetTool, vaultSetTool } from './compute/vault.ts';
import { documentTools } from './documents/index.ts';
import { createNetworkDeps } from './http/network-deps.ts';
import { knowledgeTools } from './knowledge/index.ts';
import { createLspTools, lspOptionsFromSettings } from './lsp/index.ts';
import { updatePlanTool } from './planning/update-plan.ts';
import { createRunJsTool } from './sandbox/index.ts';
import { type ToolSettings, toolEnvironment } from './settings.ts';
import { webTools } from './web/index.ts';
import { workspaceTools } from './workspace/index.ts';
import { asWorkspaces, type Workspaces } from './workspace/workspaces.ts';

/** What tool families may need to be built: wired once by the CLI or server. */
export interface ToolDependencies {
  /** Environment (keys, endpoint overrides); `process.env` in production, a plain object in tests. */
  env: Record<string, string | undefined>;
  /** The caller-scoped document store, for the documents family (left out without one). */
  documents?: DocumentStore;
  /** Where the web and knowledge tools cache responses. */
  httpCache?: HttpCacheStore;
  /** Tools found at start-up (e.g. from MCP servers). */
  extra?: CadreTool[];
  /** Root the workspace tools are confined to (the operator's, and every caller's unless `workspaces`). */
  workspaceRoot: string;
  /** Each user's root, on a server several people share; default: `workspaceRoot` for everyone. */
  workspaces?: Workspaces;
  /** Where the commands of users who need a sandbox run (see `Workspaces.sandboxFor`); default: the sandbox runtime. */
  sandbox?: CommandSandbox;
  /** Per-tool settings from config, e.g. `{ cacheTtl: { web_search: 3600 } }`. */
  settings?: Record<string, unknown>;
}

/** Every tool family Cadre ships, built with its dependencies. */
export function builtinTools(deps: ToolDependencies): CadreTool[] {
  // run_js describes the other tools to the code it runs; it looks them up once the list is complete.
  const byName = new Map<string, CadreTool>();
  const workspaces = deps.workspaces ?? asWorkspaces(deps.workspaceRoot);
  const tools = [
    calculateTool,
    vaultSetTool,
    vaultGetTool,
    ...workspaceTools(workspaces),
    ...codingTools({
      workspace: workspaces,
      env: deps.env,
      sandbox: deps.sandbox ?? sandboxRuntime(),
    }),
    ...createLspTools(deps.workspaceRoot, lspOptionsFromSettings(deps.settings)).map((tool) =>
      operatorOnly(tool, workspaces),
    ),
    ...(deps.documents ? documentTools(deps.documents) : []),
    createRunJsTool({ lookup: (name) => byName.get(name) }),
    updatePlanTool,
    ...networkTools(deps),
    ...(deps.extra ?? []),
  ];
  for (const tool of tools) byName.set(tool.name, tool);
  return tools;
}

export function createToolRegistry(deps: ToolDependencies): ToolRegistry {
  return new ToolRegistry(builtinTools(deps));
}

/**
 * A tool that works on the operator's own workspace with programs that run outside any sandbox (language
 * servers load a project's plugins): refused to the users of a shared server.
 */
function operatorOnly(tool: CadreTool, workspaces: Workspaces): CadreTool {
  return {
    ...tool,
    execute(input, context) {
      if (workspaces.sandboxFor(context.userId))
        throw new UserError(
          'operator_only',
          `${tool.name} is not offered to the users of a shared server`,
          {},
        );
      return tool.execute(input, context);
    },
  };
}

/** The web and knowledge families, sharing one guarded HTTP client and the store's response cache. */
function networkTools(deps: ToolDependencies): CadreTool[] {
  const env = toolEnvironment(deps.env, deps.settings as ToolSettings | undefined);
  const network = createNetworkDeps({ env, cache: deps.httpCache, settings: deps.settings });
  return [...webTools(network), ...knowledgeTools(network)];
}
