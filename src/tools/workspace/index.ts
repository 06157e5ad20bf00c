import type { CadreTool } from '../../core/tool.ts';
import type { Workspace } from './confine.ts';
import { createGlobTool } from './glob.ts';
import { createGrepTool } from './grep.ts';
import { createListDirTool } from './list-dir.ts';
import { createReadFileTool } from './read-file.ts';

import { asWorkspaces, type Workspaces } from './workspaces.ts';

export { OutsideWorkspaceError, Workspace } from './confine.ts';

/** glob, grep, read_file and list_dir, confined to the calling user's workspace root. */
export function workspaceTools(workspace: Workspaces | Workspace | string): CadreTool[] {
  const confined = asWorkspaces(workspace);
  return [
    createGlobTool(confined),
    createGrepTool(confined),
    createReadFileTool(confined),
    createListDirTool(confined),
  ];
}
