import type { CadreTool } from '../../core/tool.ts';
import { Workspace } from '../workspace/confine.ts';
import { LspManager, type LspManagerOptions } from './manager.ts';
import { lspTools } from './tools.ts';

export { LspManager, type LspManagerOptions } from './manager.ts';
export { configuredServer, type LanguageServerConfig, typescriptServer } from './server-config.ts';
export { lspOptionsFromSettings } from './settings.ts';

/** The LSP tools for a workspace root, with their own server manager unless one is given. */
export function createLspTools(
  root: string | Workspace,
  manager: LspManager | LspManagerOptions = {},
): CadreTool[] {
  const workspace = typeof root === 'string' ? new Workspace(root) : root;
  return lspTools(workspace, manager instanceof LspManager ? manager : new LspManager(manager));
}
